package model

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/capsim/capsim/internal/inputfile"
)

// hfConfigs is the LLM catalog: hfconfigs/<org>/<name>/config.json, each
// with a provenance.json beside it.
//
//go:embed hfconfigs
var hfConfigs embed.FS

// Provenance says where a catalog config.json came from and what the
// catalog keeps over what the file's shapes give.
type Provenance struct {
	// Source becomes LLM.Source: the config's origin in one line.
	Source string `json:"source"`
	// Config says how the file was obtained: copied whole, or reduced to
	// the fields capsim reads, and from where.
	Config string `json:"config"`
	// Params is the published total parameter count, kept as LLM.Params
	// (memory and pricing use it); ParamsSource says who published it.
	Params       float64 `json:"params"`
	ParamsSource string  `json:"params_source"`
	// MaxContext is the native context where it differs from the file's
	// max_position_embeddings; 0 keeps the file's.
	MaxContext int `json:"max_context,omitempty"`
	// AttentionParams keeps a rounded latent-attention count the catalog
	// priced with before it read config files; 0 keeps the derived one.
	AttentionParams float64 `json:"attention_params,omitempty"`
	// Aliases are other Hugging Face ids with this very config.json
	// (base and chat releases of one model).
	Aliases []string `json:"aliases,omitempty"`
}

// llms is the model catalog, read once from the embedded config files.
var llms = mustLoadCatalog()

func mustLoadCatalog() []LLM {
	out, err := loadCatalog(hfConfigs, "hfconfigs")
	if err != nil {
		panic(err) // the embedded files are checked by the catalog tests
	}
	return out
}

// loadCatalog reads every <org>/<name>/config.json under root with its
// provenance.json.
func loadCatalog(fsys fs.FS, root string) ([]LLM, error) {
	files, err := fs.Glob(fsys, root+"/*/*/config.json")
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []LLM
	for _, f := range files {
		dir := path.Dir(f)
		name := strings.TrimPrefix(dir, root+"/")
		m, prov, err := loadCatalogEntry(fsys, dir, name)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
		for _, a := range prov.Aliases {
			alias := m
			alias.Name = a
			out = append(out, alias)
		}
	}
	return out, nil
}

func loadCatalogEntry(fsys fs.FS, dir, name string) (LLM, Provenance, error) {
	var prov Provenance
	file := dir + "/provenance.json"
	data, err := fs.ReadFile(fsys, file)
	if err != nil {
		return LLM{}, prov, fmt.Errorf("model: %w", err)
	}
	if err := decodeStrict(data, &prov); err != nil {
		return LLM{}, prov, fmt.Errorf("model: %s: %w", file, err)
	}
	if prov.Params <= 0 || prov.Source == "" || prov.Config == "" || prov.ParamsSource == "" {
		return LLM{}, prov, fmt.Errorf("model: %s: source, config, params and params_source are required", file)
	}
	file = dir + "/config.json"
	if data, err = fs.ReadFile(fsys, file); err != nil {
		return LLM{}, prov, fmt.Errorf("model: %w", err)
	}
	m, err := ParseHFConfig(data, name)
	if err != nil {
		return LLM{}, prov, fmt.Errorf("model: %s: %w", file, err)
	}
	m.Params, m.Source = prov.Params, prov.Source
	if prov.MaxContext > 0 {
		m.MaxContext = prov.MaxContext
	}
	if prov.AttentionParams > 0 {
		m.AttentionParams = prov.AttentionParams
	}
	return m, prov, nil
}

// loaded holds the models read from users' config files, by the path
// they were named by: later lookups of the same name (a target's model,
// a record's) find them without reading the file again.
var loaded sync.Map

// LoadHFConfig reads a model from a config.json, or from a directory
// holding one, with the hf_quant_config.json beside it where there is
// one. The model is named by path as given.
func LoadHFConfig(p string) (LLM, error) {
	name := strings.TrimSpace(p)
	file := name
	if st, err := os.Stat(file); err == nil && st.IsDir() {
		file = filepath.Join(file, "config.json")
	}
	data, err := inputfile.ReadFile(file)
	if err != nil {
		return LLM{}, fmt.Errorf("model: %w", err)
	}
	m, err := ParseHFConfig(data, name)
	if err != nil {
		return LLM{}, fmt.Errorf("model: %s: %w", file, err)
	}
	m.Source = "config.json at " + file
	qfile := filepath.Join(filepath.Dir(file), "hf_quant_config.json")
	if data, err := inputfile.ReadFile(qfile); err == nil {
		if m, err = ParseHFQuantConfig(data, m); err != nil {
			return LLM{}, fmt.Errorf("model: %s: %w", qfile, err)
		}
		m.Source += " with " + qfile
	} else if !errors.Is(err, fs.ErrNotExist) {
		return LLM{}, fmt.Errorf("model: %w", err)
	}
	return m, nil
}

// ServedName is the name an engine serves a model by when started on it:
// a config.json path's directory (vllm serve takes the checkpoint's
// directory and, unless told otherwise, serves it by that name), else
// the name itself.
func ServedName(name string) string {
	n := strings.TrimSpace(name)
	if !strings.EqualFold(filepath.Base(n), "config.json") {
		return n
	}
	// Keep the path as written ("./my-model"): vLLM serves it by that string.
	if dir := strings.TrimRight(n[:len(n)-len("config.json")], `/\`); dir != "" {
		return dir
	}
	if strings.HasPrefix(n, "/") {
		return "/"
	}
	return "."
}

// isConfigPath reports whether a --model value names a file rather than
// a catalog model: a .json file, or a path that starts from "/" or ".".
func isConfigPath(name string) bool {
	n := strings.TrimSpace(name)
	return strings.HasSuffix(strings.ToLower(n), ".json") || strings.HasPrefix(n, "/") || strings.HasPrefix(n, ".")
}

// configDir reports whether name is a directory holding a config.json.
func configDir(name string) bool {
	st, err := os.Stat(filepath.Join(strings.TrimSpace(name), "config.json"))
	return err == nil && st.Mode().IsRegular()
}

// lookupPath returns the model a config path names, reading it once.
func lookupPath(name string) (LLM, error) {
	key := strings.TrimSpace(name)
	if m, ok := loaded.Load(key); ok {
		return m.(LLM), nil
	}
	m, err := LoadHFConfig(key)
	if err != nil {
		return LLM{}, err
	}
	loaded.Store(key, m)
	return m, nil
}
