package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// The documentation is generated from the binary: docs/cli.md from every
// command's flag set, and each example between a pair of markers
//
//	<!-- capsim:begin NAME [lines=N] [tail=N] $ COMMAND [$ COMMAND]… -->
//	<!-- capsim:end -->
//
// in README.md and docs/*.md from running each COMMAND in-process (lines=N
// keeps the first N lines of each output, tail=N its last N as well). The
// command `accuracy-table FILE` instead writes the pooled rows of a saved
// `capsim fit --cv` output (FILE, from the repository root) as a table. `make docs`
// runs these tests with -update to rewrite them; without it they fail when
// a document differs from what the binary prints.
var updateDocs = flag.Bool("update", false, "rewrite docs/cli.md and the generated examples in README.md and docs/*.md")

const repoRoot = "../.."

// repoAbs is repoRoot as an absolute path, for examples run elsewhere.
var repoAbs string

// TestDocsCLIReference keeps docs/cli.md what the flag sets say.
func TestDocsCLIReference(t *testing.T) {
	got, err := cliMarkdown()
	if err != nil {
		t.Fatal(err)
	}
	checkDoc(t, filepath.Join(repoRoot, "docs", "cli.md"), got)
}

// TestDocsExamples keeps every documented example what the binary prints.
func TestDocsExamples(t *testing.T) {
	files := []string{filepath.Join(repoRoot, "README.md")}
	more, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, more...)
	orig, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(orig)
	if repoAbs, err = filepath.Abs(repoRoot); err != nil {
		t.Fatal(err)
	}
	blocks := 0
	for _, f := range files {
		old, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		scratch := t.TempDir()
		if err := seedScratch(scratch); err != nil {
			t.Fatal(err)
		}
		// The examples' paths are relative to the scratch directory.
		if err := os.Chdir(scratch); err != nil {
			t.Fatal(err)
		}
		got, n, err := fillExamples(f, old)
		if err := os.Chdir(orig); err != nil {
			t.Fatal(err)
		}
		if err != nil {
			t.Fatal(err)
		}
		blocks += n
		if n > 0 {
			checkDoc(t, f, got)
		}
	}
	if blocks == 0 {
		t.Fatal("no capsim:begin markers in README.md or docs/*.md")
	}
}

// checkDoc compares a document with what was generated, or rewrites it under -update.
func checkDoc(t *testing.T, path string, got []byte) {
	t.Helper()
	if *updateDocs {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: run `make docs`", err)
	}
	if !bytes.Equal(old, got) {
		t.Errorf("%s is not what the binary prints (first difference at line %d): run `make docs`", path, firstDiffLine(old, got))
	}
}

func firstDiffLine(a, b []byte) int {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return i + 1
		}
	}
	return min(len(al), len(bl)) + 1
}

// seedScratch copies docs/examples/ (but its README) into dir, and
// cmd/capsim/testdata/ into dir/testdata: the input files the examples name.
func seedScratch(dir string) error {
	if err := copyTree(filepath.Join(repoRoot, "docs", "examples"), dir); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(dir, "README.md")); err != nil {
		return err
	}
	return copyTree("testdata", filepath.Join(dir, "testdata"))
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
}

var (
	beginMarker = regexp.MustCompile(`^<!-- capsim:begin ([a-z0-9-]+)((?: [a-z]+=[0-9]+)*) \$ (.+) -->$`)
	endMarker   = "<!-- capsim:end -->"
)

