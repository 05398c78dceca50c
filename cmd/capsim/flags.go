package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/capsim/capsim/datasets"
	"github.com/capsim/capsim/internal/atomicfile"
	"github.com/capsim/capsim/loadgen"
	"github.com/capsim/capsim/model"
	"github.com/capsim/capsim/results"
)

// Flag groups that several subcommands share, so that the same flag means
// the same thing, with the same default and help, everywhere.

// interruptContext is the one interrupt idiom of every long command: a
// context that Ctrl-C or SIGTERM cancels, so the command stops between
// steps and says what it kept.
func interruptContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// interruptible is a command that runs under interruptContext.
func interruptible(run func(context.Context, []string, io.Writer, io.Writer) error) func([]string, io.Writer, io.Writer) error {
	return func(args []string, stdout, stderr io.Writer) error {
		ctx, stop := interruptContext()
		defer stop()
		return run(ctx, args, stdout, stderr)
	}
}

// parseFlags parses args into fs, then checks --format (when format is not
// nil) and rejects positional arguments; hint, if any, follows that error.
func parseFlags(fs *pflag.FlagSet, args []string, format *string, hint string) error {
	if err := fs.Parse(args); err != nil {
		return withFlagHint(err, fs)
	}
	if format != nil {
		if err := checkFormat(*format); err != nil {
			return err
		}
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q%s", strings.TrimPrefix(fs.Name(), "capsim "), fs.Arg(0), hint)
	}
	return nil
}

// deploymentFlags name the deployment to predict (model aside, whose help
// differs between commands) and the profile that prices it.
type deploymentFlags struct {
	gpu, engine, router       string
	prefill, decode, replicas string
	topo                      string // --topology, the same in one flag
	profile                   string
	dpAttention               int            // --dp-attention: SGLang's attention groups per worker
	frontendMS                float64        // --frontend-ms, when flags says it was given
	kvLink                    string         // --kv-link
	flags                     *pflag.FlagSet // the command's, to tell a given flag from its default
}

// addDeploymentFlags adds --gpu, --engine, --prefill, --decode, --replicas
// --dp-attention and --profile; gpuNote and engineNote say what an absent flag means.
func addDeploymentFlags(fs *pflag.FlagSet, d *deploymentFlags, gpuNote, engineNote string) {
	fs.StringVar(&d.gpu, "gpu", "", "GPU type, e.g. H20 ("+gpuNote+")")
	fs.StringVar(&d.engine, "engine", "", "engine label prefix in the profile, e.g. dynamo, vllm-0.9 ("+engineNote+")")
	fs.StringVar(&d.prefill, "prefill", "", "prefill pool NxTPk (disaggregated)")
	fs.StringVar(&d.decode, "decode", "", "decode pool NxTPk (disaggregated)")
	fs.StringVar(&d.replicas, "replicas", "", "aggregated replicas NxTPk")
	fs.StringVar(&d.router, "router", "", routerHelp)
	fs.StringVar(&d.topo, "topology", "", "the deployment in one flag: NxTPk or \"prefill NxTPk + decode MxTPk\" (instead of --replicas or --prefill/--decode)")
	fs.IntVar(&d.dpAttention, "dp-attention", 0, "SGLang data-parallel attention: N attention groups per worker, each caching only its own requests and holding the attention weights\n(--enable-dp-attention --dp N; 1: attention split by TP; default: as the calibrated deployment ran)")
	addFrontendFlag(fs, &d.frontendMS)
	addKVLinkFlag(fs, &d.kvLink)
	d.flags = fs
	addProfileFlag(fs, &d.profile)
}

// addFrontendFlag adds --frontend-ms (predict, validate and plan).
func addFrontendFlag(fs *pflag.FlagSet, ms *float64) {
	fs.Float64Var(ms, "frontend-ms", 0, "per-request latency outside the engine, in ms (API server, network, client), as measured on your own stack:\nin place of the calibrated deployment's own, or the engine's frontend prior for a deployment nobody calibrated (default: those)")
}

// addKVLinkFlag adds --kv-link (predict, validate and plan).
func addKVLinkFlag(fs *pflag.FlagSet, link *string) {
	fs.StringVar(link, "kv-link", "", "link a disaggregated deployment's KV transfers cross: the GPU's own (NVLink4, …) within a server,\nRDMA400, RDMA200 or Ethernet between servers (default: the GPU's link when the deployment fits\none 8-GPU server, else its usual NIC; the calibrated deployment's measured transfer)")
}

func addProfileFlag(fs *pflag.FlagSet, path *string) {
	fs.StringVar(path, "profile", "", "calibration profile JSON, e.g. from capsim fit --out (default: the embedded one)")
}

// topologyGiven tells whether any pool flag was set.
func (d *deploymentFlags) topologyGiven() bool {
	return d.prefill != "" || d.decode != "" || d.replicas != "" || d.topo != ""
}

