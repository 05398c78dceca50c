package calibrate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/internal/inputfile"
	"github.com/capsim/capsim/internal/jsondup"
	"github.com/capsim/capsim/internal/jsonerr"
	"github.com/capsim/capsim/model"
	"gonum.org/v1/gonum/mat"
)

// SchemaV1 identifies the profile format this package reads and writes.
const SchemaV1 = "capsim.profile/v1"

// CostModel numbers the step-cost form (model.StepCost) a profile's
// coefficients price. The format stays SchemaV1 when it changes, but the
// same coefficients then price other times: a profile fitted for another
// form still loads, with a warning (Profile.CostModelWarning).
//   - 0 (absent): every form before 2.
//   - 2: the activation traffic between a step's GEMMs
//     (model.ActivationKernels) is priced by the weight coefficient.
const CostModel = 2

// Roles of a worker pool.
const (
	RolePrefill    = "prefill"
	RoleDecode     = "decode"
	RoleAggregated = "aggregated"
)

// Sources of a coefficient set, as Derivation.Source and Entry.Source say.
const (
	SourceFitted  = "fitted"
	SourceDerived = "derived"
	SourcePrior   = "prior"
)

// Profile is a calibration result: per (GPU, model, engine) group, the cost
// coefficients of each role and TP degree, their uncertainty, the engine
// settings, provenance and per-point residuals, plus the list of calibrated
// workload series. Its JSON form (schema "capsim.profile/v1") is documented
// field by field in docs/fit.md.
type Profile struct {
	Schema string `json:"schema"`
	// CostModel is the step-cost form the coefficients were fitted for
	// (the package's CostModel when capsim fit wrote it).
	CostModel  int          `json:"cost_model,omitempty"`
	Groups     []Group      `json:"groups"`
	Calibrated []SeriesInfo `json:"series"`
	Warnings   []string     `json:"warnings,omitempty"`
	// Pool holds groups fitted on other measurements (the embedded
	// profile's: the public corpus under fixtures/corpus) that only help
	// price a GPU or model without a group of its own (pooled.go): they
	// never price a target as its own fit, never choose its engine version
	// or settings, and keep no residuals.
	Pool []Group `json:"pool,omitempty"`
}

// Group holds what was fitted for one GPU, model and engine. Coefficients
// are shared by every TP degree of a role (they are efficiencies relative
// to each TP's own roofline), so entries of one role carry the same Coeffs.
type Group struct {
	GPU    string `json:"gpu"`    // catalog name; "" when the data did not say and nothing could be inferred
	Model  string `json:"model"`  // Hugging Face id
	Engine string `json:"engine"` // e.g. "dynamo-0.3.0", "vllm-0.9.0.1"
	// Assumed is set when the source stated no GPU or model: the fit then
	// used the catalog pair that explains the data best, and GPU / Model stay empty.
	Assumed  *Assumption     `json:"assumed,omitempty"`
	Settings engine.Settings `json:"settings"`
	// RouterChoice is set when the records did not state how requests were
	// spread over several replicas: Settings.Router is then the router
	// whose fit explained the records better (router.go), with both scores.
	RouterChoice *RouterChoice `json:"router_choice,omitempty"`
	// Transfer is the KV-transfer price between prefill and decode workers (disaggregated engines).
	Transfer TransferFit `json:"transfer,omitzero"`
	// Frontend is the per-request latency outside the engine (API server,
	// tokenisation) of aggregated deployments, simulated as sim.Config.FrontendLatency.
	Frontend *FrontendFit `json:"frontend,omitempty"`
	Entries  []Entry      `json:"entries"`
	// Records lists the ids of every record the group was fitted on.
	Records   []string   `json:"records"`
	Residuals []Residual `json:"residuals,omitempty"`
	// Notes say what the data could and could not determine.
	Notes []string `json:"notes,omitempty"`
}

// Assumption records the GPU and model a fit assumed for data that did not name them.
type Assumption struct {
	GPU   string `json:"gpu"`
	Model string `json:"model"`
	Why   string `json:"why"`
}

