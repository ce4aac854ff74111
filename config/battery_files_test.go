package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// secret is what a file outside the battery's folder holds; no test's text
// may carry it.
const secret = "TOP SECRET outside the battery"

// hostileTree lays out dir/outside (a secret and scripts) beside
// dir/battery (the battery's folder, with its own files and two symlinks:
// one out, one in), and returns the battery's folder.
func hostileTree(t *testing.T, dir string) string {
	t.Helper()
	writeFile(t, dir, "outside/secret.txt", secret)
	writeFile(t, dir, "outside/check.js", "module.exports = () => true;")
	writeFile(t, dir, "outside/t.js", "module.exports = (o) => o;")
	bat := filepath.Join(dir, "battery")
	writeFile(t, bat, "inside.txt", "hello from inside")
	writeFile(t, bat, "sub/q.txt", "a question in a subfolder")
	writeFile(t, bat, "check.js", "module.exports = () => true;")
	if err := os.Symlink(filepath.Join(dir, "outside", "secret.txt"), filepath.Join(bat, "link-out.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("inside.txt", filepath.Join(bat, "link-in.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "outside"), filepath.Join(bat, "dir-out")); err != nil {
		t.Fatal(err)
	}
	return bat
}

// outsideErr finds the error at field of file that refuses ref and names
// the setting that would allow it.
func outsideErr(t *testing.T, err error, file, field, ref string) {
	t.Helper()
	if err == nil {
		t.Fatalf("file://%s at %s was read; want it refused", ref, field)
	}
	for _, e := range asErrors(err) {
		if e.File == file && e.Field == field && strings.Contains(e.Msg, "file://"+ref) &&
			strings.Contains(e.Msg, "outside the battery's folder") && strings.Contains(e.Msg, "allow_outside_files = true") {
			return
		}
	}
	t.Fatalf("no error at %s %s refusing file://%s and naming allow_outside_files; got:\n%v", file, field, ref, err)
}

func TestABatteryReadsNoFileOutsideItsFolder(t *testing.T) {
	dir := t.TempDir()
	bat := hostileTree(t, dir)
	abs := filepath.Join(dir, "outside", "secret.txt")
	cases := []struct{ name, ref string }{
		{"absolute", abs},
		{"etc passwd", "/etc/passwd"},
		{"dot dot", "../outside/secret.txt"},
		{"dot dot to the root", "../../../../../../../../../../etc/passwd"},
		{"down then out", "sub/../../outside/secret.txt"},
		{"home", "~/.ssh/id_ed25519"},
		{"percent-encoded dots", "%2e%2e/outside/secret.txt"},
		{"percent-encoded slash", "..%2foutside/secret.txt"},
		{"percent-encoded absolute", "%2fetc%2fpasswd"},
		{"percent-encoded twice", "%252e%252e/outside/secret.txt"},
		{"backslashes", `..\outside\secret.txt`},
		{"symlink out", "link-out.txt"},
		{"through a symlinked folder", "dir-out/secret.txt"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Run("vars", func(t *testing.T) {
				p := writeFile(t, bat, "pf.yaml", "prompts: [\"{{q}}\"]\ntests:\n  - metadata: {test_id: a}\n    vars: {q: 'file://"+tc.ref+"'}\n")
				tests, err := LoadBattery(p)
				noSecret(t, tests)
				outsideErr(t, err, p, "tests[0].vars.q", tc.ref)
			})
			t.Run("prompts", func(t *testing.T) {
				p := writeFile(t, bat, "pf.yaml", "prompts: ['file://"+tc.ref+"']\ntests:\n  - metadata: {test_id: a}\n")
				tests, err := LoadBattery(p)
				noSecret(t, tests)
				outsideErr(t, err, p, "prompts", tc.ref)
			})
			t.Run("defaultTest vars", func(t *testing.T) {
				p := writeFile(t, bat, "pf.yaml", "prompts: [\"{{q}}\"]\ndefaultTest: {vars: {q: 'file://"+tc.ref+"'}}\ntests:\n  - metadata: {test_id: a}\n")
				tests, err := LoadBattery(p)
				noSecret(t, tests)
				if err == nil {
					t.Fatalf("file://%s in defaultTest was read; want it refused", tc.ref)
				}
				if !strings.Contains(err.Error(), "allow_outside_files = true") {
					t.Fatalf("the refusal does not name allow_outside_files:\n%v", err)
				}
			})
		})
	}
}

