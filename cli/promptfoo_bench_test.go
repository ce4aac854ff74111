package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkAgainstPromptfoo runs one promptfoo YAML (tests × models, each
// cell graded by an llm-rubric assertion whose grader is a model on the
// same endpoint) through `promptfoo eval` and through the built `pitwall
// run --headless`, in interleaved pairs, against a fixed-output
// OpenAI-compatible server in this process, and compares the CPU time
// (user + system, from wait4) of each tool's own process per judged cell:
//
//	x-cpu             promptfoo's CPU per cell over pitwall's (median of the pairs' ratios)
//	pitwall-µs/cell   pitwall's CPU per cell (median)
//	promptfoo-µs/cell promptfoo's (node's) CPU per cell (median)
//
// The server gives every model the same reply, so a test's judge prompts
// are all alike and pitwall sends one of them, answering the others from
// its judge cache (promptfoo runs with --no-cache and sends each).
// PITWALL_PROMPTFOO_DISTINCT=1 has each model's reply name the model, so
// that every judge prompt differs and both tools send every one.
//
// It needs promptfoo as scripts/install-promptfoo.sh installs it, under
// $PITWALL_PROMPTFOO_DIR; PITWALL_PROMPTFOO_CELLS sets the cells (default
// 2,000) and -benchtime Nx the pairs. It fails when promptfoo's CPU per
// cell is less than guardVsPromptfoo times pitwall's (the median pair):
//
//	PITWALL_PROMPTFOO_DIR=~/.cache/pitwall/promptfoo go test -run '^$' -bench AgainstPromptfoo -benchtime 7x -timeout 30m ./cli/
func BenchmarkAgainstPromptfoo(b *testing.B) {
	dir := os.Getenv("PITWALL_PROMPTFOO_DIR")
	if dir == "" {
		b.Skip("PITWALL_PROMPTFOO_DIR names promptfoo's install (scripts/install-promptfoo.sh)")
	}
	pf := filepath.Join(dir, "bin", "promptfoo")
	if _, err := os.Stat(pf); err != nil {
		b.Skipf("no promptfoo at %s (scripts/install-promptfoo.sh installs it): %v", pf, err)
	}
	cells := 2000
	if s := os.Getenv("PITWALL_PROMPTFOO_CELLS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 10 {
			b.Fatalf("PITWALL_PROMPTFOO_CELLS=%q: want a number of cells, at least 10", s)
		}
		cells = n
	}
	const models = 10
	tests := cells / models
	handler := fixedChat
	if os.Getenv("PITWALL_PROMPTFOO_DISTINCT") == "1" {
		handler = distinctChat
	}
	srv := httptest.NewServer(http.HandlerFunc(handler))
	defer srv.Close()
	work := b.TempDir()
	battery := filepath.Join(work, "battery.yaml")
	if err := os.WriteFile(battery, []byte(pfBenchYAML(srv.URL, tests, models)), 0o644); err != nil {
		b.Fatal(err)
	}
	// pitwall's config: the YAML's models on the same server, its grader
	// as the judge, as many requests at once as promptfoo's -j.
	names := make([]string, models)
	for m := range names {
		names[m] = fmt.Sprintf("%q", fmt.Sprintf("m%02d", m))
	}
	list := strings.Join(names, ", ")
	toml := fmt.Sprintf("name = \"against-promptfoo\"\nbattery = \"battery.yaml\"\nmodels = [%s]\n[run]\ntimeout = \"60s\"\nretries = 0\n"+
		"[[servers]]\nname = \"fixed\"\nkind = \"openai\"\nurl = %q\nslots = %d\nmodels = [%s, \"judge\"]\n"+
		"[scoring]\nmode = \"judge\"\n[[scoring.judges]]\nname = \"j\"\nmodel = \"judge\"\nserver = \"fixed\"\n",
		list, srv.URL+"/v1", pfBenchConcurrency, list)
	cfg := filepath.Join(work, "pitwall.toml")
	if err := os.WriteFile(cfg, []byte(toml), 0o644); err != nil {
		b.Fatal(err)
	}
	var ratios, ours, theirs []float64
	for i := 0; b.Loop(); i++ {
		// The order alternates, so that neither tool always runs on a
		// machine the other has just warmed (or loaded).
		var pw, node time.Duration
		for k := range 2 {
			if (i+k)%2 == 0 {
				pw = pfBenchPitwall(b, work, cfg, i, tests*models)
			} else {
				node = pfBenchPromptfoo(b, work, pf, battery, tests*models)
			}
		}
		n := float64(tests * models)
		ours = append(ours, float64(pw.Microseconds())/n)
		theirs = append(theirs, float64(node.Microseconds())/n)
		ratios = append(ratios, float64(node)/float64(pw))
	}
	b.Logf("figures: %.2f x-cpu %.1f pitwall-µs/cell %.1f promptfoo-µs/cell", median(ratios), median(ours), median(theirs))
	guard(b, atLeast("x-cpu", median(ratios), guardVsPromptfoo))
	b.ReportMetric(median(ratios), "x-cpu")
	b.ReportMetric(median(ours), "pitwall-µs/cell")
	b.ReportMetric(median(theirs), "promptfoo-µs/cell")
	b.Logf("%d cells, %d pairs: x-cpu %s; pitwall µs/cell %s; promptfoo µs/cell %s", tests*models, len(ratios),
		spread(ratios), spread(ours), spread(theirs))
}

