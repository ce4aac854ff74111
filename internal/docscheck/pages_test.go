package docscheck

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pitwall/cli"
	"pitwall/config"
	"pitwall/judge/check"
)

// TestDocsPagesNameOnlyWhatExists reads README.md, CONTRIBUTING.md and
// docs/*.md, and reports, as file:line, what they name that the code does
// not have:
//
//   - `pitwall CMD …` opening a backticked span or a fenced line: CMD must
//     be a command, and each --flag after it one of CMD's (as its --help
//     lists); in docs/cli.md a backticked `--flag` alone must be some
//     command's flag (elsewhere it may be another tool's).
//   - docs/cli.md's flag table: each row's flag must be a flag of every
//     command its second column names, and every command's every flag must
//     have a row naming that command.
//   - PITWALL_… anywhere: a variable some Go file, script or .ci/run reads.
//   - `make TARGET…`: a target of the Makefile.
//   - [text](link) to a file: the file exists; with #anchor, a heading of it.
//   - docs/checks.md's check table: every row a check type, every base type
//     a row.
//   - docs/config.md's key tables: every row a key (a path of toml tags from
//     config.Config), every key that holds a value a row.
//   - docs/cli.md's key table: every key a string the ui code binds.
func TestDocsPagesNameOnlyWhatExists(t *testing.T) {
	root := repoRoot(t)
	f := loadFacts(t, root)
	for _, p := range pages(root) {
		for _, e := range f.checkPage(p) {
			t.Error(e)
		}
	}
	for _, e := range f.checkTables(root) {
		t.Error(e)
	}
}

// pages are the Markdown files the checks read.
func pages(root string) []string {
	out := []string{filepath.Join(root, "README.md")}
	if _, err := os.Stat(filepath.Join(root, "CONTRIBUTING.md")); err == nil {
		out = append(out, filepath.Join(root, "CONTRIBUTING.md"))
	}
	md, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	return append(out, md...)
}

// facts are what the code has, for the pages to be checked against.
type facts struct {
	root    string
	flags   map[string]map[string]bool // command -> its flags, without dashes
	env     map[string]bool            // PITWALL_* names some code or script reads
	targets map[string]bool            // the Makefile's targets
	uiWords map[string]bool            // every string literal ui's code passes to a call
}

func loadFacts(t *testing.T, root string) *facts {
	t.Helper()
	return &facts{root: root, flags: commands(t), env: envNames(t, root), targets: makeTargets(root), uiWords: uiStrings(t, root)}
}

var (
	usageCmd  = regexp.MustCompile(`^\s+pitwall (\w+(?: copy)?)\b`)
	helpFlag  = regexp.MustCompile(`^\s+-([\w-]+)`)
	pitwallAt = regexp.MustCompile(`^pitwall (\w+)((?: copy)?)(.*)`)
	flagWord  = regexp.MustCompile(`(?:^|\s)(--?[a-z][\w-]*)`)
	envWord   = regexp.MustCompile(`\bPITWALL_[A-Z0-9_]+\b`)
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	makeCmd   = regexp.MustCompile("(?:^|`|\\s)make ((?:[a-z][\\w-]*\\s*)+)")
	tableRow  = regexp.MustCompile(`^\|\s*([^|]*?)\s*\|\s*([^|]*?)\s*\|`)
)

// commands asks cli for its usage and each command's --help.
func commands(t *testing.T) map[string]map[string]bool {
	t.Helper()
	var out, errb bytes.Buffer
	cli.Main([]string{"help"}, strings.NewReader(""), &out, &errb)
	cmds := map[string]map[string]bool{}
	for _, line := range strings.Split(out.String(), "\n") {
		if m := usageCmd.FindStringSubmatch(line); m != nil {
			cmds[m[1]] = map[string]bool{}
		}
	}
	if len(cmds) < 10 {
		t.Fatalf("cli's usage lists only %d commands:\n%s", len(cmds), out.String())
	}
	for c := range cmds {
		var o, e bytes.Buffer
		cli.Main(append(strings.Fields(c), "--help"), strings.NewReader(""), &o, &e)
		cmds[c]["help"], cmds[c]["h"] = true, true
		for _, line := range strings.Split(o.String()+e.String(), "\n") {
			if m := helpFlag.FindStringSubmatch(line); m != nil {
				cmds[c][m[1]] = true
			}
		}
	}
	return cmds
}