// Entry is the cost of one worker shape of one role.
type Entry struct {
	Role   string       `json:"role"` // prefill, decode or aggregated
	TP     int          `json:"tp"`
	PP     int          `json:"pp"`
	Source string       `json:"source"` // fitted (records of this shape exist) or prior
	Coeffs model.Coeffs `json:"coeffs"`
	// RelSigma is the relative standard deviation of each coefficient, keyed by model.CoeffNames.
	RelSigma map[string]float64 `json:"rel_sigma"`
	// Corr is the coefficients' correlation matrix (model.CoeffNames
	// order), from the stage-1 posterior; absent means uncorrelated.
	Corr [][]float64 `json:"corr,omitempty"`
	// Scatter is the relative RMS misfit of the group's stage-1 fit: how
	// far one measured point lies from the fitted costs, however well the
	// coefficients themselves are pinned down. A prediction's band
	// includes it.
	Scatter float64 `json:"scatter,omitempty"`
	// Fitted names the coefficients the data determined; Prior those left at (or near) the roofline prior.
	Fitted []string `json:"fitted"`
	Prior  []string `json:"prior"`
	// Eager is true when the worker runs without CUDA graphs; GraphSizes are its capture sizes otherwise.
	Eager      bool  `json:"eager,omitempty"`
	GraphSizes []int `json:"graph_sizes,omitempty"`
	// Records are the ids of the records with a pool of this shape and role.
	Records []string `json:"records"`
}

// TransferFit is the KV-transfer price with its uncertainty.
type TransferFit struct {
	LatencyS  float64 `json:"latency_s"`
	PerTokenS float64 `json:"per_token_s"`
	Source    string  `json:"source"` // fitted or prior
	RelSigma  float64 `json:"rel_sigma"`
}

// FrontendFit is the per-request latency outside the engine, in seconds.
type FrontendFit struct {
	LatencyS float64 `json:"latency_s"`
	// ServiceS is the API server's serial work per request, part of
	// LatencyS (never above it): a burst queues there
	// (sim.Config.FrontendService, one server per replica). 0 (a profile
	// from before it was fitted) is none.
	ServiceS float64 `json:"service_s,omitempty"`
	// ServiceFitted is true when stage 2 fitted ServiceS (a group with a
	// burst or a busy API server); otherwise it is the prior.
	ServiceFitted bool    `json:"service_fitted,omitempty"`
	Source        string  `json:"source"` // fitted or prior
	RelSigma      float64 `json:"rel_sigma"`
}

// Serial is the API server's serial work per request: ServiceS, never
// more than the latency it is part of.
func (f *FrontendFit) Serial() float64 { return math.Min(f.ServiceS, f.LatencyS) }

// Residual compares one measured point with the fitted simulation.
type Residual struct {
	Record   string             `json:"record"`
	Series   string             `json:"series"` // SeriesInfo.Key
	Load     string             `json:"load"`
	Measured map[string]float64 `json:"measured"`
	Fitted   map[string]float64 `json:"fitted"`
	// LogRatio is log(fitted/measured) per metric.
	LogRatio map[string]float64 `json:"log_ratio"`
	Weight   float64            `json:"weight"`
	Flag     string             `json:"flag,omitempty"` // why the fit cannot explain the point
}

// SeriesInfo is one calibrated workload series: one source, deployment and
// workload shape measured at several loads.
type SeriesInfo struct {
	Key      string         `json:"key"`
	Source   string         `json:"source"`
	GPU      string         `json:"gpu"`
	Model    string         `json:"model"`
	Engine   string         `json:"engine"`
	Topology model.Topology `json:"topology"`
	// TopologyLabel is the topology as the source writes it ("3P(TP4) 1D(TP4)", "4xTP4").
	TopologyLabel string         `json:"topology_label"`
	ISL           float64        `json:"isl"`
	OSL           float64        `json:"osl"`
	ISLMax        int            `json:"isl_max,omitempty"`
	OSLMax        int            `json:"osl_max,omitempty"`
	LoadKind      model.LoadKind `json:"load_kind"`
	// Loads are the measured x values: concurrencies, rates (req/s) or burst sizes.
	Loads   []float64 `json:"loads"`
	Records []string  `json:"records"`
}