// pfBenchConcurrency is the requests each tool has in flight at once.
const pfBenchConcurrency = 16

// pfBenchYAML is a promptfoo config of tests × models on baseURL, each
// test graded by an llm-rubric assertion whose grader is the model
// "judge" on the same endpoint.
func pfBenchYAML(baseURL string, tests, models int) string {
	var b strings.Builder
	b.WriteString("description: pitwall against promptfoo\nprompts:\n  - \"{{q}}\"\nproviders:\n")
	for m := range models {
		fmt.Fprintf(&b, "  - id: openai:chat:m%02d\n    config:\n      apiBaseUrl: %s/v1\n      apiKey: bench\n      temperature: 0\n", m, baseURL)
	}
	fmt.Fprintf(&b, "defaultTest:\n  options:\n    provider:\n      id: openai:chat:judge\n      config:\n        apiBaseUrl: %s/v1\n        apiKey: bench\n        temperature: 0\n", baseURL)
	b.WriteString("tests:\n")
	for t := range tests {
		fmt.Fprintf(&b, "  - description: t%04d\n    vars:\n      q: \"What is %d plus %d? Answer with the number.\"\n    assert:\n      - type: llm-rubric\n        value: \"The answer is %d, stated plainly.\"\n",
			t, t, t, 2*t)
	}
	return b.String()
}

// fixedChat answers every chat request at once with the same reply: a
// grader (the model "judge") a JSON verdict both tools read, any other
// model a short answer; streamed when asked.
func fixedChat(w http.ResponseWriter, r *http.Request) { chatReply(w, r, false) }

// distinctChat is fixedChat with each model's reply naming the model.
func distinctChat(w http.ResponseWriter, r *http.Request) { chatReply(w, r, true) }

