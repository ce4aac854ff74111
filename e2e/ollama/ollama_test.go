package ollama

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// chatV1 sends one short OpenAI-style chat request to Ollama's /v1.
func chatV1(ctx context.Context, model string) (int, string, error) {
	code, body, err := postJSON(ctx, srv.baseURL()+"/v1/chat/completions", map[string]any{
		"model":      model,
		"messages":   []map[string]string{{"role": "user", "content": "hello"}},
		"max_tokens": 2,
	})
	return code, string(body), err
}

type serversOut struct {
	Servers []struct {
		Server    string   `json:"server"`
		URL       string   `json:"url"`
		Reachable bool     `json:"reachable"`
		Error     string   `json:"error"`
		Kind      string   `json:"kind"`
		Models    []string `json:"models"`
		Resident  []string `json:"resident"`
		Slots     int      `json:"slots"`
		Running   int      `json:"running"`
		Waiting   int      `json:"waiting"`
	} `json:"servers"`
}

func probe(ctx context.Context, t *testing.T, f fixture) serversOut {
	t.Helper()
	r := pitwall(ctx, t, f.dir, "servers", f.config, "--json")
	if r.code != 0 {
		t.Fatalf("servers --json failed:\n%s", r)
	}
	var out serversOut
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("servers --json printed no JSON: %v\n%s", err, r)
	}
	if len(out.Servers) != 1 {
		t.Fatalf("servers --json lists %d servers, want 1\n%s", len(out.Servers), r)
	}
	t.Logf("pitwall servers --json: %s", strings.TrimSpace(r.stdout))
	return out
}

// TestServersJSON: `pitwall servers --json` detects Ollama (the config has no
// kind), lists the three models, the slots configured to match
// OLLAMA_NUM_PARALLEL, and what /api/ps says is resident before and after a
// request.
func TestServersJSON(t *testing.T) {
	requireOllama(t)
	unloadAll(t)
	f := newFixture(t, configOpts{models: modelNames(), slots: 2})
	ctx, cancel := stepContext(t, 2*time.Minute)
	defer cancel()

	s := probe(ctx, t, f).Servers[0]
	if !s.Reachable {
		t.Fatalf("server not reachable: %s", s.Error)
	}
	t.Run("kind", func(t *testing.T) {
		if s.Kind != "ollama" {
			t.Errorf("kind = %q, want ollama (detected: the config names no kind)", s.Kind)
		}
	})
	t.Run("models", func(t *testing.T) {
		models := slices.Clone(s.Models)
		slices.Sort(models)
		if !slices.Equal(models, modelNames()) {
			t.Errorf("models = %v, want %v", s.Models, modelNames())
		}
	})
	t.Run("slots", func(t *testing.T) {
		// Ollama has no endpoint that tells OLLAMA_NUM_PARALLEL, so the
		// slots pitwall will use are the config's.
		if s.Slots != 2 {
			t.Errorf("slots = %d, want 2 (the config's slots = 2, matching OLLAMA_NUM_PARALLEL=2)", s.Slots)
		}
	})
	t.Run("resident", func(t *testing.T) {
		if len(s.Resident) != 0 {
			t.Errorf("resident = %v before any request, want none", s.Resident)
		}
		if code, body, err := chatV1(ctx, "tiny-b:latest"); err != nil || code != 200 {
			t.Fatalf("POST /v1/chat/completions tiny-b:latest: %d %v %s", code, err, body)
		}
		s := probe(ctx, t, f).Servers[0]
		if !slices.Equal(s.Resident, []string{"tiny-b:latest"}) {
			t.Errorf("resident = %v after a request to tiny-b:latest, want [tiny-b:latest]", s.Resident)
		}
		if s.Running != 0 || s.Waiting != 0 {
			t.Errorf("running/waiting = %d/%d on an idle server, want 0/0", s.Running, s.Waiting)
		}
	})
}

