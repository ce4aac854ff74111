package docscheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDocsCiteOnlyWhatExists reads README.md, CONTRIBUTING.md, docs/*.md and every doc.go,
// and reports, as file:line, each citation that names nothing in the tree.
//
// What counts as a citation:
//
//   - In Markdown, a `backticked` span outside fenced blocks, and in doc.go
//     comments the same spans plus the bare text (Go doc comments do not
//     use backticks), and doc links [Name] and [pkg.Name].
//   - pkg.Name or pkg.Name.Member anywhere in such text, where pkg is the
//     name of one of the module's packages (os.Args is not checked): Name
//     must be declared at the top level of a package of that name, Member
//     as a field or method in it.
//   - A backticked span that is a whole identifier, Type or Type.Member,
//     possibly followed by "(…)": checked when it has a dot, or when it is
//     MixedCaps with at least two capitals and a lower-case letter
//     (HideLoadTimes, DESResult; not PASS or Scenario, which may be words).
//     Test…, Benchmark… and Fuzz… must be test functions; other names must
//     be declared somewhere in the module (type, func, var, const, field,
//     method).
//   - A path: a backticked span without spaces whose first element is a
//     file or folder at the repo's top level (gpu/sim, runner/loop.go,
//     examples/demo.toml) must exist; a bare name.go in a doc.go must be
//     a file of that package.
//   - A command: a backticked span, or a line of a fenced block, that is
//     `go test …` or `go run …` (after any VAR=value prefix and before a
//     # comment), run from the repo root. Its packages must exist; with
//     -bench its pattern must match a benchmark in them (its -run is then
//     left alone: `-run xxx` is how docs skip the tests); without -bench,
//     -run must match a test, and a command with neither must find tests.
//     A command with an all-capitals placeholder (PKG, NAME) is a template
//     and is skipped.
func TestDocsCiteOnlyWhatExists(t *testing.T) {
	root := repoRoot(t)
	tr := loadTree(t, root)
	for _, p := range pages(root) {
		for _, e := range tr.checkMarkdown(p) {
			t.Error(e)
		}
	}
	for _, p := range tr.docGos {
		for _, e := range tr.checkDocGo(p) {
			t.Error(e)
		}
	}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the test's folder")
		}
		dir = up
	}
}

// pkg is what one folder of Go files declares.
type pkg struct {
	dir     string          // relative to the root, "." for the root
	name    string          // the package clause (without _test)
	decls   map[string]bool // top-level names
	members map[string]bool // fields and methods
	tests   []string        // Test…, Fuzz… and Example… functions
	benches []string        // Benchmark… functions
}

type tree struct {
	root     string
	fset     *token.FileSet
	byDir    map[string]*pkg
	byName   map[string][]*pkg
	anywhere map[string]bool // every name declared in any package, members included
	docGos   []string
}

func loadTree(t *testing.T, root string) *tree {
	t.Helper()
	tr := &tree{root: root, fset: token.NewFileSet(), byDir: map[string]*pkg{}, byName: map[string][]*pkg{}, anywhere: map[string]bool{}}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "shared" || name == "node_modules" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(tr.fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		p := tr.byDir[rel]
		if p == nil {
			p = &pkg{dir: rel, decls: map[string]bool{}, members: map[string]bool{}}
			tr.byDir[rel] = p
		}
		if !strings.HasSuffix(name, "_test.go") {
			p.name = f.Name.Name
			if name == "doc.go" {
				tr.docGos = append(tr.docGos, path)
			}
		}
		tr.collect(p, f, strings.HasSuffix(name, "_test.go"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range tr.byDir {
		if p.name != "" {
			tr.byName[p.name] = append(tr.byName[p.name], p)
		}
	}
	return tr
}

func (tr *tree) collect(p *pkg, f *ast.File, test bool) {
	decl := func(n string) { p.decls[n] = true; tr.anywhere[n] = true }
	member := func(n string) { p.members[n] = true; tr.anywhere[n] = true }
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv != nil {
				member(d.Name.Name)
				continue
			}
			decl(d.Name.Name)
			if test {
				switch n := d.Name.Name; {
				case strings.HasPrefix(n, "Benchmark"):
					p.benches = append(p.benches, n)
				case strings.HasPrefix(n, "Test") || strings.HasPrefix(n, "Fuzz") || strings.HasPrefix(n, "Example"):
					p.tests = append(p.tests, n)
				}
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					decl(s.Name.Name)
					ast.Inspect(s.Type, func(n ast.Node) bool {
						if fl, ok := n.(*ast.Field); ok {
							for _, id := range fl.Names {
								member(id.Name)
							}
							if len(fl.Names) == 0 { // embedded: the type's name is the field's
								ast.Inspect(fl.Type, func(n ast.Node) bool {
									if id, ok := n.(*ast.Ident); ok {
										member(id.Name)
									}
									return true
								})
							}
						}
						return true
					})
				case *ast.ValueSpec:
					for _, id := range s.Names {
						decl(id.Name)
					}
				}
			}
		}
	}
}

var (
	span       = regexp.MustCompile("`([^`]+)`")
	qualified  = regexp.MustCompile(`\b([a-z][a-z0-9]*)\.([A-Z]\w*)(?:\.([A-Z]\w*))?`)
	bareIdent  = regexp.MustCompile(`^([A-Z]\w*)(?:\.([A-Z]\w*))?(?:\(.*\))?$`)
	pathLike   = regexp.MustCompile(`^[\w.-]+(?:/[\w.-]+)*/?$`)
	docLink    = regexp.MustCompile(`\[([a-z]\w*\.)?([A-Z]\w*)\]`)
	goFileWord = regexp.MustCompile(`\b[A-Za-z0-9][\w/-]*\.go\b`)
	envPrefix  = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=\S*$`)
	capsWord   = regexp.MustCompile(`^[A-Z][A-Z_]+$`)
)

