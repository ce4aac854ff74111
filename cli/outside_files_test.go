package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateRefusesABatteryNamingFilesOutsideItsFolder is issue 38's
// repro: a promptfoo battery whose prompts or vars name /etc/passwd (as an
// absolute path, through .., through a symlink) validated clean, and the
// file went to the server, the ledger and the exports. validate must exit
// 2 naming the battery file, the field, the path and the setting; a file
// in the battery's folder is still read, and allow_outside_files reads the
// others.
func TestValidateRefusesABatteryNamingFilesOutsideItsFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("outside/secret.txt", "not the battery's")
	write("bat/inside.txt", "What is 2+2?")
	if err := os.Symlink(filepath.Join(dir, "outside", "secret.txt"), filepath.Join(dir, "bat", "link.txt")); err != nil {
		t.Fatal(err)
	}
	const base = "name = \"x\"\nbattery = \"bat/pf.yaml\"\nmodels = [\"m\"]\n%s[[servers]]\nname = \"s\"\nkind = \"sim\"\nmodels = [\"m\"]\n"
	config := func(allow bool) {
		write("pitwall.toml", strings.Replace(base, "%s", map[bool]string{true: "allow_outside_files = true\n"}[allow], 1))
	}
	cases := []struct {
		name, battery string
		field, ref    string
	}{
		{"absolute prompt", "prompts: ['file:///etc/passwd']\ntests:\n  - metadata: {test_id: a}\n",
			"prompts", "/etc/passwd"},
		{"var through ..", "prompts: ['{{q}}']\ntests:\n  - metadata: {test_id: a}\n    vars: {q: 'file://../../../../../../../../../../etc/passwd'}\n",
			"tests[0].vars.q", "../../../../../../../../../../etc/passwd"},
		{"var through a symlink", "prompts: ['{{q}}']\ntests:\n  - metadata: {test_id: a}\n    vars: {q: 'file://link.txt'}\n",
			"tests[0].vars.q", "link.txt"},
		{"percent-encoded var", "prompts: ['{{q}}']\ntests:\n  - metadata: {test_id: a}\n    vars: {q: 'file://%2e%2e/outside/secret.txt'}\n",
			"tests[0].vars.q", "%2e%2e/outside/secret.txt"},
	}
	for _, tc := range cases {
		// One folder, one battery at a time: the cases run in turn.
		write("bat/pf.yaml", tc.battery)
		config(false)
		code, _, stderr := pitwall(t, dir, nil, "validate", "pitwall.toml")
		if code != 2 {
			t.Fatalf("%s: exit %d, want 2; stderr: %s", tc.name, code, stderr)
		}
		for _, w := range []string{filepath.Join("bat", "pf.yaml"), tc.field, "file://" + tc.ref, "outside the battery's folder", "allow_outside_files = true"} {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s: the message does not name %q:\n%s", tc.name, w, stderr)
			}
		}
		if tc.name != "percent-encoded var" { // a file named %2e%2e does not exist
			config(true)
			if code, _, stderr := pitwall(t, dir, nil, "validate", "pitwall.toml"); code != 0 {
				t.Errorf("%s with allow_outside_files: exit %d, want 0; stderr: %s", tc.name, code, stderr)
			}
		}
	}

	write("bat/pf.yaml", "prompts: ['{{q}}']\ntests:\n  - metadata: {test_id: a}\n    vars: {q: 'file://inside.txt'}\n")
	config(false)
	if code, stdout, stderr := pitwall(t, dir, nil, "validate", "pitwall.toml"); code != 0 || !strings.Contains(stdout, "1 test") {
		t.Fatalf("a file in the battery's folder: exit %d, want 0 and the test; stdout: %s stderr: %s", code, stdout, stderr)
	}
}
