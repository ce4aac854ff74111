package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

	secrets := []string{"PW-s3cr3t-server", "JPW-s3cr3t-judge", "QK-s3cr3t-query", "KEY-s3cr3t-env", "JKEY-s3cr3t-env",
		"CODE-s3cr3t-azfn", "PASS-s3cr3t-gw", "JCODE-s3cr3t-judge"}
	// Keys under names no list foresees (Azure Functions' ?code=, a
	// gateway's ?pass=) beside api-version, the one that is shown.
	query := fmt.Sprintf("?api-version=2024-10-21&code=%s&pass=%s", secrets[5], secrets[6])
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
url = "http://alice:%s@%s%s"
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
url = "http://bob:%s@%s?code=%s"
api_key_env = "PW_JUDGE_KEY"
`, secrets[0], base, query, secrets[2], secrets[1], base, secrets[7]))
	// A judge qualification on the same servers: validate and qualify
	// describe its servers as validate does a config's.
	judgeBattery, err := filepath.Abs("../examples/judge-battery.toml")
	if err != nil {
		t.Fatal(err)
	}
	qconf := writeFile(t, dir, "qualify.toml", fmt.Sprintf(`name = "secrets-qualify"
battery = %q
[run]
timeout = "20s"
[[servers]]
name = "gpu0"
kind = "openai"
url = "http://alice:%s@%s%s"
api_key_env = "PW_TEST_KEY"
slots = 2
models = ["judge"]
[scoring]
[[scoring.judges]]
name = "j"
model = "judge"
server = "gpu0"
`, judgeBattery, secrets[0], base, query))
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
	for _, d := range []string{"init", "init2"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"validate", conf, "--db", db},
		{"validate", qconf, "--db", db},
		{"rejudge", "last", "--headless", "--yes", "--db", db},
		{"resume", "last", "--headless", "--db", db},
		{"qualify", qconf, "--yes", "--db", db},
		{"init", "--scan=false", "--url", fmt.Sprintf("http://alice:%s@%s%s", secrets[0], base, query), "-o", filepath.Join(dir, "init", "pitwall.toml")},
		{"init", "--scan=false", "--url", fmt.Sprintf("http://alice:%s@127.0.0.1:1/v1%s", secrets[0], query), "-o", filepath.Join(dir, "init2", "pitwall.toml")},
		{"servers", conf},
		{"servers", conf, "--json"},
		{"runs", "--db", db},
		{"runs", "--db", db, "--json"},
		{"show", "last", "--headless", "--db", db},
	} {
		code, stdout, stderr := pitwall(t, dir, env, args...)
		label := slices.Clone(args)
		for i, a := range label {
			if strings.Contains(a, "://") {
				label[i] = "URL" // the header must not hold the secrets it reports
			}
		}
		add(strings.Join(label, " "), code, stdout, stderr)
		t.Logf("%s: exit %d\n%s%s", strings.Join(label, " "), code, stdout, stderr)
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
	err = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
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
	// The grep must be able to fail: the servers were described, with the
	// allowed api-version kept and the rest masked.
	all := strings.Join(outputs, "\n")
	for _, want := range []string{"api-version=2024-10-21&code=REDACTED&pass=REDACTED", "REDACTED@"} {
		if !strings.Contains(all, want) {
			t.Errorf("no output holds %q: the URLs were not printed where the test looks", want)
		}
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