func (tr *tree) checkMarkdown(path string) []string {
	rel, _ := filepath.Rel(tr.root, path)
	b, err := os.ReadFile(path)
	if err != nil {
		return []string{err.Error()}
	}
	var errs []string
	fenced := false
	for i, line := range strings.Split(string(b), "\n") {
		at := fmt.Sprintf("%s:%d", rel, i+1)
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			if msg := tr.checkCommand(strings.TrimPrefix(strings.TrimSpace(line), "$ ")); msg != "" {
				errs = append(errs, at+": "+msg)
			}
			continue
		}
		for _, m := range span.FindAllStringSubmatch(line, -1) {
			for _, msg := range tr.checkSpan(m[1], "") {
				errs = append(errs, at+": "+msg)
			}
		}
	}
	return errs
}

func (tr *tree) checkDocGo(path string) []string {
	rel, _ := filepath.Rel(tr.root, path)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		return []string{err.Error()}
	}
	dir := filepath.Dir(rel)
	var errs []string
	for _, g := range f.Comments {
		for _, c := range g.List {
			text := c.Text
			at := fmt.Sprintf("%s:%d", rel, fset.Position(c.Pos()).Line)
			var msgs []string
			for _, m := range span.FindAllStringSubmatch(text, -1) {
				msgs = append(msgs, tr.checkSpan(m[1], dir)...)
			}
			plain := span.ReplaceAllString(text, "")
			msgs = append(msgs, tr.checkQualified(plain)...)
			for _, m := range docLink.FindAllStringSubmatch(plain, -1) {
				if m[1] == "" && !tr.byDir[dir].decls[m[2]] {
					msgs = append(msgs, fmt.Sprintf("[%s]: package %s declares no %s", m[2], tr.byDir[dir].name, m[2]))
				}
			}
			for _, w := range goFileWord.FindAllString(plain, -1) {
				if !tr.exists(w, dir) {
					msgs = append(msgs, fmt.Sprintf("%s: no such file in %s or the repo root", w, dir))
				}
			}
			for _, m := range msgs {
				errs = append(errs, at+": "+m)
			}
		}
	}
	return errs
}