// ParseProfile decodes and checks a profile.
func ParseProfile(data []byte) (*Profile, error) {
	var p Profile
	// Decoded first: the decoder refuses a wrong document in one pass
	// without allocating per token, as the duplicate-key walk does.
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("calibrate: profile: %w", jsonerr.Describe(data, err))
	}
	if tr := jsonerr.Trailing(data, dec); tr != nil {
		return nil, fmt.Errorf("calibrate: profile: %w", tr)
	}
	if d := jsondup.Find(data); d != nil {
		where := "the top level"
		if d.Path != "" {
			where = d.Path
		}
		return nil, fmt.Errorf("calibrate: profile: duplicate key %q in %s", d.Key, where)
	}
	if p.Schema != SchemaV1 {
		return nil, fmt.Errorf("calibrate: profile: schema %q, want %q", p.Schema, SchemaV1)
	}
	for i := range p.Groups {
		if err := validateGroup(fmt.Sprintf("group %d", i), &p.Groups[i]); err != nil {
			return nil, err
		}
	}
	for i := range p.Pool {
		if err := validateGroup(fmt.Sprintf("pool group %d", i), &p.Pool[i]); err != nil {
			return nil, err
		}
	}
	for i, s := range p.Calibrated {
		for _, f := range []struct {
			key string
			v   float64
		}{{"isl", s.ISL}, {"osl", s.OSL}, {"isl_max", float64(s.ISLMax)}, {"osl_max", float64(s.OSLMax)}} {
			if !(f.v >= 0 && f.v <= model.MaxSequenceTokens) {
				return nil, fmt.Errorf("calibrate: profile: series %d (%s): %s is %v; want a token count from 0 to %d", i, s.Key, f.key, f.v, model.MaxSequenceTokens)
			}
		}
	}
	p.canonicalise()
	return &p, nil
}

// validateGroup checks one group of a profile being read; label names it
// in errors ("group 3", "pool group 0").
func validateGroup(label string, g *Group) error {
	if g.Engine == "" {
		return fmt.Errorf("calibrate: profile: %s: engine is required", label)
	}
	if (g.GPU == "" || g.Model == "") && g.Assumed == nil {
		return fmt.Errorf("calibrate: profile: %s: gpu and model are required unless \"assumed\" says what was used", label)
	}
	for j, e := range g.Entries {
		switch e.Role {
		case RolePrefill, RoleDecode, RoleAggregated:
		default:
			return fmt.Errorf("calibrate: profile: %s entry %d: unknown role %q", label, j, e.Role)
		}
		if e.TP <= 0 {
			return fmt.Errorf("calibrate: profile: %s entry %d: tp must be positive", label, j)
		}
	}
	if err := validateBounds(label, g); err != nil {
		return err
	}
	gen, err := engine.ParseGeneration(string(g.Settings.Generation))
	if err != nil {
		return fmt.Errorf("calibrate: profile: %s: settings.engine_generation: %w", label, err)
	}
	g.Settings.Generation = gen
	for _, d := range []struct {
		name string
		v    int
	}{{"expert_parallel", g.Settings.ExpertParallel}, {"dp_attention", g.Settings.DPAttention}} {
		if d.v < 0 {
			return fmt.Errorf("calibrate: profile: %s: settings.%s is %d; want 0 (none) or a degree", label, d.name, d.v)
		}
	}
	if g.Settings.ReserveGB == 0 || g.Settings.WindowPool == 0 {
		// A profile written before reserve_gb or window_pool existed: the
		// engine's own (neither depends on the GPU).
		d, _ := engine.Defaults(engine.Parse(g.Engine), model.GPU{}.Device(), 0)
		if g.Settings.ReserveGB == 0 {
			g.Settings.ReserveGB = d.ReserveGB
		}
		if g.Settings.WindowPool == 0 {
			g.Settings.WindowPool = d.WindowPool
		}
	}
	for j, e := range g.Entries {
		if e.Corr == nil {
			continue
		}
		ok := len(e.Corr) == len(model.CoeffNames)
		for _, row := range e.Corr {
			ok = ok && len(row) == len(model.CoeffNames)
			for _, v := range row {
				ok = ok && v >= -1 && v <= 1
			}
		}
		if !ok {
			return fmt.Errorf("calibrate: profile: %s entry %d: corr must be a %d×%d matrix of correlations in [-1, 1]", label, j, len(model.CoeffNames), len(model.CoeffNames))
		}
		if err := checkCorr(e.Corr); err != nil {
			return fmt.Errorf("calibrate: profile: %s entry %d: corr %w", label, j, err)
		}
		if e.Scatter < 0 || e.Scatter > 10 || math.IsNaN(e.Scatter) {
			return fmt.Errorf("calibrate: profile: %s entry %d: scatter %v, want a relative misfit in [0, 10]", label, j, e.Scatter)
		}
	}
	for j, e := range g.Entries {
		// Within the bounds, still physical: no work faster than peak.
		if err := e.Coeffs.Validate(); err != nil {
			return fmt.Errorf("calibrate: profile: %s entry %d: %w", label, j, err)
		}
	}
	return nil
}