// fillExamples replaces the text between each pair of markers of doc with
// its command and output, running the commands in order in the working
// directory; it returns the new text and the number of examples.
func fillExamples(path string, doc []byte) ([]byte, int, error) {
	lines := strings.SplitAfter(string(doc), "\n")
	var out strings.Builder
	n := 0
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		out.WriteString(line)
		if !strings.HasPrefix(line, "<!-- capsim:begin") {
			continue
		}
		m := beginMarker.FindStringSubmatch(strings.TrimRight(line, "\n"))
		if m == nil {
			return nil, 0, fmt.Errorf("%s:%d: malformed marker (want <!-- capsim:begin NAME [lines=N] [tail=N] $ COMMAND -->)", path, i+1)
		}
		end := i + 1
		for end < len(lines) && strings.TrimRight(lines[end], "\n") != endMarker {
			if strings.HasPrefix(lines[end], "<!-- capsim:begin") {
				break
			}
			end++
		}
		if end == len(lines) || strings.TrimRight(lines[end], "\n") != endMarker {
			return nil, 0, fmt.Errorf("%s:%d: example %s has no %s", path, i+1, m[1], endMarker)
		}
		head, tail := 0, 0
		for _, opt := range strings.Fields(m[2]) {
			k, v, _ := strings.Cut(opt, "=")
			n, _ := strconv.Atoi(v)
			switch k {
			case "lines":
				head = n
			case "tail":
				tail = n
			default:
				return nil, 0, fmt.Errorf("%s:%d: unknown option %q (want lines=N or tail=N)", path, i+1, k)
			}
		}
		if table, ok := strings.CutPrefix(m[3], "accuracy-table "); ok {
			md, err := accuracyTable(filepath.Join(repoAbs, table))
			if err != nil {
				return nil, 0, fmt.Errorf("%s:%d: %s: %w", path, i+1, m[1], err)
			}
			out.WriteString("\n" + md + "\n" + lines[end])
			i = end
			n++
			continue
		}
		out.WriteString("```\n")
		for _, cmdline := range strings.Split(m[3], " $ ") {
			text, err := runExample(cmdline)
			if err != nil {
				return nil, 0, fmt.Errorf("%s:%d: %s: %w", path, i+1, m[1], err)
			}
			out.WriteString("$ " + cmdline + "\n" + truncateLines(text, head, tail))
		}
		out.WriteString("```\n")
		out.WriteString(lines[end])
		i = end
		n++
	}
	return []byte(out.String()), n, nil
}

// truncateLines keeps the first head lines of text and its last tail
// lines, marking the cut with "…" (head 0: all of it).
func truncateLines(text string, head, tail int) string {
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	ls := strings.SplitAfter(text, "\n")
	ls = ls[:len(ls)-1] // the empty string after the final newline
	if head <= 0 || len(ls) <= head+tail+1 {
		return text
	}
	return strings.Join(ls[:head], "") + "…\n" + strings.Join(ls[len(ls)-tail:], "")
}

// exampleCache holds the output of commands that read and write no files,
// so an example shown in two documents runs once.
var exampleCache = map[string]string{}

// runExample runs one documented command as a terminal would show it:
// capsim's stdout, then its stderr, then the error line main prints.
// Besides capsim it knows `find DIR -type f` (sorted) and `cat FILE`, to
// show what an export wrote.
func runExample(cmdline string) (string, error) {
	args := strings.Fields(cmdline)
	switch {
	case len(args) == 4 && args[0] == "find" && args[2] == "-type" && args[3] == "f":
		var paths []string
		err := filepath.WalkDir(args[1], func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				paths = append(paths, p)
			}
			return err
		})
		slices.Sort(paths)
		return strings.Join(paths, "\n") + "\n", err
	case len(args) == 2 && args[0] == "cat":
		b, err := os.ReadFile(args[1])
		return string(b), err
	case len(args) < 2 || args[0] != "capsim":
		return "", fmt.Errorf("%q: an example runs capsim, find DIR -type f or cat FILE", cmdline)
	}
	pure := !slices.ContainsFunc(args, func(a string) bool {
		return slices.Contains([]string{"--out", "--export", "--from", "--file", "--profile", "--results", "--plot"}, strings.SplitN(a, "=", 2)[0])
	})
	if text, ok := exampleCache[cmdline]; ok && pure {
		return text, nil
	}
	var stdout, stderr bytes.Buffer
	err := run(args[1:], &stdout, &stderr)
	text := stdout.String()
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	text += stderr.String()
	if err != nil && !errors.Is(err, pflag.ErrHelp) {
		msg, _, _ := strings.Cut(err.Error(), "\n")
		text += "capsim: " + msg + "\n"
	}
	if pure {
		exampleCache[cmdline] = text
	}
	return text, nil
}

