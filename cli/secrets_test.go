package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Credentials appear nowhere: a password in a server's and a judge's URL, a
// key in a URL's query, and the values of api_key_env are planted, a run is
// made, and every channel is searched: stdout and stderr of every command,
// the log file, the ledger's bytes, every export format, `servers --json`
// and `validate`.
func TestCredentialsAppearNowhere(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	simConf := writeFile(t, dir, "fleet.toml", `name = "fleet"
battery = "battery.toml"
models = ["m1"]
[[sim.models]]
name = "m1"
skill = 0.9
[[sim.models]]
name = "judge"
judge_error_rate = 0.0
[[servers]]
name = "gpu0"
kind = "sim"
slots = 4
models = ["m1", "judge"]
`)
	var battery strings.Builder
	for i := range 4 {
		fmt.Fprintf(&battery, "[[tests]]\nid = \"t%d\"\nuser = \"What is %d plus %d?\"\nreference = \"%d\"\n\n", i, i, i, 2*i)
	}
	writeFile(t, dir, "battery.toml", battery.String())
	fleet := startSimFleet(t, dir, simConf, "0")
	base := strings.TrimPrefix(fleet.urls["gpu0"], "http://")

	secrets := []string{"PW-s3cr3t-server", "JPW-s3cr3t-judge", "QK-s3cr3t-query", "KEY-s3cr3t-env", "JKEY-s3cr3t-env"}
	env := []string{"PW_TEST_KEY=" + secrets[3], "PW_JUDGE_KEY=" + secrets[4]}
	conf := writeFile(t, dir, "pitwall.toml", fmt.Sprintf(`name = "secrets"
battery = "battery.toml"
models = ["m1"]
[run]
timeout = "20s"
max_wait = "1s"
[[servers]]
name = "gpu0"
kind = "openai"
url = "http://alice:%s@%s"
api_key_env = "PW_TEST_KEY"
slots = 2
[[servers]]
name = "gone"
kind = "openai"
url = "http://127.0.0.1:1/v1?key=%s"
slots = 1
models = ["m1"]
[scoring]
mode = "judge"
[[scoring.judges]]
name = "j"
model = "judge"
url = "http://bob:%s@%s"
api_key_env = "PW_JUDGE_KEY"
`, secrets[0], base, secrets[2], secrets[1], base))
	db := filepath.Join(dir, "ledger.db")

	var outputs []string
	add := func(what string, code int, stdout, stderr string) {
		outputs = append(outputs, fmt.Sprintf("== %s (exit %d)\n%s\n%s", what, code, stdout, stderr))
	}
	code, stdout, stderr := pitwall(t, dir, env, "run", conf, "--headless", "--db", db)
	add("run", code, stdout, stderr)
	if code != 0 && code != 1 {
		t.Fatalf("run exit %d:\n%s", code, stderr)
	}
	for _, args := range [][]string{
		{"validate", conf, "--db", db},
		{"servers", conf},
		{"servers", conf, "--json"},
		{"runs", "--db", db},
		{"runs", "--db", db, "--json"},
		{"show", "last", "--headless", "--db", db},
	} {
		code, stdout, stderr := pitwall(t, dir, env, args...)
		add(strings.Join(args, " "), code, stdout, stderr)
	}
	for _, f := range []string{"json", "csv", "md", "html", "junit", "text"} {
		out := filepath.Join(dir, "export."+f)
		code, stdout, stderr := pitwall(t, dir, env, "export", "last", "--db", db, "--format", f, "-o", out)
		add("export "+f, code, stdout, stderr)
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatalf("export %s: %v (%s)", f, err, stderr)
		}
		outputs = append(outputs, "== export file "+f+"\n"+string(b))
	}
	// The ledger's bytes (and its WAL), and every log file pitwall wrote.
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := d.Name()
		if strings.HasPrefix(name, "ledger.db") || strings.HasSuffix(name, ".log") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			outputs = append(outputs, "== file "+path+"\n"+string(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	logs := 0
	for _, o := range outputs {
		if strings.HasPrefix(o, "== file ") && strings.Contains(o, ".log\n") {
			logs++
		}
	}
	if logs == 0 {
		t.Error("no log file was found to search")
	}
	for _, o := range outputs {
		for _, s := range secrets {
			if strings.Contains(o, s) {
				head, _, _ := strings.Cut(o, "\n")
				t.Errorf("%s shows the secret %q", head, s)
			}
		}
	}
}