// LoadProfile reads the profile at path, or parses embedded (a default
// profile's bytes) when path is "".
func LoadProfile(path string, embedded []byte) (*Profile, error) {
	data, name := embedded, "embedded default profile"
	if path != "" {
		b, err := inputfile.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("calibrate: %w", err)
		}
		data, name = b, path
	}
	p, err := ParseProfile(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return p, nil
}

// CostModelWarning says, for a profile fitted for another step-cost form
// than this package prices (CostModel), that its predictions will differ
// from what its fit saw; "" when it matches. name names the profile.
func (p *Profile) CostModelWarning(name string) string {
	if p.CostModel == CostModel {
		return ""
	}
	return fmt.Sprintf("%s was fitted for cost model %d and this capsim prices steps with cost model %d (since 2: the activation traffic between the GEMMs, priced by the weight coefficient): refit it with capsim fit for predictions consistent with its data", name, p.CostModel, CostModel)
}

// Size says what the profile holds: "17 groups, 113 series, 37
// transfer-pool groups".
func (p *Profile) Size() string {
	s := fmt.Sprintf("%d groups, %d series", len(p.Groups), len(p.Calibrated))
	if len(p.Pool) > 0 {
		s += fmt.Sprintf(", %d transfer-pool groups", len(p.Pool))
	}
	return s
}

// Marshal encodes the profile as indented JSON ending in a newline.
func (p *Profile) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("calibrate: profile: %w", err)
	}
	return append(b, '\n'), nil
}

// Flags maps record IDs to the reason the fit flagged them (points it
// cannot explain).
func (p *Profile) Flags() map[string]string {
	flags := map[string]string{}
	for _, g := range p.Groups {
		for _, r := range g.Residuals {
			if r.Flag != "" {
				flags[r.Record] = r.Flag
			}
		}
	}
	return flags
}

// canonicalise resolves every GPU and model name of a profile to the
// catalog's, once, so lookups compare names with ==.
func (p *Profile) canonicalise() {
	for _, gs := range [][]Group{p.Groups, p.Pool} {
		for i := range gs {
			g := &gs[i]
			g.GPU, g.Model = model.CanonicalGPU(g.GPU), model.CanonicalModel(g.Model)
			if a := g.Assumed; a != nil {
				a.GPU, a.Model = model.CanonicalGPU(a.GPU), model.CanonicalModel(a.Model)
			}
		}
	}
	for i := range p.Calibrated {
		s := &p.Calibrated[i]
		s.GPU, s.Model = model.CanonicalGPU(s.GPU), model.CanonicalModel(s.Model)
	}
}

// Models lists the models calibrated on a GPU ("" lists every model).
func (p *Profile) Models(gpu string) []string {
	gpu = model.CanonicalGPU(gpu)
	seen := map[string]bool{}
	var out []string
	for _, g := range p.Groups {
		if g.Model != "" && (gpu == "" || g.GPU == gpu) && !seen[g.Model] {
			seen[g.Model] = true
			out = append(out, g.Model)
		}
	}
	sort.Strings(out)
	return out
}