// topology parses --topology, or --prefill with --decode, or --replicas.
func (d *deploymentFlags) topology() (model.Topology, error) {
	pools := d.prefill != "" || d.decode != ""
	switch {
	case d.topo != "" && (pools || d.replicas != ""):
		return model.Topology{}, errors.New("give --topology or --replicas/--prefill/--decode, not both")
	case d.topo != "":
		t, err := model.ParseTopology(d.topo)
		return t, flagError("--topology", err)
	case d.replicas != "" && pools:
		return model.Topology{}, errors.New("give either --replicas or --prefill with --decode, not both")
	case d.replicas != "":
		p, err := model.ParsePool(d.replicas)
		return model.Aggregated(p), flagError("--replicas", err)
	case d.prefill != "" && d.decode != "":
		p, err := model.ParsePool(d.prefill)
		if err != nil {
			return model.Topology{}, flagError("--prefill", err)
		}
		dp, err := model.ParsePool(d.decode)
		return model.Disaggregated(p, dp), flagError("--decode", err)
	case pools:
		return model.Topology{}, errors.New("a disaggregated deployment needs both --prefill and --decode")
	}
	return model.Topology{}, errors.New("give a topology: --prefill NxTPk --decode MxTPk, or --replicas NxTPk")
}

// loadListFlags are load points as comma lists, for parseLoads.
type loadListFlags struct {
	concurrency, rate string
	burstiness        float64
}

// addLoadListFlags adds --concurrency, --rate and --burstiness;
// concurrencyNote says what giving neither means.
func addLoadListFlags(fs *pflag.FlagSet, l *loadListFlags, concurrencyNote string) {
	fs.StringVar(&l.concurrency, "concurrency", "", "closed-loop load points (concurrent clients), comma list, "+concurrencyNote)
	fs.StringVar(&l.rate, "rate", "", "open-loop load points in req/s, comma list (inf: all at once)")
	addBurstinessFlag(fs, &l.burstiness)
}

func addBurstinessFlag(fs *pflag.FlagSet, b *float64) {
	fs.Float64Var(b, "burstiness", 1, "gamma shape of open-loop arrival gaps (1 = Poisson; <1 burstier; >1 more even)")
}

// addQuietFlag adds --quiet; progressTo is where progress lines go then.
func addQuietFlag(fs *pflag.FlagSet, quiet *bool) {
	fs.BoolVar(quiet, "quiet", false, "no progress lines on stderr (warnings and errors still print)")
}

// progressTo is stderr, or nowhere under --quiet.
func progressTo(stderr io.Writer, quiet bool) io.Writer {
	if quiet {
		return io.Discard
	}
	return stderr
}

// serverFlags are a benchmark of a live OpenAI-compatible server: where it
// is and how each load point's requests look.
type serverFlags struct {
	url, endpoint, dataset string
	isl, osl, numPrompts   int
	maxConcurrency         int
	seed                   uint64
	timeout                time.Duration
	apiKeyEnv, out         string
	skipCheck              bool
	quiet                  bool
}

// addServerFlags adds the flags of serverFlags; seedUse says what the seed
// drives and seed is its default.
func addServerFlags(fs *pflag.FlagSet, s *serverFlags, seedUse string, seed uint64) {
	fs.StringVar(&s.url, "url", "", "server base URL, e.g. http://127.0.0.1:8000")
	fs.StringVar(&s.endpoint, "endpoint", string(loadgen.Completions), "completions (token-id prompts, exact input lengths) or chat (text prompts, approximate input lengths)")
	fs.IntVar(&s.isl, "isl", 0, "input (prompt) length in tokens")
	fs.IntVar(&s.osl, "osl", 0, "output length in tokens, enforced with max_tokens and ignore_eos")
	fs.StringVar(&s.dataset, "dataset", "", "give each request its own prompt and output length from this dataset's sample (sharegpt), scaled to means --isl and --osl and dealt from --seed\n(default: every request at --isl and --osl)")
	fs.IntVar(&s.maxConcurrency, "max-concurrency", 0, "cap on requests in flight for --rate points (0 = none)")
	fs.IntVar(&s.numPrompts, "num-prompts", 200, "requests per load point")
	fs.Uint64Var(&s.seed, "seed", seed, "seed for "+seedUse)
	fs.DurationVar(&s.timeout, "timeout", 10*time.Minute, "per-request limit from send to end of stream")
	fs.StringVar(&s.apiKeyEnv, "api-key-env", "", "name of an environment variable holding an API key (sent as a Bearer token)")
	fs.StringVar(&s.out, "out", "", "write the measured results here, replacing the file, after every load point (vLLM result JSON objects, one per line)")
	fs.BoolVar(&s.skipCheck, "skip-check", false, "skip the single test request sent before the first load point")
	addQuietFlag(fs, &s.quiet)
}