// envNames are the PITWALL_ names in the module's Go files, scripts and CI.
func envNames(t *testing.T, root string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (n == ".git" || n == "node_modules" || n == "docs" || n == "shared") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		if !strings.HasSuffix(path, ".go") && !strings.HasPrefix(rel, "scripts/") && rel != ".ci/run" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, n := range envWord.FindAllString(string(b), -1) {
			names[n] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func makeTargets(root string) map[string]bool {
	targets := map[string]bool{}
	b, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		return targets
	}
	rule := regexp.MustCompile(`(?m)^([a-z][\w-]*(?:\s+[a-z][\w-]*)*)\s*:([^=]|$)`)
	for _, m := range rule.FindAllStringSubmatch(string(b), -1) {
		for _, n := range strings.Fields(m[1]) {
			targets[n] = true
		}
	}
	return targets
}

// uiStrings are the string literals the production code of ui and its
// subpackages passes to calls:
// the keys its bindings name and the words its help shows for them.
func uiStrings(t *testing.T, root string) map[string]bool {
	t.Helper()
	words := map[string]bool{}
	var files []string
	err := filepath.WalkDir(filepath.Join(root, "ui"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, p := range files {
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				for _, a := range c.Args {
					if l, ok := a.(*ast.BasicLit); ok && l.Kind == token.STRING {
						if s, err := strconv.Unquote(l.Value); err == nil {
							words[s] = true
						}
					}
				}
			}
			return true
		})
	}
	return words
}

// checkPage checks one page's commands, flags, variables, targets and links.
func (f *facts) checkPage(path string) []string {
	rel, _ := filepath.Rel(f.root, path)
	b, err := os.ReadFile(path)
	if err != nil {
		return []string{err.Error()}
	}
	var errs []string
	fenced := false
	for i, line := range strings.Split(string(b), "\n") {
		at := fmt.Sprintf("%s:%d: ", rel, i+1)
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		for _, n := range envWord.FindAllString(line, -1) {
			if !f.env[n] {
				errs = append(errs, at+n+": no code, script or CI reads this variable")
			}
		}
		var commands []string
		if fenced {
			commands = []string{strings.TrimPrefix(strings.TrimSpace(line), "$ ")}
		} else {
			for _, m := range span.FindAllStringSubmatch(line, -1) {
				commands = append(commands, m[1])
				if s := strings.TrimSpace(m[1]); rel == "docs/cli.md" && strings.HasPrefix(s, "--") && !strings.Contains(s, " ") {
					if msg := f.anyFlag(s); msg != "" {
						errs = append(errs, at+msg)
					}
				}
			}
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				if msg := f.checkLink(path, m[1]); msg != "" {
					errs = append(errs, at+msg)
				}
			}
		}
		for _, c := range commands {
			for _, msg := range f.checkCommandLine(c) {
				errs = append(errs, at+msg)
			}
		}
	}
	return errs
}

// checkCommandLine checks the pitwall and make commands in one span or line.
func (f *facts) checkCommandLine(s string) []string {
	var msgs []string
	if i := strings.Index(s, " #"); i >= 0 {
		s = s[:i]
	}
	for _, m := range makeCmd.FindAllStringSubmatch(s, -1) {
		for _, target := range strings.Fields(m[1]) {
			if !f.targets[target] {
				msgs = append(msgs, fmt.Sprintf("make %s: the Makefile has no target %s", target, target))
			}
		}
	}
	for _, m := range pitwallAt.FindAllStringSubmatch(strings.TrimSpace(s), -1) {
		cmd := m[1] + m[2]
		flags, ok := f.flags[cmd]
		if !ok {
			msgs = append(msgs, fmt.Sprintf("pitwall %s: no such command", cmd))
			continue
		}
		for _, fm := range flagWord.FindAllStringSubmatch(m[3], -1) {
			name, _, _ := strings.Cut(strings.TrimLeft(fm[1], "-"), "=")
			if !flags[name] {
				msgs = append(msgs, fmt.Sprintf("pitwall %s %s: %s has no such flag", cmd, fm[1], cmd))
			}
		}
	}
	return msgs
}