// Engines lists the engines calibrated for a GPU and model, sorted.
func (p *Profile) Engines(gpu, llm string) []string {
	gpu, llm = model.CanonicalGPU(gpu), model.CanonicalModel(llm)
	seen := map[string]bool{}
	var out []string
	for _, g := range p.Groups {
		if g.GPU == gpu && g.Model == llm && !seen[g.Engine] {
			seen[g.Engine] = true
			out = append(out, g.Engine)
		}
	}
	sort.Strings(out)
	return out
}

// Series lists the calibrated series of a GPU, model and engine; empty
// strings match everything.
func (p *Profile) Series(gpu, llm, engine string) []SeriesInfo {
	gpu, llm = model.CanonicalGPU(gpu), model.CanonicalModel(llm)
	var out []SeriesInfo
	for _, s := range p.Calibrated {
		if (gpu == "" || s.GPU == gpu) && (llm == "" || s.Model == llm) &&
			(engine == "" || strings.EqualFold(s.Engine, engine)) {
			out = append(out, s)
		}
	}
	return out
}

// ResolveEngine picks an engine by case-insensitive prefix among those
// calibrated for the GPU and model (or, when none are, among all the
// profile's engines); an exact label wins over newer versions it prefixes.
// An empty prefix means DefaultEngine: one engine version for every GPU
// and model, so that a comparison across GPUs compares hardware, not
// engine releases. The label is parsed here, once.
func (p *Profile) ResolveEngine(gpu, llm, prefix string, disaggregated bool) (engine.ID, error) {
	label, err := p.resolveEngine(gpu, llm, prefix, disaggregated)
	if err != nil {
		return engine.ID{}, err
	}
	return engine.Parse(label), nil
}

func (p *Profile) resolveEngine(gpu, llm, prefix string, disaggregated bool) (string, error) {
	if strings.TrimSpace(prefix) == "" {
		if e := p.DefaultEngine(disaggregated); e != "" {
			return e, nil
		}
	}
	have := p.Engines(gpu, llm)
	local := len(have) > 0 // the GPU and model have groups of their own
	where := fmt.Sprintf("%s / %s", gpu, model.ShortName(llm))
	if !local {
		have, where = p.engineLabels(), "any GPU or model in the profile"
	}
	want := strings.ToLower(strings.TrimSpace(prefix))
	if want == "" {
		want = engine.DefaultLabel(disaggregated)
	}
	// An exact label the user gave wins over newer versions it prefixes.
	exact := func(labels []string) string {
		for _, e := range labels {
			if prefix != "" && strings.EqualFold(e, want) {
				return e
			}
		}
		return ""
	}
	if e := exact(have); e != "" {
		return e, nil
	}
	match := withPrefix(have, want)
	if len(match) == 0 && prefix != "" && local {
		// This GPU and model were calibrated with other engines only: the
		// label names what the profile has elsewhere, by the same rules as
		// for a GPU and model with no groups at all (pooled there, carried here).
		elsewhere := p.engineLabels()
		if e := exact(elsewhere); e != "" {
			return e, nil
		}
		match = withPrefix(elsewhere, want)
	}
	if len(match) == 0 {
		if prefix == "" {
			// No preferred family: fall back to the engine families we have, newest version.
			match = have
		}
		if len(match) == 0 && prefix != "" && engine.OverheadFor(want).Family != "" &&
			(len(engine.Parse(want).Version) > 0 || !p.hasFamily(want)) {
			// A version nobody calibrated of a family the engine table
			// knows: Configure prices it from the nearest calibrated version
			// of the family (or the roofline prior with the table's
			// overheads when the profile has none) and says so.
			return strings.TrimSpace(prefix), nil
		}
		if len(match) == 0 {
			return "", fmt.Errorf("calibrate: no engine matching %q for %s (have: %s)", prefix, where, strings.Join(have, ", "))
		}
	}
	best := match[0]
	for _, e := range match[1:] {
		if engine.Parse(best).Older(engine.Parse(e)) {
			best = e
		}
	}
	return best, nil
}

// withPrefix are the labels that begin with want (lower case), ignoring case.
func withPrefix(labels []string, want string) []string {
	var out []string
	for _, e := range labels {
		if strings.HasPrefix(strings.ToLower(e), want) {
			out = append(out, e)
		}
	}
	return out
}