func chatReply(w http.ResponseWriter, r *http.Request, distinct bool) {
	if strings.HasSuffix(r.URL.Path, "/models") {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[{"id":"judge","object":"model","owned_by":"bench"}]}`)
		return
	}
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	content := "Adding the two numbers gives the sum. The answer is the number asked for, stated plainly, with nothing else to add beyond this one sentence."
	if req.Model == "judge" {
		content = `{"reason": "The output states the sum plainly.", "pass": true, "score": 1.0}`
	} else if distinct {
		content += " (" + req.Model + ")"
	}
	usage := map[string]any{"prompt_tokens": 40, "completion_tokens": 30, "total_tokens": 70}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-bench", "object": "chat.completion", "created": 1, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": content}, "finish_reason": "stop"}},
			"usage":   usage,
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish, usage any) {
		data, _ := json.Marshal(map[string]any{"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}, "usage": usage})
		fmt.Fprintf(w, "data: %s\n\n", data)
	}
	chunk(map[string]any{"role": "assistant", "content": content}, nil, nil)
	chunk(map[string]any{}, "stop", usage)
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// pfBenchPitwall runs the config through pitwall into a ledger of its own
// and returns its process's CPU time, after checking that every cell was
// judged.
func pfBenchPitwall(b *testing.B, work, cfg string, i, cells int) time.Duration {
	db := filepath.Join(work, fmt.Sprintf("ledger-%d.db", i))
	cmd := exec.Command(underTest(), "run", cfg, "--headless", "--db", db)
	cmd.Dir = work
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() > 1) {
		b.Fatalf("pitwall run: %v\n%s", err, tail(stderr.String(), 2000))
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if judged, _ := binBenchLedger(b, db, cells); judged != int64(cells) {
		b.Fatalf("pitwall judged %d of %d cells\n%s", judged, cells, tail(stderr.String(), 2000))
	}
	for _, p := range []string{db, db + "-wal", db + "-shm"} {
		os.Remove(p)
	}
	return cpu
}

// pfBenchPromptfoo runs the config through promptfoo eval (its cache and
// its database off, as pitwall's run asks every request afresh) and
// returns node's CPU time, after checking that every cell was graded.
func pfBenchPromptfoo(b *testing.B, work, pf, cfg string, cells int) time.Duration {
	out := filepath.Join(work, "promptfoo.json")
	os.Remove(out)
	cmd := exec.Command(pf, "eval", "-c", cfg, "-o", out, "--no-cache", "--no-progress-bar", "--no-write", "--no-table", "-j", strconv.Itoa(pfBenchConcurrency))
	cmd.Dir = work
	cmd.Env = append(os.Environ(),
		"HOME="+work, "PROMPTFOO_CONFIG_DIR="+filepath.Join(work, ".promptfoo"),
		"PROMPTFOO_DISABLE_TELEMETRY=1", "PROMPTFOO_DISABLE_UPDATE=1", "PROMPTFOO_DISABLE_REMOTE_GENERATION=1",
		"PROMPTFOO_DISABLE_SHARING=1", "PROMPTFOO_DISABLE_REDTEAM_REMOTE_GENERATION=1", "PROMPTFOO_SELF_HOSTED=1",
		"PROMPTFOO_DISABLE_WAL_MODE=1", "OPENAI_API_KEY=bench", "NO_COLOR=1", "CI=true")
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() > 100) {
		b.Fatalf("promptfoo eval: %v\n%s", err, tail(stderr.String(), 2000))
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	data, err := os.ReadFile(out)
	if err != nil {
		b.Fatalf("promptfoo eval wrote no results: %v\n%s", err, tail(stderr.String(), 2000))
	}
	var res struct {
		Results struct {
			Stats struct{ Successes, Failures, Errors int } `json:"stats"`
		} `json:"results"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		b.Fatalf("promptfoo's results: %v", err)
	}
	if s := res.Results.Stats; s.Successes != cells {
		b.Fatalf("promptfoo passed %d of %d cells (%d failed, %d errors)\n%s", s.Successes, cells, s.Failures, s.Errors, tail(stderr.String(), 2000))
	}
	return cpu
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// spread is "median (min–max, n=N)", one decimal.
func spread(xs []float64) string { return spreadIn("%.1f", xs) }

// spreadIn is spread with each figure in format f.
func spreadIn(f string, xs []float64) string {
	return fmt.Sprintf(f+" ("+f+"–"+f+", n=%d)", median(xs), slices.Min(xs), slices.Max(xs), len(xs))
}