func (f *facts) anyFlag(s string) string {
	name, _, _ := strings.Cut(strings.TrimLeft(strings.Fields(s)[0], "-"), "=")
	for _, flags := range f.flags {
		if flags[name] {
			return ""
		}
	}
	return fmt.Sprintf("`%s`: no command has this flag", s)
}

// checkLink checks a relative link from page: the file, and the heading an anchor names.
func (f *facts) checkLink(page, link string) string {
	if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
		return ""
	}
	file, anchor, _ := strings.Cut(link, "#")
	target := page
	if file != "" {
		target = filepath.Join(filepath.Dir(page), file)
	}
	if _, err := os.Stat(target); err != nil {
		return fmt.Sprintf("(%s): no such file", link)
	}
	if anchor == "" {
		return ""
	}
	b, err := os.ReadFile(target)
	if err != nil {
		return err.Error()
	}
	if !slices.Contains(anchors(string(b)), anchor) {
		return fmt.Sprintf("(%s): %s has no heading for #%s", link, filepath.Base(target), anchor)
	}
	return ""
}

// anchors are the ids GitHub gives a page's headings.
func anchors(md string) []string {
	var out []string
	fenced := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		var b strings.Builder
		for _, r := range h {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}

// rows are the table rows of a page's section (the heading's text, "" for
// the whole page): the first two cells of each.
func rows(t string, section string) [][2]string {
	var out [][2]string
	in := section == ""
	for _, line := range strings.Split(t, "\n") {
		if strings.HasPrefix(line, "## ") {
			in = section == "" || strings.TrimPrefix(line, "## ") == section
		}
		if !in {
			continue
		}
		if m := tableRow.FindStringSubmatch(line); m != nil && !strings.HasPrefix(m[1], "---") {
			out = append(out, [2]string{m[1], m[2]})
		}
	}
	return out
}

func backticked(cell string) []string {
	var out []string
	for _, m := range span.FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1])
	}
	return out
}

// checkTables checks the reference tables against the code, both ways.
func (f *facts) checkTables(root string) []string {
	var errs []string
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(root, "docs", name))
		if err != nil {
			errs = append(errs, err.Error())
		}
		return string(b)
	}

	// The flag table: each row true, and every flag of every command in it.
	listed := map[string]map[string]bool{}
	for _, r := range rows(read("cli.md"), "Flags") {
		fl := backticked(r[0])
		if len(fl) == 0 {
			continue
		}
		name := strings.TrimLeft(strings.Fields(fl[0])[0], "-")
		for _, c := range strings.Split(r[1], ",") {
			c = strings.TrimSpace(c)
			if f.flags[c] == nil {
				errs = append(errs, fmt.Sprintf("docs/cli.md: the row of --%s names %q, which is no command", name, c))
				continue
			}
			if !f.flags[c][name] {
				errs = append(errs, fmt.Sprintf("docs/cli.md: the row of --%s names %s, which has no such flag", name, c))
			}
			if listed[c] == nil {
				listed[c] = map[string]bool{}
			}
			listed[c][name] = true
		}
	}
	for c, flags := range f.flags {
		for name := range flags {
			if name != "help" && name != "h" && !listed[c][name] {
				errs = append(errs, fmt.Sprintf("docs/cli.md: no row of the flag table gives %s's flag --%s", c, name))
			}
		}
	}

	// The keys: each a string the ui binds.
	for _, r := range rows(read("cli.md"), "Keys") {
		for _, k := range backticked(r[0]) {
			if !f.uiWords[k] {
				errs = append(errs, fmt.Sprintf("docs/cli.md: key `%s`: the ui binds no such key", k))
			}
		}
	}

	// The checks: each row a type, each base type a row.
	valid := check.ValidCheckTypes()
	documented := map[string]bool{}
	for _, r := range rows(read("checks.md"), "Checks") {
		for _, c := range backticked(r[0]) {
			documented[c] = true
			if !slices.Contains(valid, c) {
				errs = append(errs, fmt.Sprintf("docs/checks.md: `%s` is no check type", c))
			}
		}
	}
	for _, c := range valid {
		if !strings.HasPrefix(c, "not-") && !documented[c] {
			errs = append(errs, fmt.Sprintf("docs/checks.md: check type %s has no row", c))
		}
	}

	// The config keys: each row a key, each key holding a value a row.
	keys := map[string]bool{}
	configKeys(reflect.TypeOf(config.Config{}), "", keys)
	seen := map[string]bool{}
	for _, r := range rows(read("config.md"), "") {
		for _, k := range backticked(r[0]) {
			seen[k] = true
			if _, ok := keys[k]; !ok {
				errs = append(errs, fmt.Sprintf("docs/config.md: `%s` is no config key", k))
			}
		}
	}
	for k, leaf := range keys {
		if leaf && !seen[k] {
			errs = append(errs, fmt.Sprintf("docs/config.md: config key %s has no row", k))
		}
	}
	return errs
}