// checkSpan checks one backticked span; dir is the package of a doc.go, "" for Markdown.
func (tr *tree) checkSpan(s, dir string) []string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "go test ") || strings.HasPrefix(s, "go run ") {
		if msg := tr.checkCommand(s); msg != "" {
			return []string{msg}
		}
		return nil
	}
	if pathLike.MatchString(s) && (strings.Contains(s, "/") || strings.HasSuffix(s, ".go")) {
		first := strings.SplitN(s, "/", 2)[0]
		if _, err := os.Stat(filepath.Join(tr.root, first)); err == nil || (dir != "" && !strings.Contains(s, "/")) {
			if !tr.exists(s, dir) {
				return []string{fmt.Sprintf("`%s`: no such file or folder", s)}
			}
			return nil
		}
	}
	msgs := tr.checkQualified(s)
	if m := bareIdent.FindStringSubmatch(s); m != nil {
		name, member := m[1], m[2]
		switch {
		case strings.HasPrefix(name, "Test") || strings.HasPrefix(name, "Benchmark") || strings.HasPrefix(name, "Fuzz"):
			if !tr.hasTestFunc(name) {
				msgs = append(msgs, fmt.Sprintf("`%s`: no test or benchmark of that name", s))
			}
		case member != "" || looksLikeGo(name):
			if !tr.anywhere[name] {
				msgs = append(msgs, fmt.Sprintf("`%s`: no package declares %s", s, name))
			} else if member != "" && !tr.anywhere[member] {
				msgs = append(msgs, fmt.Sprintf("`%s`: no package declares a field or method %s", s, member))
			}
		}
	}
	return msgs
}

// looksLikeGo: MixedCaps with two capitals and a lower-case letter.
func looksLikeGo(s string) bool {
	upper, lower := 0, 0
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z':
			upper++
		case r >= 'a' && r <= 'z':
			lower++
		}
	}
	return upper >= 2 && lower > 0
}

// checkQualified checks each pkg.Name[.Member] in s whose pkg is one of the module's.
func (tr *tree) checkQualified(s string) []string {
	var msgs []string
	for _, m := range qualified.FindAllStringSubmatch(s, -1) {
		pkgs := tr.byName[m[1]]
		if len(pkgs) == 0 {
			continue
		}
		found, memberFound := false, m[3] == ""
		for _, p := range pkgs {
			if p.decls[m[2]] {
				found = true
				memberFound = memberFound || p.members[m[3]]
			}
		}
		switch {
		case !found:
			msgs = append(msgs, fmt.Sprintf("%s.%s: package %s declares no %s", m[1], m[2], m[1], m[2]))
		case !memberFound:
			msgs = append(msgs, fmt.Sprintf("%s: package %s has no field or method %s", m[0], m[1], m[3]))
		}
	}
	return msgs
}

func (tr *tree) hasTestFunc(name string) bool {
	for _, p := range tr.byDir {
		if slices.Contains(p.tests, name) || slices.Contains(p.benches, name) {
			return true
		}
	}
	return false
}

// exists says whether path names a file or folder, relative to dir (a
// doc.go's package) when it has no slash, else to the root.
func (tr *tree) exists(path, dir string) bool {
	if dir != "" && !strings.Contains(path, "/") {
		if _, err := os.Stat(filepath.Join(tr.root, dir, path)); err == nil {
			return true
		}
	}
	_, err := os.Stat(filepath.Join(tr.root, path))
	return err == nil
}

