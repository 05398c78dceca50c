package results

import (
	"fmt"
	"path/filepath"
	"strings"
)

// LoadPatterns is LoadFiles on names that may be comma lists and shell
// patterns ("vllm-*.json"), each pattern matching at least one file.
func LoadPatterns(names []string) ([]Record, error) {
	var paths []string
	for _, n := range names {
		for _, name := range strings.Split(n, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			if !strings.ContainsAny(name, "*?[") {
				paths = append(paths, name)
				continue
			}
			m, err := filepath.Glob(name)
			if err != nil {
				return nil, fmt.Errorf("results: %s: %w", name, err)
			}
			if len(m) == 0 {
				return nil, fmt.Errorf("results: %s matches no file", name)
			}
			paths = append(paths, m...)
		}
	}
	return LoadFiles(paths)
}
