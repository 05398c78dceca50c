package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/capsim/capsim/calibrate"
	"github.com/capsim/capsim/fixtures"
	"github.com/capsim/capsim/internal/buildinfo"
	"github.com/capsim/capsim/internal/suggest"
)

// command is one subcommand: it parses its own flags and returns an error; only main exits.
type command struct {
	summary  string   // one line, for the command list
	synopsis string   // the usage line's arguments
	about    string   // what the command does, a paragraph
	examples []string // command lines, each with a comment line before it ("# …")
	run      func(args []string, stdout, stderr io.Writer) error
}

func commands() map[string]command {
	return map[string]command{
		"data": {"list benchmark records (the embedded seeds or --file PATH…)",
			"[--file PATH,...] [--gpu G] [--model M] [--engine E] [--topology T] [--source S] [--format table|json|csv]",
			"List benchmark records: the embedded seed documents, or your own result files — vLLM bench serve\n" +
				"JSON or text, GuideLLM reports (JSON or YAML), AIPerf and genai-perf exports (JSON or CSV),\n" +
				"llm-d-benchmark reports, CSV tables, markdown or HTML result tables. With --file, --gpu, --model,\n" +
				"--engine and --topology state what the files measured; without, they filter the seeds.",
			[]string{"# the seeds measured on H20", "capsim data --gpu H20",
				"# a GuideLLM report, stating the GPU it ran on", "capsim data --file benchmarks.json --gpu H100 --engine vllm-0.10.1"},
			runData},
		"fit": {"fit prefill/decode costs to benchmark records",
			"[--from FILES] [--gpu G] [--model M] [--engine E] [--topology T] [--out PROFILE] [--cv] [--format table|json|csv]",
			"Calibrate the simulator's costs to measured records: a least-squares fit per GPU, model and\n" +
				"engine, then simulation in the loop. Files that name no GPU are not fitted on a guessed one:\n" +
				"say which with --gpu, or --assume-gpu to fit the catalog pair that explains them best.",
			[]string{"# your vLLM sweep (six --save-result files with --metadata gpu=H100 ...)", "capsim fit --from 'vllm-*.json' --out my-profile.json",
				"# a GuideLLM report that does not say its GPU", "capsim fit --from benchmarks.json --gpu H100 --engine vllm-0.10.1 --out my-profile.json"},
			interruptible(fitContext)},
		"predict": {"predict throughput, latency, knee and TTFT blow-up",
			"--gpu G --model M (--replicas NxTPk | --prefill NxTPk --decode MxTPk | --topology T) --isl N --osl N [--concurrency LIST | --rate LIST]",
			"Simulate a deployment at a list of loads with the calibrated costs and print throughput, latency\n" +
				"percentiles, the knee and where TTFT blows up, with an uncertainty band.",
			[]string{"# four TP2 replicas of Qwen3-8B on H100 at 1 to 64 clients", "capsim predict --gpu H100 --model Qwen/Qwen3-8B --replicas 4xTP2 --isl 1000 --osl 200 --concurrency 1,4,16,64 --profile my-profile.json"},
			runPredict},
		"plot": {"plot fitted versus measured curves",
			"--out DIR [--from FILES [--topology T]] [--gpu G] [--model M] [--engine E] [--source S] [--format png|svg] [--profile FILE]",
			"Draw every measured series (one configuration × workload shape) against the calibrated\n" +
				"simulation, a summary of predicted against measured, and DIR/index.html to browse them.\n" +
				"--gpu, --model and --engine pick series, or with --from state what the files measured.",
			[]string{"# every seed series", "capsim plot --out figures",
				"# your files against your profile", "capsim plot --out figures --from benchmarks.json --gpu H100 --engine vllm-0.10.1 --profile my-profile.json"},
			runPlot},
		"bench": {"benchmark a live OpenAI-compatible endpoint",
			"--url URL --model M --isl N --osl N (--concurrency LIST | --rate LIST) [--out FILE] [--format table|json|csv]",
			"Drive an OpenAI-compatible server the way vllm bench serve does and write vLLM's result JSON.",
			[]string{"# four closed-loop points against a local server", "capsim bench --url http://127.0.0.1:8000 --model Qwen/Qwen3-8B --isl 1000 --osl 200 --concurrency 1,4,16,64 --out results.json"},
			interruptible(benchContext)},
		"validate": {"compare a benchmark with a prediction",
			"(--results FILE | --url URL --isl N --osl N --concurrency LIST) [--gpu G] [--model M] [--engine E] [--topology T] [--format table|json|csv]",
			"Predict the loads of a result file (or benchmark a live server) and compare each metric with\n" +
				"the measurement. --gpu, --model, --engine and --topology state or override what the file says.",
			[]string{"# a result file, naming the deployment it measured", "capsim validate --results results.json --gpu H100 --topology 1xTP1 --profile my-profile.json"},
			interruptible(validateContext)},
		"plan": {"size deployments against SLOs",
			"--model M --isl N --osl N (--concurrency C | --rate R) --slo ttft_p99=500ms [--gpu G,...] [--format table|json|csv]",
			"Search deployments (GPU, topology, engine settings) for the cheapest that meets the SLOs at the load.",
			[]string{"# the fewest GPUs serving 20 req/s of Qwen3-32B with p99 TTFT under a second", "capsim plan --model Qwen/Qwen3-32B --isl 3000 --osl 150 --rate 20 --slo ttft_p99=1000ms"},
			runPlan},
		"help": {"show help for capsim or a command", "[COMMAND]",
			"Without a command, list the commands; with one, show its description, examples and flags.",
			[]string{"capsim help fit"}, nil},
		"version": {"print capsim's version", "",
			"Print the version, the source revision it was built from when known, and the Go version.",
			[]string{"capsim version"}, nil},
	}
}