// configKeys walks t's toml tags: each key as a dotted path, true where it
// holds a value rather than a table.
func configKeys(t reflect.Type, prefix string, out map[string]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() == reflect.Map && t.Elem().Kind() == reflect.Struct {
		prefix += ".MODEL"
		out[prefix] = false // a table whose keys are names (models)
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t.PkgPath() == "time" {
		return
	}
	for i := 0; i < t.NumField(); i++ {
		fd := t.Field(i)
		tag, _, _ := strings.Cut(fd.Tag.Get("toml"), ",")
		if tag == "" || tag == "-" {
			continue
		}
		p := strings.TrimPrefix(prefix+"."+tag, ".")
		ft := fd.Type
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		table := ft.Kind() == reflect.Struct && ft.PkgPath() != "time" || ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct
		out[p] = !table
		configKeys(fd.Type, p, out)
	}
}

// The checks of the pages: what is stale is reported, what is live not.
func TestThePageChecksTellStaleFromLive(t *testing.T) {
	root := repoRoot(t)
	f := loadFacts(t, root)
	f.targets = map[string]bool{"test": true}
	for _, tt := range []struct {
		line  string
		stale bool
	}{
		{"pitwall run examples/demo.toml --headless", false},
		{"pitwall run --no-such-flag", true},
		{"pitwall rejudge last --only failed --yes", false},
		{"pitwall runs --yes", true},
		{"pitwall ledger copy a b", false},
		{"pitwall ledger move a b", true},
		{"pitwall frobnicate", true},
		{"make test", false},
		{"make nothing", true},
		{"pitwall run  # --not-checked, a comment", false},
	} {
		got := f.checkCommandLine(tt.line)
		if (len(got) > 0) != tt.stale {
			t.Errorf("%q: reported %q, want stale %v", tt.line, got, tt.stale)
		}
	}
	if f.anyFlag("--headless") != "" || f.anyFlag("--no-such-flag") == "" {
		t.Error("anyFlag does not tell --headless from --no-such-flag")
	}
	readme := filepath.Join(root, "README.md")
	for link, stale := range map[string]bool{
		"docs/cli.md": false, "docs/cli.md#exit-codes": false, "docs/cli.md#no-such-heading": true,
		"docs/nowhere.md": true, "https://example.com/x": false,
	} {
		if got := f.checkLink(readme, link); (got != "") != stale {
			t.Errorf("link %s: reported %q, want stale %v", link, got, stale)
		}
	}
	if !f.env["PITWALL_DB"] || f.env["PITWALL_NO_SUCH_"+"VARIABLE"] {
		t.Error("the variables read are not what the code reads")
	}
	keys := map[string]bool{}
	configKeys(reflect.TypeOf(config.Config{}), "", keys)
	for k, want := range map[string]bool{"run.timeout": true, "scoring.judges.model": true, "prices.MODEL.price_in": true, "run.timeout.seconds": false} {
		if _, ok := keys[k]; ok != want {
			t.Errorf("config key %s: found %v, want %v", k, ok, want)
		}
	}
}