// TestRunBattery: a 3 models × 6 tests run ends with exit 0 or 1 (the checks
// are free to fail on random weights, but nothing is a setup error), and every
// cell is terminal. Ollama answers every prompt, so only the tool test on the
// two models without the tools capability may be an error, and that error
// must say why.
func TestRunBattery(t *testing.T) {
	requireOllama(t)
	f := newFixture(t, configOpts{models: modelNames(), kind: "ollama", retries: 1})
	ctx, cancel := stepContext(t, 5*time.Minute)
	defer cancel()
	r := pitwall(ctx, t, f.dir, "run", f.config, "--headless", "--db", f.db)
	t.Logf("%s", r)
	if r.code != 0 && r.code != 1 {
		t.Fatalf("exit %d, want 0 or 1", r.code)
	}
	e := exportLast(t, f)
	counts := checkAllTerminal(t, e, len(tinyModels)*batteryTests)
	t.Logf("cells by status %v\n%s", counts, cellTable(e))
	for _, c := range e.Cells {
		toolsRefused := c.Test == "weather_tool" && c.Model != "tiny-t:latest"
		switch {
		case c.Status == "cancelled":
			t.Errorf("%s × %s cancelled in a run nobody stopped", c.Model, c.Test)
		case toolsRefused && c.Status == "error":
			if !strings.Contains(c.Error, "does not support tools") {
				t.Errorf("%s × %s: error %q does not say the model does not support tools", c.Model, c.Test, c.Error)
			}
		case toolsRefused:
			t.Errorf("%s × %s is %s; Ollama refuses tools for a model without the capability, so want error", c.Model, c.Test, c.Status)
		case c.Status == "error":
			t.Errorf("%s × %s: %s %s (Ollama serves this prompt: an error means a client or server fault)", c.Model, c.Test, c.ErrorClass, c.Error)
		}
	}
}

// placementRuns: with OLLAMA_MAX_LOADED_MODELS=1, one server with 2 slots,
// 3 models × 6 tests, runs in a row. The first starts with nothing
// resident, the next two with what the one before left: three runs meet
// both starts, and each run is a minute on two busy cores.
const placementRuns = 3

// placementKinds are the two ways a config names the server: with its
// kind, and without, as init writes it, when pitwall detects the kind by
// probing. Detection must not cost a load: the server's resident model is
// known before the first decision either way.
var placementKinds = []struct{ name, kind string }{
	{"kind given", "ollama"},
	{"kind detected", ""},
}

// TestPlacementMinimumLoads: against Ollama with OLLAMA_MAX_LOADED_MODELS=1,
// one server with 2 slots, the three models × the six tests of the battery,
// runs in a row, each starting with whatever the previous run left resident
// (nothing is unloaded between them), each making exactly the minimum
// number of loads: the tested models not resident at its start. A placement
// that starts with the resident model and finishes each model before
// loading the next makes that many. It runs with the server's kind given
// and left out.
func TestPlacementMinimumLoads(t *testing.T) {
	requireOllama(t)
	for _, k := range placementKinds {
		t.Run(k.name, func(t *testing.T) {
			unloadAll(t)
			f := newFixture(t, configOpts{models: modelNames(), kind: k.kind, slots: 2, retries: 1})
			var report []string
			loads, want := 0, 0
			for i := range placementRuns {
				got, least := placementRun(t, f, i+1, modelNames(), nil, "", &report)
				loads += got
				want += least
			}
			t.Logf("placement (%s), %d runs of %d models × %d tests: %d loads, minimum %d\n%s",
				k.name, placementRuns, len(tinyModels), batteryTests, loads, want, strings.Join(report, "\n"))
		})
	}
}