// gcPercent is the garbage collector's GOGC when the environment sets
// none. A fit or a plan runs tens of thousands of short simulations whose
// garbage is most of the heap: at Go's default 100 the collector took
// about a fifth of `capsim fit`'s CPU; at 400 the fit takes a fifth less
// CPU and about 200 MB of memory.
const gcPercent = 400

// tuneGC sets gcPercent unless GOGC is set.
func tuneGC() {
	if _, ok := os.LookupEnv("GOGC"); !ok {
		debug.SetGCPercent(gcPercent)
	}
}

// main runs capsim: --help exits 0, any other error prints its first line and exits 1.
func main() {
	tuneGC()
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil && !errors.Is(err, pflag.ErrHelp) {
		msg, _, _ := strings.Cut(err.Error(), "\n")
		fmt.Fprintln(os.Stderr, "capsim: "+msg)
		os.Exit(1)
	}
}

func commandNames() []string {
	cmds := commands()
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: capsim COMMAND [flags]\n\ncapsim predicts LLM-serving capacity from benchmark-calibrated simulation.\n\ncommands:")
	cmds := commands()
	for _, n := range commandNames() {
		fmt.Fprintf(w, "  %-9s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'capsim help COMMAND' (or 'capsim COMMAND --help') for a command's description, examples and flags.")
}

// commandHelp prints one command's help in the one style every command
// shares: usage line, description, examples, flags.
func commandHelp(w io.Writer, name string, fs *pflag.FlagSet) {
	c := commands()[name]
	fmt.Fprintf(w, "usage: capsim %s %s\n\n%s\n", name, c.synopsis, c.about)
	if len(c.examples) > 0 {
		fmt.Fprintln(w, "\nexamples:")
		for _, e := range c.examples {
			fmt.Fprintln(w, "  "+e)
		}
	}
	if fs != nil && fs.HasFlags() {
		fmt.Fprintf(w, "\nflags:\n%s", fs.FlagUsages())
	}
}

// run is capsim without the process: tests call it directly.
func run(args []string, stdout, stderr io.Writer) error {
	global := pflag.NewFlagSet("capsim", pflag.ContinueOnError)
	global.SetInterspersed(false)
	global.SetOutput(stderr)
	showVersion := global.Bool("version", false, "print the version and exit")
	global.Usage = func() { usage(stdout) }
	if err := global.Parse(args); err != nil {
		return withFlagHint(err, global)
	}
	rest := global.Args()
	if *showVersion {
		rest = []string{"version"}
	}
	if len(rest) == 0 {
		usage(stderr)
		return fmt.Errorf("no command given")
	}
	name, cmdArgs := rest[0], rest[1:]
	switch name {
	case "version":
		_, err := fmt.Fprintln(stdout, buildinfo.Version())
		return err
	case "help":
		if len(cmdArgs) == 0 {
			usage(stdout)
			return nil
		}
		c, ok := commands()[cmdArgs[0]]
		switch {
		case !ok:
			return unknownCommand(cmdArgs[0])
		case c.run == nil: // help, version
			commandHelp(stdout, cmdArgs[0], nil)
			return nil
		}
		// The command prints its help (to the writer it is given for errors) and stops.
		if err := c.run([]string{"--help"}, stdout, stdout); !errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return nil
	}
	cmd, ok := commands()[name]
	if !ok || cmd.run == nil {
		return unknownCommand(name)
	}
	if slices.Contains(cmdArgs, "--help") || slices.Contains(cmdArgs, "-h") {
		// Help asked for is output, as capsim help CMD prints it; help
		// after a usage error goes to stderr with the error.
		return run([]string{"help", name}, stdout, stderr)
	}
	return cmd.run(cmdArgs, stdout, stderr)
}

func unknownCommand(name string) error {
	if s, ok := suggest.Closest(name, commandNames()); ok {
		return fmt.Errorf("unknown command %q; did you mean %q? (capsim help lists the commands)", name, s)
	}
	return fmt.Errorf("unknown command %q (capsim help lists the commands)", name)
}

// withFlagHint says a value a flag's type cannot parse as what the flag
// wants, and adds "did you mean --X?" to an unknown-flag error.
func withFlagHint(err error, fs *pflag.FlagSet) error {
	var bad *pflag.InvalidValueError
	if errors.As(err, &bad) {
		num, isNum := bad.Unwrap().(*strconv.NumError)
		want, ok := flagWants[bad.GetFlag().Value.Type()]
		switch {
		case isNum && errors.Is(num.Err, strconv.ErrRange):
			return fmt.Errorf("--%s: %q is out of range", bad.GetFlag().Name, bad.GetValue())
		case isNum && ok:
			return fmt.Errorf("--%s: %q is not %s", bad.GetFlag().Name, bad.GetValue(), want)
		}
	}
	var unknown *pflag.NotExistError
	if !errors.As(err, &unknown) {
		return err
	}
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	if s, ok := suggest.Closest(unknown.GetSpecifiedName(), names); ok {
		return fmt.Errorf("%w; did you mean --%s?", err, s)
	}
	return err
}

// flagWants says what a flag of each pflag value type wants.
var flagWants = map[string]string{"int": "an integer", "int64": "an integer", "uint64": "a non-negative integer",
	"intSlice": "a comma-separated list of integers", "float64": "a number",
	"float64Slice": "a comma-separated list of numbers", "bool": "true or false"}

// warn prints each note to stderr as a warning line prefixed by who.
// loadProfile loads the profile at path, or the embedded default for "",
// and warns when it was fitted for another step-cost form.
func loadProfile(path string, stderr io.Writer) (*calibrate.Profile, error) {
	prof, err := calibrate.LoadProfile(path, fixtures.DefaultProfile())
	if err != nil {
		return nil, err
	}
	name := path
	if name == "" {
		name = "the embedded default profile"
	}
	if w := prof.CostModelWarning(name); w != "" {
		warn(stderr, "capsim", w)
	}
	return prof, nil
}

func warn(stderr io.Writer, who string, notes ...string) {
	for _, n := range notes {
		fmt.Fprintf(stderr, "%s: warning: %s\n", who, n)
	}
}