func TestABatteryRunsNoScriptOutsideItsFolder(t *testing.T) {
	dir := t.TempDir()
	bat := hostileTree(t, dir)
	p := writeFile(t, bat, "pf.yaml", `prompts: ["hi"]
tests:
  - metadata: {test_id: a}
    assert:
      - type: javascript
        value: file://../outside/check.js
  - metadata: {test_id: b}
    options: {transform: "file://../outside/t.js"}
    assert: [{type: contains, value: x}]
  - metadata: {test_id: c}
    assert:
      - type: contains
        value: x
        transform: "file://../outside/t.js"
`)
	_, err := LoadBattery(p)
	outsideErr(t, err, p, "tests[0].assert[0].value", "../outside/check.js")
	outsideErr(t, err, p, "tests[1].options.transform", "../outside/t.js")
	outsideErr(t, err, p, "tests[2].assert[0].transform", "../outside/t.js")
}

func TestABatteryReadsTheFilesInItsFolder(t *testing.T) {
	dir := t.TempDir()
	bat := hostileTree(t, dir)
	for ref, want := range map[string]string{
		"inside.txt":        "hello from inside",
		"./inside.txt":      "hello from inside",
		"sub/q.txt":         "a question in a subfolder",
		"sub/../inside.txt": "hello from inside",
		"link-in.txt":       "hello from inside",
	} {
		p := writeFile(t, bat, "pf.yaml", "prompts: [\"{{q}}\"]\ntests:\n  - metadata: {test_id: a}\n    vars: {q: \"file://"+ref+"\"}\n    assert: [{type: javascript, value: file://check.js}]\n")
		tests, err := LoadBattery(p)
		if err != nil {
			t.Fatalf("file://%s: %v", ref, err)
		}
		if len(tests) != 1 || tests[0].User != want {
			t.Fatalf("file://%s: got %+v, want the prompt %q", ref, tests, want)
		}
	}
}

func TestAllowOutsideFilesLetsTheBatteryReadThem(t *testing.T) {
	dir := t.TempDir()
	bat := hostileTree(t, dir)
	writeFile(t, bat, "pf.yaml", "prompts: [\"{{q}}\"]\ntests:\n  - metadata: {test_id: a}\n    vars: {q: \"file://../outside/secret.txt\"}\n")
	body := "name = \"x\"\nbattery = \"battery/pf.yaml\"\nmodels = [\"m\"]\n%s[[servers]]\nname = \"s\"\nkind = \"sim\"\nmodels = [\"m\"]\n"
	cfg := writeFile(t, dir, "pitwall.toml", strings.Replace(body, "%s", "", 1))
	_, err := Load(cfg, Overrides{}, func(string) string { return "" })
	outsideErr(t, err, filepath.Join(bat, "pf.yaml"), "tests[0].vars.q", "../outside/secret.txt")

	writeFile(t, dir, "pitwall.toml", strings.Replace(body, "%s", "allow_outside_files = true\n", 1))
	c, err := Load(cfg, Overrides{}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Tests) != 1 || c.Tests[0].User != secret {
		t.Fatalf("with allow_outside_files the file is not read: %+v", c.Tests)
	}
}

func TestAJudgeBatteryReadsNoFileOutsideItsFolder(t *testing.T) {
	dir := t.TempDir()
	bat := hostileTree(t, dir)
	p := writeFile(t, bat, "judge.yaml", `prompts: ["{{output}}"]
providers: [echo]
tests:
  - vars: {expected_verdict: PASS, output: "file://../outside/secret.txt"}
    assert: [{type: llm-rubric, value: "is it right?"}]
`)
	_, _, err := loadJudgeBattery(p)
	outsideErr(t, err, p, "tests[0].vars.output", "../outside/secret.txt")
}

func noSecret(t *testing.T, tests []Test) {
	t.Helper()
	for _, tt := range tests {
		if strings.Contains(tt.User+tt.System, secret) {
			t.Fatalf("test %s carries the file outside the folder: %q", tt.ID, tt.User)
		}
		for _, m := range tt.Messages {
			if strings.Contains(m.Content, secret) {
				t.Fatalf("test %s carries the file outside the folder in a message", tt.ID)
			}
		}
	}
}