// cliMarkdown is docs/cli.md: every command's usage, description,
// examples and flags, the flags read from the flag set the command parses.
func cliMarkdown() ([]byte, error) {
	sets := map[string]*pflag.FlagSet{}
	flagSetMade = func(name string, fs *pflag.FlagSet) { sets[name] = fs }
	defer func() { flagSetMade = nil }()
	var b bytes.Buffer
	b.WriteString("# Command reference\n\n<!-- Generated from the commands' flag sets by `make docs` (cmd/capsim/docs_test.go); do not edit. -->\n\n")
	b.WriteString("`capsim help COMMAND` prints the same, with examples; every command that prints results takes `--format table|json|csv`.\n\n")
	cmds := commands()
	for _, name := range commandNames() {
		fmt.Fprintf(&b, "- [`capsim %s`](#capsim-%s): %s\n", name, name, cmds[name].summary)
	}
	for _, name := range commandNames() {
		c := cmds[name]
		fmt.Fprintf(&b, "\n## capsim %s\n\n```\ncapsim %s %s\n```\n\n%s\n", name, name, c.synopsis, strings.ReplaceAll(c.about, "\n", " "))
		if len(c.examples) > 0 {
			b.WriteString("\nExamples:\n\n```\n")
			for _, e := range c.examples {
				b.WriteString(e + "\n")
			}
			b.WriteString("```\n")
		}
		if c.run == nil {
			continue
		}
		if err := c.run([]string{"--help"}, io.Discard, io.Discard); !errors.Is(err, pflag.ErrHelp) {
			return nil, fmt.Errorf("capsim %s --help: %v", name, err)
		}
		fs := sets[name]
		if fs == nil {
			return nil, fmt.Errorf("capsim %s made no flag set", name)
		}
		b.WriteString("\n| flag | type | default | meaning |\n|---|---|---|---|\n")
		fs.VisitAll(func(f *pflag.Flag) {
			if f.Hidden {
				return
			}
			typ, usage := pflag.UnquoteUsage(f)
			def := f.DefValue
			if def == "" || def == "[]" || (typ == "" && def == "false") {
				def = ""
			} else {
				def = "`" + def + "`"
			}
			if typ == "" {
				typ = "bool"
			}
			if f.Deprecated != "" {
				usage += " (deprecated: " + f.Deprecated + ")"
			}
			fmt.Fprintf(&b, "| `--%s` | %s | %s | %s |\n", f.Name, typ, def, mdCell(usage))
		})
	}
	return b.Bytes(), nil
}

// mdCell makes text safe in a markdown table cell.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", "<br>", "<", "&lt;", ">", "&gt;").Replace(s)
}

// TestFillExamples: a marker pair is filled with each command and its
// output, cut as its options say; a malformed or unclosed marker is an error.
func TestFillExamples(t *testing.T) {
	doc := "intro\n<!-- capsim:begin x lines=2 tail=1 $ capsim help version $ capsim nosuch -->\nstale\n<!-- capsim:end -->\nafter\n"
	got, n, err := fillExamples("doc.md", []byte(doc))
	if err != nil || n != 1 {
		t.Fatalf("fillExamples: %d examples, %v", n, err)
	}
	want := "intro\n<!-- capsim:begin x lines=2 tail=1 $ capsim help version $ capsim nosuch -->\n```\n" +
		"$ capsim help version\nusage: capsim version \n\n…\n  capsim version\n" +
		"$ capsim nosuch\ncapsim: unknown command \"nosuch\" (capsim help lists the commands)\n" +
		"```\n<!-- capsim:end -->\nafter\n"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	for _, bad := range []string{
		"<!-- capsim:begin x $ capsim help -->\nno end\n",
		"<!-- capsim:begin X $ capsim help -->\n<!-- capsim:end -->\n",
		"<!-- capsim:begin x size=3 $ capsim help -->\n<!-- capsim:end -->\n",
		"<!-- capsim:begin x $ rm -rf / -->\n<!-- capsim:end -->\n",
	} {
		if _, _, err := fillExamples("doc.md", []byte(bad)); err == nil {
			t.Errorf("fillExamples accepted %q", bad)
		}
	}
}

