package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/pflag"
)

// command is one subcommand: it parses its own flags and returns an error; only main exits.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

func commands() map[string]command {
	return map[string]command{
		"data":     {"list benchmark records (fixtures or --file PATH…)", runData},
		"fit":      {"fit prefill/decode costs to benchmark records", runFit},
		"predict":  {"predict throughput, latency, knee and TTFT blow-up", runPredict},
		"plot":     {"plot fitted versus measured curves", runPlot},
		"bench":    {"benchmark a live OpenAI-compatible endpoint", runBench},
		"validate": {"compare a benchmark with a prediction", runValidate},
		"plan":     {"size deployments against SLOs", runPlan},
	}
}

// errUsage marks an error whose usage text has already been printed.
var errUsage = errors.New("usage")

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, errUsage) && !errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "capsim: "+firstLine(err.Error()))
		}
		if errors.Is(err, pflag.ErrHelp) {
			os.Exit(0)
		}
		os.Exit(1)
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: capsim COMMAND [flags]\n\ncommands:")
	cmds := commands()
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-9s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'capsim COMMAND --help' for a command's flags.")
}

// run is capsim without the process: tests call it directly.
func run(args []string, stdout, stderr io.Writer) error {
	global := pflag.NewFlagSet("capsim", pflag.ContinueOnError)
	global.SetInterspersed(false)
	global.SetOutput(stderr)
	global.Usage = func() { usage(stderr) }
	if err := global.Parse(args); err != nil {
		return err
	}
	rest := global.Args()
	if len(rest) == 0 {
		usage(stderr)
		return fmt.Errorf("no command given")
	}
	cmd, ok := commands()[rest[0]]
	if !ok {
		return fmt.Errorf("unknown command %q (try: capsim --help)", rest[0])
	}
	return cmd.run(rest[1:], stdout, stderr)
}
