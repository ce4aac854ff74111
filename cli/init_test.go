package cli

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pitwall/config"
	"pitwall/edges/sim"
	"pitwall/gpu/chat"
	"pitwall/gpu/simspec"
)

func TestParamsBReadsTheSizeInAModelsName(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		want float64
	}{
		{"qwen3-8b", 8},
		{"llama-3.1-70b-instruct", 70},
		{"Qwen2.5-14B-Instruct-GGUF", 14},
		{"gemma3:12b", 12},
		{"qwen2.5:1.5b", 1.5},
		{"mixtral-8x7b", 56},
		{"smollm-360m", 0.36},
		{"meta-llama/Llama-3.3-70B-Instruct", 70},
		{"mistral-7b-instruct-v0.3-q4_k_m", 7},
		{"phi-4-mini", 0},
		{"gpt-4o", 0},
		{"model-bf16", 0},
		{"llama3.1", 0},
	}
	for _, tc := range cases {
		if got := paramsB(tc.name); got != tc.want {
			t.Errorf("paramsB(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSuggestJudgePicksTheLargestModelOfSeveral(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		servers []starterServer
		want    string // "" none
	}{
		{"largest by name", []starterServer{{Name: "a", Models: []string{"qwen3-8b", "llama-3.1-70b"}}, {Name: "b", Models: []string{"gemma3:12b"}}}, "llama-3.1-70b"},
		{"equal sizes by name", []starterServer{{Name: "a", Models: []string{"zeta-8b", "alpha-8b"}}}, "alpha-8b"},
		{"one model judges nothing", []starterServer{{Name: "a", Models: []string{"qwen3-8b"}}}, ""},
		{"the same model twice is one", []starterServer{{Name: "a", Models: []string{"qwen3-8b"}}, {Name: "b", Models: []string{"qwen3-8b"}}}, ""},
		{"no size in any name", []starterServer{{Name: "a", Models: []string{"gpt-4o", "phi-4-mini"}}}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := suggestJudge(tc.servers)
			got := ""
			if j != nil {
				got = j.Model
			}
			if got != tc.want {
				t.Errorf("judge %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNormaliseURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"127.0.0.1:1234":               "http://127.0.0.1:1234/v1",
		"http://gpu-box:8000":          "http://gpu-box:8000/v1",
		"https://api.example.com/v1/":  "https://api.example.com/v1",
		"http://127.0.0.1:8080/v1":     "http://127.0.0.1:8080/v1",
		"http://host:11434/custom/api": "http://host:11434/custom/api",
	} {
		if got, err := normaliseURL(in); err != nil || got != want {
			t.Errorf("normaliseURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := normaliseURL("http://"); err == nil {
		t.Error("normaliseURL(http://) gave no error")
	}
}

// fakeLocal is a simulated server as a user's machine would have it on a
// usual port, imitating the backend that listens there.
type fakeLocal struct {
	port    int
	backend chat.Kind
	models  []string
	slots   int
	srv     *sim.Server
}

// startLocals starts the fake local servers, on their usual ports when all
// are free; otherwise on free ports, and then scan is false: init must
// then be given them with --url, and must not probe the busy ports.
func startLocals(t *testing.T, locals []*fakeLocal) (scan bool) {
	t.Helper()
	scan = true
	for _, l := range locals {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", l.port))
		if err != nil {
			scan = false
			continue
		}
		ln.Close()
	}
	for _, l := range locals {
		addr := "127.0.0.1:0"
		if scan {
			addr = fmt.Sprintf("127.0.0.1:%d", l.port)
		}
		srv, err := sim.Start(sim.Config{Name: string(l.backend), Addr: addr, Slots: l.slots, Models: l.models,
			Spec: simspec.Server{Backend: string(l.backend)}, Instant: true, Seed: 7})
		if err != nil {
			t.Fatalf("starting a simulated %s: %v", l.backend, err)
		}
		t.Cleanup(func() { srv.Close() })
		l.srv = srv
	}
	return scan
}

// init against simulated LM Studio, Ollama, llama.cpp and vLLM servers on
// their usual ports writes a config with each server, its kind, its models
// as listed, its slots and a judge; validate accepts it and run completes.
func TestInitWritesAConfigFromTheServersItFinds(t *testing.T) {
	t.Parallel()
	locals := []*fakeLocal{
		{port: 1234, backend: chat.KindLMStudio, models: []string{"qwen3-8b", "llama-3.1-70b-instruct"}, slots: 2},
		{port: 11434, backend: chat.KindOllama, models: []string{"gemma3:12b", "nomic-embed-text"}, slots: 4},
		{port: 8080, backend: chat.KindLlamaCpp, models: []string{"phi-4-mini"}, slots: 3},
		{port: 8000, backend: chat.KindVLLM, models: []string{"mistral-7b"}, slots: 8},
	}
	scan := startLocals(t, locals)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "pitwall.toml")
	args := []string{"init", "-o", cfgPath}
	if !scan {
		t.Logf("a usual port is busy: probing the simulated servers by --url only")
		args = append(args, "--scan=false")
		for _, l := range locals {
			args = append(args, "--url", l.srv.URL())
		}
	}
	code, out, stderr := inproc(t, args...)
	if code != 0 {
		t.Fatalf("init: exit %d\n%s%s", code, out, stderr)
	}
	raw, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	t.Logf("init said:\n%s\nand wrote:\n%s", out, text)
	cfg, err := config.Load(cfgPath, config.Overrides{}, func(string) string { return "" })
	if err != nil {
		t.Fatalf("the written config does not load: %v\n%s", err, text)
	}
	byKind := map[chat.Kind]config.Server{}
	for _, s := range cfg.Servers {
		byKind[s.Kind] = s
	}
	for _, l := range locals {
		s, ok := byKind[l.backend]
		if !ok {
			t.Errorf("no %s server in the config:\n%s", l.backend, text)
			continue
		}
		if s.URL != strings.TrimRight(l.srv.URL(), "/") || s.Slots != l.slots {
			t.Errorf("%s: url %s, %d slots; want %s and the %d it reports", l.backend, s.URL, s.Slots, l.srv.URL(), l.slots)
		}
	}
	wantModels := []string{"qwen3-8b", "gemma3:12b", "phi-4-mini", "mistral-7b"} // the judge and the embedder left out
	for _, m := range wantModels {
		if !strings.Contains(strings.Join(cfg.Models, ","), m) {
			t.Errorf("models %v lack %q", cfg.Models, m)
		}
	}
	if len(cfg.Models) != len(wantModels) {
		t.Errorf("models %v, want %v", cfg.Models, wantModels)
	}
	if j := cfg.Scoring.Judges; len(j) != 1 || j[0].Model != "llama-3.1-70b-instruct" || j[0].Server != "lmstudio" {
		t.Errorf("judges %+v, want llama-3.1-70b-instruct on lmstudio (the largest by name)", j)
	}
	if !strings.Contains(text, "nomic-embed-text, left out") {
		t.Errorf("the config does not say the embedding model was left out:\n%s", text)
	}
	if _, err := os.Stat(filepath.Join(dir, "starter-battery.toml")); err != nil {
		t.Errorf("no starter battery beside the config: %v", err)
	}

	if code, out, stderr := inproc(t, "validate", cfgPath); code != 0 {
		t.Fatalf("validate: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = inproc(t, "run", cfgPath, "--headless", "--time-scale", "0", "--db", filepath.Join(dir, "ledger.db"))
	if (code != 0 && code != 1) || !strings.Contains(out, "completed") {
		t.Fatalf("run: exit %d, want a completed run\n%s%s", code, out, stderr)
	}

	// It never overwrites without --force.
	code, _, stderr = inproc(t, append(args, "--probe-timeout", "1s")...)
	if code != 2 || !strings.Contains(stderr, "--force") {
		t.Errorf("init again without --force: exit %d, %q; want 2 and a word on --force", code, stderr)
	}
	if now, _ := os.ReadFile(cfgPath); string(now) != text {
		t.Error("init without --force changed the config")
	}
}

// init against nothing writes a config that says so and runs on the
// simulator meanwhile: validate accepts it and says the server is
// simulated, and run completes.
func TestInitAgainstNothingWritesAConfigThatSaysSoAndRuns(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "pitwall.toml")
	battery := filepath.Join(dir, "starter-battery.toml")
	if err := os.WriteFile(battery, []byte("# mine\n[[tests]]\nid = \"mine\"\nuser = \"hi\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := inproc(t, "init", "--scan=false", "--url", closed, "-o", cfgPath)
	if code != 0 || !strings.Contains(out, "no server found") || !strings.Contains(out, "kept") {
		t.Fatalf("init: exit %d\n%s%s", code, out, stderr)
	}
	raw, _ := os.ReadFile(cfgPath)
	if !strings.Contains(string(raw), "NO SERVER WAS FOUND") || !strings.Contains(string(raw), "nothing answered on "+closed) {
		t.Errorf("the config does not say that nothing answered on %s:\n%s", closed, raw)
	}
	if mine, _ := os.ReadFile(battery); !strings.HasPrefix(string(mine), "# mine") {
		t.Error("init replaced an existing battery without --force")
	}
	code, out, stderr = inproc(t, "validate", cfgPath)
	if code != 0 || !strings.Contains(out, "simulated") {
		t.Fatalf("validate: exit %d\n%s%s", code, out, stderr)
	}
	code, _, stderr = inproc(t, "init", "--scan=false", "--url", closed, "-o", cfgPath, "--force")
	if code != 0 {
		t.Fatalf("init --force: exit %d: %s", code, stderr)
	}
	if now, _ := os.ReadFile(battery); strings.HasPrefix(string(now), "# mine") {
		t.Error("init --force kept the old battery")
	}
	code, out, stderr = inproc(t, "run", cfgPath, "--headless", "--time-scale", "0", "--db", filepath.Join(dir, "ledger.db"))
	if (code != 0 && code != 1) || !strings.Contains(out, "completed") {
		t.Fatalf("run: exit %d, want a completed run\n%s%s", code, out, stderr)
	}
}