// accuracyTable is the markdown table of the pooled rows ("all") of the
// hold-out table that ends a `capsim fit --cv` output: the medians of each
// metric and the coverage, so the documents quote the saved run's numbers.
func accuracyTable(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	names := map[string]string{"in-sample": "nothing (in-sample)", "gpu": "every GPU",
		"engine": "every engine version", "source": "every source"}
	var rows []string
	inTable := false
	for n, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && f[0] == "held" && f[2] == "fold" {
			inTable = true
			continue
		}
		if !inTable || len(f) != 10 || f[1] != "all" {
			continue
		}
		name, ok := names[f[0]]
		if !ok {
			return "", fmt.Errorf("%s:%d: unknown fold kind %q", path, n+1, f[0])
		}
		cells := []string{name, f[2]}
		for _, v := range f[3:8] {
			median, _, _ := strings.Cut(v, "/")
			cells = append(cells, median)
		}
		rows = append(rows, "| "+strings.Join(append(cells, f[8]), " | ")+" |\n")
	}
	if len(rows) != len(names) {
		return "", fmt.Errorf("%s: %d pooled rows in the hold-out table, want %d", path, len(rows), len(names))
	}
	return "| held out | points | req/s | out tok/s | TTFT | TPOT | E2E | ±1σ coverage |\n|---|---|---|---|---|---|---|---|\n" +
		strings.Join(rows, ""), nil
}

// TestAccuracyTable reads the pooled rows of a fit --cv hold-out table and
// refuses one that lacks a fold kind.
func TestAccuracyTable(t *testing.T) {
	out := `Leave-one-GPU-out ...
   held out        fold  points      req/s %  out tok/s %      TTFT %     TPOT %      E2E %  coverage  failed
  in-sample         all     781     7.8/1061      6.1/502   17.5/3786    8.8/445     5.3/95      0.77       0
        gpu   A100-40GB      12     89.2/108            -    42.1/846    52.4/56          -      0.06       0
        gpu         all     781    17.3/1951    16.0/1197   34.7/6515   19.9/426   17.4/197      0.73       0
     engine         all     777    16.8/2290    16.3/1171   36.5/6515   19.2/439   14.5/164      0.72       4
     source         all     777    17.4/1887            -   31.4/3832   22.4/438   21.2/192      0.74       0
`
	path := filepath.Join(t.TempDir(), "cv.txt")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := accuracyTable(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "| held out | points | req/s | out tok/s | TTFT | TPOT | E2E | ±1σ coverage |\n|---|---|---|---|---|---|---|---|\n" +
		"| nothing (in-sample) | 781 | 7.8 | 6.1 | 17.5 | 8.8 | 5.3 | 0.77 |\n" +
		"| every GPU | 781 | 17.3 | 16.0 | 34.7 | 19.9 | 17.4 | 0.73 |\n" +
		"| every engine version | 777 | 16.8 | 16.3 | 36.5 | 19.2 | 14.5 | 0.72 |\n" +
		"| every source | 777 | 17.4 | - | 31.4 | 22.4 | 21.2 | 0.74 |\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(out, "source ", "sauce  ", 1)), 0o644); err == nil {
		if _, err := accuracyTable(path); err == nil {
			t.Error("an unknown fold kind was accepted")
		}
	}
}
