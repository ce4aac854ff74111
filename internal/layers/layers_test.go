package layers

import (
	"bytes"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "pitwall"

// touchSources stats every Go file of the module, so that go test's cache,
// which knows the files a test opens but not those its `go list` child reads,
// runs the test again after any change to them.
func touchSources(t *testing.T) {
	t.Helper()
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, ".go") {
			_, err = os.Stat(path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// goTool is the go command that runs this test (go test puts it on PATH).
func goTool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	return p
}

// deps lists what `go list -deps` says pkgs link (tests left out: a core
// package's tests may link an edge).
func deps(t *testing.T, pkgs ...string) map[string][]string {
	t.Helper()
	touchSources(t)
	out := map[string][]string{}
	for _, p := range pkgs {
		cmd := exec.Command(goTool(t), "list", "-deps", p)
		cmd.Dir = "../.."
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", p, err, stderr.String())
		}
		out[p] = strings.Fields(string(b))
	}
	return out
}

// corePackages is every package of the module that is neither cli, main,
// an edge nor a test-only package.
func corePackages(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command(goTool(t), "list", "./...")
	cmd.Dir = "../.."
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	var core []string
	for _, p := range strings.Fields(string(b)) {
		rel := strings.TrimPrefix(p, module+"/")
		top, _, _ := strings.Cut(rel, "/")
		if slices.Contains([]string{"config", "gpu", "judge", "runner", "ui"}, top) && !strings.HasPrefix(rel, "gpu/des") && !strings.HasPrefix(rel, "gpu/internal") {
			core = append(core, p)
		}
	}
	if len(core) < 10 {
		t.Fatalf("found only %d core packages: %v", len(core), core)
	}
	return core
}

func TestTheCoreImportsNoEdge(t *testing.T) {
	t.Parallel()
	core := corePackages(t)
	for pkg, ds := range deps(t, core...) {
		for _, d := range ds {
			if strings.HasPrefix(d, module+"/edges/") || d == module+"/cli" {
				t.Errorf("%s links %s: the core must not import an edge or cli (register the edge from cli/edges.go)", pkg, d)
			}
		}
	}
}

func TestNoPackageButMainImportsUI(t *testing.T) {
	t.Parallel()
	touchSources(t)
	cmd := exec.Command(goTool(t), "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...")
	cmd.Dir = "../.."
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] == module+"/cli" || f[0] == module+"/ui" {
			continue
		}
		if slices.Contains(f[1:], module+"/ui") {
			t.Errorf("%s imports ui; only cli may", f[0])
		}
	}
}

func TestUIAndConfigLinkOnlyWhatTheyMay(t *testing.T) {
	t.Parallel()
	forbidden := map[string][]string{
		"./ui": {"modernc.org/sqlite", "github.com/BurntSushi/toml", "gopkg.in/yaml.v3",
			"github.com/dop251/goja", "github.com/sashabaranov/go-openai", module + "/edges/"},
		"./config": {"gopkg.in/yaml.v3", "github.com/dop251/goja", module + "/runner",
			module + "/judge/qualify", module + "/edges/"},
	}
	// config may link the vocabulary of gpu and judge, nothing else of them.
	vocabulary := []string{module + "/gpu/chat", module + "/gpu/simspec", module + "/judge/check", module + "/judge/scoring"}
	pkgs := []string{"./ui", "./config"}
	all := deps(t, pkgs...)
	for _, p := range pkgs {
		for _, d := range all[p] {
			for _, bad := range forbidden[p] {
				if d == bad || strings.HasPrefix(d, bad) && (strings.HasSuffix(bad, "/") || strings.HasPrefix(d, bad+"/")) {
					t.Errorf("%s links %s", p, d)
				}
			}
			if p == "./config" && (strings.HasPrefix(d, module+"/gpu") || strings.HasPrefix(d, module+"/judge")) && !slices.Contains(vocabulary, d) {
				t.Errorf("config links %s; of gpu and judge it may link only the vocabulary %v", d, vocabulary)
			}
		}
	}
}

// The fleet stands on its client and its probes, never the other way: the
// client speaks to one server and the probe reads one, neither knowing of
// slots, placement or any other server; the probe knows nothing of the
// chat wire either.
func TestTheClientAndTheProbesKnowNoFleet(t *testing.T) {
	t.Parallel()
	rules := map[string][]string{
		"./gpu/client": {module + "/gpu", module + "/gpu/placement", module + "/gpu/des"},
		"./gpu/probe":  {module + "/gpu", module + "/gpu/placement", module + "/gpu/des", module + "/gpu/client", "github.com/sashabaranov/go-openai"},
	}
	pkgs := slices.Sorted(maps.Keys(rules))
	all := deps(t, pkgs...)
	for _, p := range pkgs {
		if !slices.Contains(all[p], module+"/gpu/chat") {
			t.Fatalf("%s does not link gpu/chat: is the package list right? %v", p, all[p])
		}
		for _, d := range all[p] {
			if slices.Contains(rules[p], d) {
				t.Errorf("%s links %s", p, d)
			}
		}
	}
}
