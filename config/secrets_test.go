package config_test

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pitwall/config"
	"pitwall/gpu/chat"
	"pitwall/gpu/client"
	"pitwall/runner/ledger"
)

// Distinctive secrets, planted where a user might write them.
const (
	serverPassword = "SRVPW-planted-51d0"
	serverQueryKey = "SRVQK-planted-0c77"
	judgePassword  = "JDGPW-planted-93e1"
	judgeQueryKey  = "JDGQK-planted-7b2f"
	envKeyValue    = "sk-ENVVAL-planted-e4a8" // the value of the variable api_key_env names
	serverCode     = "SRVCODE-planted-a1f0"   // Azure Functions' ?code=, a name no list foresees
	judgePass      = "JDGPASS-planted-5c3e"   // a gateway's ?pass=
)

var planted = []string{serverPassword, serverQueryKey, judgePassword, judgeQueryKey, envKeyValue, serverCode, judgePass}

func leaked(t *testing.T, channel string, text []byte) {
	t.Helper()
	for _, s := range planted {
		if strings.Contains(string(text), s) {
			t.Errorf("%s holds the secret %q", channel, s)
		}
	}
}

// deadPort is a loopback address nothing listens on.
func deadPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

func secretConfig(t *testing.T, judgeAddr string) string {
	t.Helper()
	dir := t.TempDir()
	bat := filepath.Join(dir, "b.toml")
	if err := os.WriteFile(bat, []byte("[[tests]]\nid = \"t1\"\nuser = \"hi\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	body := `name = "secrets"
battery = "b.toml"
models = ["m"]

[[servers]]
name = "gpu1"
url = "http://bob:` + serverPassword + `@gpu1.example:8000/v1?key=` + serverQueryKey + `&api-version=2024-10-21&code=` + serverCode + `"
kind = "vllm"
models = ["m"]
api_key_env = "PLANTED_KEY"

[scoring]
mode = "judge"

[[scoring.judges]]
name = "hosted"
model = "judge-model"
url = "http://carol:` + judgePassword + `@` + judgeAddr + `/v1?api-key=` + judgeQueryKey + `&pass=` + judgePass + `"
api_key_env = "PLANTED_KEY"
`
	p := filepath.Join(dir, "pitwall.toml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func getenv(k string) string {
	if k == "PLANTED_KEY" {
		return envKeyValue
	}
	return ""
}

func TestSecretsStayOutOfTheConfigRecords(t *testing.T) {
	t.Parallel()
	c, err := config.Load(secretConfig(t, "judge.example:443"), config.Overrides{}, getenv)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	scoring, err := json.Marshal(c.Scoring.Redacted())
	if err != nil {
		t.Fatal(err)
	}
	for channel, text := range map[string]string{
		"RedactedJSON":          c.RedactedJSON(),
		"Scoring.Redacted JSON": string(scoring),
	} {
		leaked(t, channel, []byte(text))
		// A masked URL still says which server was meant.
		for _, host := range []string{"gpu1.example:8000/v1", "judge.example:443/v1"} {
			if channel == "RedactedJSON" && !strings.Contains(text, host) {
				t.Errorf("%s lost %s: %s", channel, host, text)
			}
		}
	}
	if !strings.Contains(string(scoring), "judge.example:443/v1") || !strings.Contains(string(scoring), `"api_key_env":"PLANTED_KEY"`) {
		t.Errorf("the scoring record lost the judge's host or its key's name: %s", scoring)
	}
	if c.Scoring.Judges[0].URL == c.Scoring.Redacted().Judges[0].URL {
		t.Error("Scoring.Redacted changed nothing")
	}
	if !strings.Contains(c.Scoring.Judges[0].URL, judgePassword) {
		t.Error("Scoring.Redacted masked the config's own judge URL, which the client needs")
	}
}

func TestValidationMessagesMaskURLCredentials(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, url, kind string }{
		{"a url that is not http", "ftp://bob:" + serverPassword + "@h/v1?key=" + serverQueryKey, "vllm"},
		{"a url that does not parse", "http://bob:" + serverPassword + "@h:port/v1?key=" + serverQueryKey, "vllm"},
		{"a url that does not parse, with ?code= and ?pass=", "http://bob:" + serverPassword + "@h:port/v1?code=" + serverCode + "&pass=" + judgePass, "vllm"},
		{"a sim url without a port", "http://bob:" + serverPassword + "@127.0.0.1/v1?key=" + serverQueryKey, "sim"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			_ = os.WriteFile(filepath.Join(dir, "b.toml"), []byte("[[tests]]\nid = \"t1\"\nuser = \"hi\"\n"), 0o644)
			p := filepath.Join(dir, "pitwall.toml")
			body := "battery = \"b.toml\"\nmodels = [\"m\"]\n[[servers]]\nname = \"s\"\nkind = \"" + tt.kind +
				"\"\nmodels = [\"m\"]\nurl = \"" + tt.url + "\"\n"
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := config.Load(p, config.Overrides{}, getenv)
			if err == nil || !strings.Contains(err.Error(), "servers[0].url") {
				t.Fatalf("want an error about servers[0].url, got %v", err)
			}
			leaked(t, "the validation error", []byte(err.Error()))
		})
	}
}

// TestSecretsStayOutOfTheLedger writes what a run records of a judge whose
// URL holds a password (the run record, and a judge request that failed
// against it with the client's own error) and greps the ledger's files.
func TestSecretsStayOutOfTheLedger(t *testing.T) {
	t.Parallel()
	c, err := config.Load(secretConfig(t, deadPort(t)), config.Overrides{}, getenv)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	j := c.Scoring.Judges[0]
	client := client.New(client.Config{Name: j.Name, URL: j.URL, APIKey: getenv(j.APIKeyEnv)}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, callErr := client.Chat(ctx, chat.Request{Model: j.Model, Messages: []chat.Message{{Role: "user", Content: "judge this"}}})
	if callErr == nil {
		t.Fatal("the judge call succeeded against a dead port")
	}

	dir := t.TempDir()
	l, err := ledger.Open(filepath.Join(dir, "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	scoring, _ := json.Marshal(c.Scoring.Redacted())
	run := ledger.RunRow{ID: "r-secrets", Name: c.Name, Status: "running", ScoringMode: string(c.Scoring.Mode),
		ConfigJSON: c.RedactedJSON(), ScoringJSON: string(scoring), Models: c.Models, Tests: []string{"t1"}, Repeat: 1,
		StartedAt: time.Now()}
	if err := l.CreateRun(run); err != nil {
		t.Fatal(err)
	}
	req := &ledger.Request{RunID: run.ID, Purpose: string(chat.PurposeJudge), Server: client.Server(), Model: j.Model,
		Test: "t1", Judge: j.Name, Attempt: 1, Input: `[{"role":"user","content":"judge this"}]`}
	if _, err := l.InsertRequest(req); err != nil {
		t.Fatal(err)
	}
	req.Status, req.ErrorClass, req.Error = ledger.StatusError, string(chat.ClassOf(callErr)), chat.MessageOf(callErr)
	if err := l.FinishRequest(req); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	files, _ := filepath.Glob(filepath.Join(dir, "ledger.db*"))
	var all []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		leaked(t, filepath.Base(f), b)
		all = append(all, b...)
	}
	// The grep must be able to fail: the records are there, masked.
	for _, want := range []string{"gpu1.example:8000", "REDACTED", "connection refused"} {
		if !strings.Contains(string(all), want) {
			t.Errorf("the ledger's files lack %q: the records were not written where the test looks", want)
		}
	}
}

func TestUnmaskedTakesJudgeCredentialsFromTheConfigAgain(t *testing.T) {
	t.Parallel()
	c, err := config.Load(secretConfig(t, "judge.example:443"), config.Overrides{}, getenv)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	stored := c.Scoring.Redacted()
	b, _ := json.Marshal(stored)
	var back config.Scoring
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	got, masked := back.Unmasked(c.Scoring)
	if got.Judges[0].URL != c.Scoring.Judges[0].URL || len(masked) != 0 {
		t.Errorf("Unmasked = %q (still masked: %v), want the config's url", got.Judges[0].URL, masked)
	}
	if back.Judges[0].URL != stored.Judges[0].URL {
		t.Error("Unmasked changed the scoring it was called on")
	}

	moved := c.Scoring
	moved.Judges = []config.Judge{c.Scoring.Judges[0]}
	moved.Judges[0].URL = "http://carol:" + judgePassword + "@elsewhere.example/v1"
	got, masked = back.Unmasked(moved)
	if len(masked) != 1 || masked[0] != "hosted" || strings.Contains(got.Judges[0].URL, judgePassword) {
		t.Errorf("a judge whose url changed: got %q, masked %v; want it left masked and named", got.Judges[0].URL, masked)
	}
}