// TestPlacementMinimumLoadsSubsets adds what the scenario above never
// meets, since every run there tests all three models with one of them
// resident: a run whose only model is resident (no load), a run whose models
// do not include the resident one, single-model runs.
func TestPlacementMinimumLoadsSubsets(t *testing.T) {
	requireOllama(t)
	a, b, tt := "tiny-a:latest", "tiny-b:latest", "tiny-t:latest"
	// After {a}, a is resident: {a} again needs no load, {b t} two, and
	// {t a}, {b} one or two depending on which of b and t was loaded last.
	sets := [][]string{{a}, {a}, {b, tt}, {tt, a}, {b}}
	tests := []string{"hello", "capital", "pirate"}
	for _, k := range placementKinds {
		t.Run(k.name, func(t *testing.T) {
			f := newFixture(t, configOpts{models: modelNames(), kind: k.kind, retries: 1})
			var report []string
			for i, set := range sets {
				placementRun(t, f, i+1, set, tests, "", &report)
			}
			t.Logf("placement over model subsets (%s):\n%s", k.name, strings.Join(report, "\n"))
		})
	}
}

// judgedPlacementRuns is how many judged runs in a row each kind gets: the
// first from nothing resident, the second from the judge's model resident.
const judgedPlacementRuns = 2

// TestPlacementMinimumLoadsJudgeAlsoTested: the judge's model (tiny-b) is
// one of the three tested. Its tests run last, so that the judging finds it
// loaded: a, t, b then b judging is 3 loads, where a, b, t then b again is
// 4. Runs in a row start with whatever the previous left, which is b: then
// b runs first (it is resident), and the judging must load it once more,
// one load above the models not resident at the start either way.
func TestPlacementMinimumLoadsJudgeAlsoTested(t *testing.T) {
	requireOllama(t)
	const judgeModel = "tiny-b:latest"
	for _, k := range placementKinds {
		t.Run(k.name, func(t *testing.T) {
			unloadAll(t) // the first run starts with nothing resident, the case the issue met
			f := newFixture(t, configOpts{models: modelNames(), kind: k.kind, retries: 1,
				battery: judgedBattery, judge: judgeModel, judgeMaxTokens: judgeMaxTokens})
			var report []string
			for i := range judgedPlacementRuns {
				placementRun(t, f, i+1, modelNames(), nil, judgeModel, &report)
			}
			t.Logf("judged placement (%s), judge %s also tested:\n%s", k.name, judgeModel, strings.Join(report, "\n"))
		})
	}
}

// placementRun runs the fixture's battery on models (and tests; nil runs
// them all), counts the model loads Ollama makes meanwhile (from its log,
// cross-checked by sampling /api/ps), and fails t unless they are exactly
// the fewest possible: the models not resident at the start, and, when the
// run is judged by judge (one of models; "" for none) and that model was
// resident at the start while another had to load, one more (its tests run
// while it is there, the judging needs it back). It returns the loads and
// that minimum, and appends a line for the test's summary to report.
func placementRun(t *testing.T, f fixture, n int, models, tests []string, judge string, report *[]string) (loads, want int) {
	t.Helper()
	ctx, cancel := stepContext(t, 3*time.Minute)
	defer cancel()
	start, err := resident(ctx)
	if err != nil {
		t.Fatalf("GET /api/ps: %v", err)
	}
	for _, m := range models {
		if !slices.Contains(start, m) {
			want++
		}
	}
	args := []string{"run", f.config, "--headless", "--db", f.db, "--models", strings.Join(models, ",")}
	if tests != nil {
		args = append(args, "--tests", strings.Join(tests, ","))
	}
	lc := startLoadCounter()
	r := pitwall(ctx, t, f.dir, args...)
	logLoads, psLoads, order := lc.stop()
	end, _ := resident(ctx)
	cells := len(tests)
	if tests == nil {
		cells = batteryTests
		if judge != "" {
			cells = judgedTests
		}
	}
	var e export
	if r.code == 0 || r.code == 1 || judge != "" && r.code == 2 {
		e = exportLast(t, f)
	}
	judged := false
	for _, q := range e.Requests {
		judged = judged || q.Purpose == "judge"
	}
	if judged && slices.Contains(start, judge) && want > 0 {
		want++
	}
	line := fmt.Sprintf("run %2d models %-5s resident %-5s → loads %d (log) %d (/api/ps) %-9s want %d; resident after %-5s %5.1fs",
		n, strings.Join(short(models), ","), fmt.Sprint(short(start)), logLoads, psLoads, fmt.Sprint(short(order)), want,
		fmt.Sprint(short(end)), r.wall.Seconds())
	*report = append(*report, line)
	t.Log(line)
	// A judged run whose verdicts are all judge errors (random weights)
	// exits 2 with that said; any other run 0 or 1.
	if e.Run.ID == "" {
		t.Errorf("run %d: exit %d, want 0 or 1\n%s", n, r.code, r)
		return logLoads, want
	}
	checkAllTerminal(t, e, len(models)*cells)
	if judge != "" && !judged {
		t.Errorf("run %d: nothing was judged, so the judge's load was never asked for", n)
	}
	if logLoads != want {
		t.Errorf("run %d (%v, %v resident at the start): %d loads, want %d\n%s", n, short(models), short(start), logLoads, want, r.stderr)
	}
	if psLoads != logLoads {
		t.Logf("run %d: /api/ps sampling saw %d loads, the log %d", n, psLoads, logLoads)
	}
	return logLoads, want
}