// engineLabels are the engine labels of the profile's groups, sorted.
func (p *Profile) engineLabels() []string {
	seen := map[string]bool{}
	var out []string
	for _, g := range p.Groups {
		if !seen[g.Engine] {
			seen[g.Engine] = true
			out = append(out, g.Engine)
		}
	}
	sort.Strings(out)
	return out
}

// hasFamily reports whether any group is of the engine's family.
func (p *Profile) hasFamily(label string) bool {
	for _, g := range p.Groups {
		if engine.Family(g.Engine) == engine.Family(label) {
			return true
		}
	}
	return false
}

// DefaultEngine is the engine a deployment gets when none is named,
// whatever its GPU and model: the newest version in the profile of Dynamo
// for a disaggregated deployment and of vLLM for an aggregated one (a
// label with a version is newer than one without), else the newest of any
// family; "" for an empty profile.
func (p *Profile) DefaultEngine(disaggregated bool) string {
	family := engine.DefaultLabel(disaggregated)
	best, bestAny := "", ""
	newer := func(cur, e string) bool {
		return cur == "" || engine.Parse(cur).Older(engine.Parse(e))
	}
	for _, g := range p.Groups {
		if engine.Family(g.Engine) == family && newer(best, g.Engine) {
			best = g.Engine
		}
		if newer(bestAny, g.Engine) {
			bestAny = g.Engine
		}
	}
	if best != "" {
		return best
	}
	return bestAny
}

// Unexplained is what entry e of g spends per step beyond its engine's
// table row (engine.OverheadWith, in e's eager or CUDA-graph mode):
// time the cost model does not explain, a property of this deployment (its
// host, clocks, harness) that prices it and its other worker shapes, and
// never another GPU, engine version or source. Negative when the fit ran
// below the row.
func (g *Group) Unexplained(e *Entry) float64 {
	row := model.PriorCoeffsFor(engine.OverheadWith(g.Engine, g.Settings), e.Eager)
	return e.Coeffs.Overhead - row.Overhead
}

// UnexplainedNoteS is the smallest unexplained per-step time (either way)
// the fit's notes and derivations mention: 0.5 ms.
const UnexplainedNoteS = 0.0005

// unexplainedText says an unexplained per-step time in words.
func unexplainedText(u float64, g *Group) string {
	row := engine.OverheadWith(g.Engine, g.Settings)
	if u >= 0 {
		return fmt.Sprintf("unexplained: %.1f ms/step beyond the engine table's %s row, this deployment's own", 1000*u, row.Generation)
	}
	return fmt.Sprintf("unexplained: %.1f ms/step below the engine table's %s row, this deployment's own", -1000*u, row.Generation)
}

// checkCorr checks that c (already square and within [-1, 1]) is a
// correlation matrix: symmetric, a unit diagonal (or an all-zero row and
// column, a coefficient held fixed) and positive semi-definite, up to the
// rounding to two decimals a fit writes it with. Another matrix can make a
// step's variance negative in stepSigma. Its errors follow "corr ".
func checkCorr(c [][]float64) error {
	n := len(c)
	const tol = 0.01 // a rounding's worth
	for i := range n {
		if c[i][i] != 1 && (c[i][i] != 0 || slices.ContainsFunc(c[i], func(v float64) bool { return v != 0 })) {
			return fmt.Errorf("[%d][%d] is %v; want 1 on the diagonal (or a row of zeros for a coefficient held fixed)", i, i, c[i][i])
		}
		for j := range i {
			if math.Abs(c[i][j]-c[j][i]) > tol {
				return fmt.Errorf("is not symmetric: [%d][%d] is %v and [%d][%d] is %v", i, j, c[i][j], j, i, c[j][i])
			}
		}
	}
	sym := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			sym.SetSym(i, j, (c[i][j]+c[j][i])/2)
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(sym, false) {
		return errors.New("has no eigenvalues (not a correlation matrix)")
	}
	// Rounding each entry by up to tol/2 moves an eigenvalue by at most n·tol/2.
	if least := slices.Min(eig.Values(nil)); least < -float64(n)*tol/2 {
		return fmt.Errorf("is not positive semi-definite (its least eigenvalue is %.3g), so it is not a correlation matrix", least)
	}
	return nil
}