// checkCommand checks a `go test` or `go run` line; "" when it is neither or fine.
func (tr *tree) checkCommand(line string) string {
	if i := strings.Index(line, " #"); i >= 0 {
		line = line[:i]
	}
	words := strings.Fields(line)
	for len(words) > 0 && envPrefix.MatchString(words[0]) {
		words = words[1:]
	}
	if len(words) < 2 || words[0] != "go" || (words[1] != "test" && words[1] != "run") {
		return ""
	}
	cmd := strings.Join(words, " ")
	valued := map[string]bool{"-run": true, "-bench": true, "-benchtime": true, "-count": true, "-timeout": true,
		"-cpu": true, "-tags": true, "-o": true, "-coverprofile": true, "-p": true, "-parallel": true, "-skip": true}
	flags := map[string]string{}
	var pkgs []string
	for i := 2; i < len(words); i++ {
		w := words[i]
		if capsWord.MatchString(w) {
			return "" // a template: PKG, NAME
		}
		if !strings.HasPrefix(w, "-") {
			pkgs = append(pkgs, w)
			continue
		}
		name, val, hasVal := strings.Cut(w, "=")
		name = "-" + strings.TrimLeft(name, "-")
		if valued[name] && !hasVal && i+1 < len(words) {
			i++
			val = words[i]
			if capsWord.MatchString(val) {
				return ""
			}
		}
		flags[name] = strings.Trim(val, `"'`)
	}
	if words[1] == "run" {
		if len(pkgs) == 0 || !tr.exists(strings.TrimPrefix(pkgs[0], "./"), "") {
			return fmt.Sprintf("`%s`: nothing to run at %v", cmd, pkgs)
		}
		return ""
	}
	if len(pkgs) == 0 {
		pkgs = []string{"."}
	}
	var in []*pkg
	for _, arg := range pkgs {
		got := tr.packagesOf(arg)
		if len(got) == 0 {
			return fmt.Sprintf("`%s`: no package at %s", cmd, arg)
		}
		in = append(in, got...)
	}
	if b, ok := flags["-bench"]; ok {
		if !matchesAny(b, in, func(p *pkg) []string { return p.benches }) {
			return fmt.Sprintf("`%s`: -bench %s matches no benchmark in %s", cmd, b, strings.Join(pkgs, " "))
		}
		return ""
	}
	pattern := flags["-run"]
	if !matchesAny(pattern, in, func(p *pkg) []string { return p.tests }) {
		return fmt.Sprintf("`%s`: -run %q matches no test in %s", cmd, pattern, strings.Join(pkgs, " "))
	}
	return ""
}

// packagesOf resolves a package argument (., ./x, ./x/..., ./...) against the tree.
func (tr *tree) packagesOf(arg string) []*pkg {
	arg = strings.TrimSuffix(strings.TrimPrefix(arg, "./"), "/")
	if arg == "" {
		arg = "."
	}
	var out []*pkg
	if base, ok := strings.CutSuffix(arg, "..."); ok {
		base = strings.TrimSuffix(base, "/")
		for d, p := range tr.byDir {
			if base == "" || d == base || strings.HasPrefix(d, base+"/") {
				out = append(out, p)
			}
		}
		return out
	}
	if p := tr.byDir[filepath.Clean(arg)]; p != nil {
		out = append(out, p)
	}
	return out
}

// matchesAny is go test's rule for a pattern's first level: an empty
// pattern matches every name; there must be at least one name.
func matchesAny(pattern string, in []*pkg, names func(*pkg) []string) bool {
	first := strings.SplitN(pattern, "/", 2)[0]
	re, err := regexp.Compile(first)
	if err != nil {
		return false
	}
	for _, p := range in {
		for _, n := range names(p) {
			if re.MatchString(n) {
				return true
			}
		}
	}
	return false
}

// The check itself: stale citations of each kind are reported, live ones not.
func TestTheCheckTellsStaleFromLive(t *testing.T) {
	tr := loadTree(t, repoRoot(t))
	for _, tt := range []struct {
		span  string
		stale bool
	}{
		{"gpu.ReferenceScenario", true},
		{"des.Reference(sim.StreamRate, false)", false},
		{"placement.Policy", false},
		{"ledger.Ledger.NoSuchMethod", true},
		{"DESResult", true},
		{"HideLoadTimes", false},
		{"Scenario", false}, // one capital: may be a word, not checked
		{"TestLowerBoundHolds", false},
		{"TestNoSuchThing", true},
		{"gpu/reference_bench_test.go", true},
		{"gpu/des/reference_bench_test.go", false},
		{"go test -run xxx -bench BenchmarkReferenceFleet -benchtime 1x ./gpu/", true},
		{"go test -run xxx -bench BenchmarkReferenceFleet -benchtime 1x ./gpu/des/", false},
		{"go test -run TestLowerBoundHolds ./gpu/des/", false},
		{"go test -run TestLowerBoundHolds ./cli/", true},
		{"go test ./nowhere/", true},
		{"go test -run xxx -bench NAME -benchtime 1x PKG", false}, // a template
	} {
		got := tr.checkSpan(tt.span, "")
		if (len(got) > 0) != tt.stale {
			t.Errorf("`%s`: reported %q, want stale %v", tt.span, got, tt.stale)
		}
	}
}