func short(models []string) []string {
	out := make([]string, len(models))
	for i, m := range models {
		out[i] = strings.TrimSuffix(strings.TrimPrefix(m, "tiny-"), ":latest")
	}
	return out
}

// TestUnknownModel: a model the server does not offer. What the issue wants:
// `validate` fails naming the model and the nearest name the server offers,
// and a run does not go ahead pretending it exists.
func TestUnknownModel(t *testing.T) {
	requireOllama(t)
	f := newFixture(t, configOpts{models: []string{"tiny-a:latest", "tiny-bb:latest"}, kind: "ollama"})
	ctx, cancel := stepContext(t, 3*time.Minute)
	defer cancel()
	v := pitwall(ctx, t, f.dir, "validate", f.config)
	t.Logf("%s", v)
	r := pitwall(ctx, t, f.dir, "run", f.config, "--headless", "--db", f.db)
	t.Logf("%s", r)

	vout := v.stdout + v.stderr
	if v.code == 0 {
		t.Errorf("validate exit 0 for a model Ollama does not have; want a failure naming tiny-bb:latest and tiny-b:latest")
	} else if !strings.Contains(vout, "tiny-bb:latest") || !strings.Contains(vout, "tiny-b:latest") {
		t.Errorf("validate fails (exit %d) but does not name both tiny-bb:latest and the nearest offered tiny-b:latest", v.code)
	}

	switch r.code {
	case 2:
		if !strings.Contains(r.stdout+r.stderr, "tiny-bb:latest") {
			t.Errorf("run exits 2 without naming tiny-bb:latest")
		}
	case 0, 1:
		e := exportLast(t, f)
		checkAllTerminal(t, e, 2*batteryTests)
		for _, c := range e.Cells {
			if c.Model == "tiny-bb:latest" && (c.Status != "error" || !strings.Contains(c.Error, "not found")) {
				t.Errorf("tiny-bb:latest × %s is %s %q; want an error that says the model is not found", c.Test, c.Status, c.Error)
			}
		}
		t.Logf("cells:\n%s", cellTable(e))
	default:
		t.Errorf("run exit %d, want 2 (setup) or 0/1", r.code)
	}
}