// options checks the server flags and returns the options every load point
// shares, and the load points: closed, then open ones capped by
// --max-concurrency (as bench serve does); cmd prefixes the errors.
func (s *serverFlags) options(cmd, modelName string, closed []model.Load, rates string, burstiness float64) (loadgen.Options, []model.Load, error) {
	msg := ""
	switch {
	case s.isl <= 0 || s.osl <= 0:
		msg = "--isl and --osl must be positive numbers of tokens"
	case s.numPrompts <= 0:
		msg = "--num-prompts must be positive"
	case len(closed) == 0 && rates == "":
		msg = "give load points with --concurrency and/or --rate"
	case s.maxConcurrency < 0:
		msg = "--max-concurrency must not be negative"
	case s.timeout <= 0:
		msg = "--timeout must be positive"
	}
	fail := func(err error) (loadgen.Options, []model.Load, error) {
		return loadgen.Options{}, nil, fmt.Errorf("%s: %w", cmd, err)
	}
	if msg != "" {
		return fail(errors.New(msg))
	}
	if err := loadgen.CheckLengths(s.isl, s.osl); err != nil {
		return fail(optionFlags(err, "", map[string]string{"ISL": "--isl", "OSL": "--osl"}))
	}
	dataset, err := datasets.Check(s.dataset)
	if err != nil {
		return fail(flagHint(err))
	}
	open, err := parseLoads("", rates, burstiness)
	if err != nil {
		return fail(err)
	}
	for i := range open {
		open[i] = loadgen.CapOpen(open[i], s.maxConcurrency)
	}
	endpoint, err := loadgen.ParseEndpoint(s.endpoint)
	if err != nil {
		return fail(fmt.Errorf("--endpoint must be completions or chat, got %q", s.endpoint))
	}
	apiKey := ""
	if s.apiKeyEnv != "" {
		if apiKey = os.Getenv(s.apiKeyEnv); apiKey == "" {
			return fail(fmt.Errorf("--api-key-env %s: the variable is unset or empty", s.apiKeyEnv))
		}
	}
	return loadgen.Options{URL: s.url, Model: modelName, Endpoint: endpoint, ISL: s.isl, OSL: s.osl, Dataset: dataset,
		NumPrompts: s.numPrompts, Seed: s.seed, Timeout: s.timeout, APIKey: apiKey}, append(closed, open...), nil
}

// measure runs the load points against the server: the test request first
// (unless --skip-check), progress lines, and --out rewritten after every
// point. each sees every result before it is written; its error stops the
// run once the result is written. cmd names the progress lines; the caller
// prefixes errors.
func (s *serverFlags) measure(ctx context.Context, cmd string, base loadgen.Options, loads []model.Load, stderr io.Writer,
	each func(*loadgen.Result) error) ([]*loadgen.Result, error) {
	if s.out != "" {
		// Found out after the first load point, an unwritable --out would
		// lose what was measured.
		if err := atomicfile.CheckWritable(s.out); err != nil {
			return nil, fmt.Errorf("--out: %w", err)
		}
	}
	if !s.skipCheck {
		if err := loadgen.Check(ctx, base); err != nil {
			return nil, err
		}
	}
	return loadgen.RunPoints(ctx, base, loads, benchProgress(progressTo(stderr, s.quiet), cmd, base.NumPrompts, len(loads)),
		func(done []*loadgen.Result) error {
			err := each(done[len(done)-1])
			if s.out == "" {
				return err
			}
			return cmp.Or(loadgen.WriteResults(s.out, done), err)
		})
}

// systemFlags state (or override) the system user result files measured:
// what a file and its NAME.meta.json do not say, or say wrongly.
type systemFlags struct {
	gpu, model, engine, topology string
}

// addSystemFlags adds --gpu, --model, --engine and --topology for files.
func addSystemFlags(fs *pflag.FlagSet, s *systemFlags, files string) {
	fs.StringVar(&s.gpu, "gpu", "", "GPU the "+files+" measured, e.g. H100 (states or overrides what they say)")
	fs.StringVar(&s.model, "model", "", "model the "+files+" measured, e.g. Qwen/Qwen3-8B")
	fs.StringVar(&s.engine, "engine", "", "engine and version the "+files+" measured, e.g. vllm-0.10.1")
	fs.StringVar(&s.topology, "topology", "", "deployment the "+files+" measured: NxTPk (e.g. 1xTP2) or \"prefill NxTPk + decode MxTPk\"")
}

// given tells whether any system flag was set.
func (s systemFlags) given() bool {
	return s.gpu != "" || s.model != "" || s.engine != "" || s.topology != ""
}

// apply writes the flags onto every record (results.State), naming the
// flag a bad value came from.
func (s systemFlags) apply(recs []results.Record) error {
	if _, err := model.LookupGPU(s.gpu); s.gpu != "" && err != nil {
		return flagError("--gpu", err)
	}
	if _, err := model.ParseTopology(s.topology); s.topology != "" && err != nil {
		return flagError("--topology", err)
	}
	return results.State(recs, results.Patch{GPU: s.gpu, Model: s.model, Engine: s.engine, Topology: s.topology})
}