// TestUntaggedModel: "tiny-a" for "tiny-a:latest". Ollama itself accepts the
// untagged name; the issue wants pitwall to accept it if and only if the
// server does.
func TestUntaggedModel(t *testing.T) {
	requireOllama(t)
	ctx, cancel := stepContext(t, 3*time.Minute)
	defer cancel()
	code, body, err := chatV1(ctx, "tiny-a")
	if err != nil {
		t.Fatal(err)
	}
	accepted := code == 200
	t.Logf("Ollama answers /v1/chat/completions for model \"tiny-a\" with %d (accepted: %v)", code, accepted)

	f := newFixture(t, configOpts{models: []string{"tiny-a"}, kind: "ollama"})
	v := pitwall(ctx, t, f.dir, "validate", f.config)
	t.Logf("%s", v)
	r := pitwall(ctx, t, f.dir, "run", f.config, "--headless", "--db", f.db)
	t.Logf("%s", r)
	if !accepted {
		if v.code == 0 || !strings.Contains(v.stdout+v.stderr, "tiny-a") {
			t.Errorf("Ollama refuses \"tiny-a\" (%d %s) but validate exits %d without naming it", code, body, v.code)
		}
		return
	}
	if v.code != 0 {
		t.Errorf("validate exits %d for \"tiny-a\", which Ollama serves; want 0", v.code)
	}
	if r.code != 0 && r.code != 1 {
		t.Fatalf("run exits %d for \"tiny-a\", which Ollama serves; want 0 or 1", r.code)
	}
	e := exportLast(t, f)
	checkAllTerminal(t, e, batteryTests)
	for _, c := range e.Cells {
		if c.Status == "error" && c.Test != "weather_tool" {
			t.Errorf("tiny-a × %s: %s %s", c.Test, c.ErrorClass, c.Error)
		}
	}
	t.Logf("cells:\n%s", cellTable(e))
	t.Logf("requests in the ledger (purpose model status error_class):\n%s", requestSummary(e))
}

// TestServerRestartMidRun kills Ollama (and its runner) with SIGKILL after a
// few cells, starts it again on the same port, and wants the run to end with
// every cell terminal and an exit status of 0 or 1.
func TestServerRestartMidRun(t *testing.T) {
	requireOllama(t)
	const repeat = 3
	f := newFixture(t, configOpts{models: modelNames(), kind: "ollama", retries: 3, timeout: "30s"})
	ctx, cancel := stepContext(t, 6*time.Minute)
	defer cancel()

	cmd := exec.CommandContext(ctx, pitwallBin, "run", f.config, "--headless", "--db", f.db, "--repeat", fmt.Sprint(repeat))
	cmd.Dir = f.dir
	cmd.Env = pitwallEnv()
	cmd.WaitDelay = 5 * time.Second
	var stdout strings.Builder
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		lines    []string
		cells    int
		killed   = -1 // cells reported when the server was killed
		enough   = make(chan struct{})
		scanDone = make(chan struct{})
	)
	go func() {
		defer close(scanDone)
		scanLines(stderr, func(l string) {
			mu.Lock()
			defer mu.Unlock()
			lines = append(lines, l)
			if strings.HasPrefix(l, "[") && !strings.HasPrefix(l, "[judge") {
				cells++
				if cells == 4 {
					close(enough)
				}
			}
		})
	}()
	select {
	case <-enough:
	case <-scanDone:
		cmd.Wait()
		t.Fatalf("the run ended before four cells were reported:\n%s", strings.Join(lines, "\n"))
	case <-ctx.Done():
		t.Fatal("no four cells reported in time")
	}
	mu.Lock()
	killed = cells
	mu.Unlock()
	srv.kill()
	t.Logf("killed Ollama after %d cells", killed)
	time.Sleep(2 * time.Second)
	if err := srv.start(); err != nil {
		t.Fatalf("restarting Ollama: %v", err)
	}
	t.Logf("Ollama restarted")

	<-scanDone
	err = cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	} else if err != nil {
		t.Fatalf("run: %v", err)
	}
	mu.Lock()
	t.Logf("pitwall run → exit %d\n--- stdout ---\n%s--- stderr ---\n%s", code, stdout.String(), strings.Join(lines, "\n"))
	mu.Unlock()
	if ctx.Err() != nil {
		t.Fatalf("the run did not end within the test's time: %v", ctx.Err())
	}
	if code != 0 && code != 1 {
		t.Errorf("exit %d, want 0 or 1", code)
	}
	e := exportLast(t, f)
	counts := checkAllTerminal(t, e, len(tinyModels)*batteryTests*repeat)
	t.Logf("cells by status %v\n%s", counts, cellTable(e))
	t.Logf("requests in the ledger (purpose model status error_class):\n%s", requestSummary(e))
	rctx, rcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer rcancel()
	if res, err := resident(rctx); err != nil || len(res) == 0 {
		t.Errorf("nothing resident on the restarted Ollama (%v, %v): the run sent it no inference", res, err)
	}
}
