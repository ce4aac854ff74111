package cli

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"pitwall/config"
	"pitwall/gpu/chat"
	"pitwall/judge"
	"pitwall/judge/scoring"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

func estimateConfig() *config.Config {
	return &config.Config{
		Prices: map[string]config.Price{"m-b": {In: 2, Out: 8}},
		Scoring: config.Scoring{Judges: []config.Judge{
			{Name: "a", Model: "m-a", URL: "https://api.example.com/v1", MaxTokens: 512, PriceIn: 1, PriceOut: 4},
			{Name: "b", Model: "m-b", Server: "gpu0", MaxTokens: 300},
			{Name: "c", Model: "m-c", Server: "gpu0", MaxTokens: 100},
		}},
		Servers: []config.Server{{Name: "gpu0", Kind: chat.KindSim}},
	}
}

func judgeReq(judgeName, server string, prompt, completion int) ledger.Request {
	return ledger.Request{Purpose: ledger.PurposeJudge, Judge: judgeName, Server: server, Status: ledger.StatusCompleted,
		PromptTokens: prompt, CompletionTokens: completion}
}

// A call costs what the judge's earlier calls of the run cost on average
// (answers from the cache or a shared call cost nothing and are left out),
// else what any judge's did, else the template and the cells' tokens with
// the judge's max_tokens; priced by the judge's price or its model's.
func TestEstimateRejudgeRules(t *testing.T) {
	t.Parallel()
	cfg := estimateConfig()
	refs := []state.CellRef{{Test: "t1", Model: "x"}, {Test: "t2", Model: "x"}, {Test: "t3", Model: "x"}}
	earlier := []ledger.Request{
		judgeReq("a", "hosted", 100, 20),
		judgeReq("a", "hosted", 300, 40),
		judgeReq("a", ledger.ServerCache, 5000, 5000),
		judgeReq("a", ledger.ServerShared, 5000, 5000),
		judgeReq("a", "", 0, 0), // never sent
	}
	es := estimateRejudge(cfg, earlier, refs, []string{"a", "b"}, 2)
	if len(es) != 2 {
		t.Fatalf("%d estimates, want 2", len(es))
	}
	a, b := es[0], es[1]
	// 3 cells × 2 samples at 200 in / 30 out a call.
	if a.calls != 6 || a.promptTokens != 1200 || a.completionTokens != 180 {
		t.Errorf("a: %d calls, %d in, %d out; want 6, 1200, 180", a.calls, a.promptTokens, a.completionTokens)
	}
	if want := (1200*1.0 + 180*4.0) / 1e6; !a.priced || math.Abs(a.cost-want) > 1e-12 || !a.hosted {
		t.Errorf("a: cost %v priced %v hosted %v; want %v at its own price, hosted", a.cost, a.priced, a.hosted, want)
	}
	// b has no call of its own: the other judges' calls stand in for it,
	// priced by [prices] of its model.
	if b.promptTokens != 1200 || b.completionTokens != 180 || !b.priced || b.hosted {
		t.Errorf("b: %d in, %d out, priced %v, hosted %v; want 1200, 180, priced, not hosted", b.promptTokens, b.completionTokens, b.priced, b.hosted)
	}
	if want := (1200*2.0 + 180*8.0) / 1e6; math.Abs(b.cost-want) > 1e-12 {
		t.Errorf("b: cost %v, want %v", b.cost, want)
	}

	// No judge has answered: the template, the cells' tokens, max_tokens.
	cells := []ledger.Request{
		{Purpose: ledger.PurposeInference, Test: "t1", Model: "x", Status: ledger.StatusCompleted, PromptTokens: 40, CompletionTokens: 60},
		{Purpose: ledger.PurposeInference, Test: "t2", Model: "x", Status: ledger.StatusCompleted, PromptTokens: 40, CompletionTokens: 160},
		{Purpose: ledger.PurposeInference, Test: "t3", Model: "x", Status: ledger.StatusError, PromptTokens: 9999},
	}
	c := estimateRejudge(cfg, cells, refs, []string{"c"}, 1)[0]
	tpl, _ := judge.LookupTemplate("")
	perCall := float64(len(tpl.System)+len(tpl.User))/4 + (100+200+0)/3.0
	if want := int(perCall*3 + 0.5); c.promptTokens != want || c.completionTokens != 300 || c.priced {
		t.Errorf("c: %d in, %d out, priced %v; want %d, 300 (3 × max_tokens 100), unpriced", c.promptTokens, c.completionTokens, c.priced, want)
	}
	if tokens, _, priced := sumEstimates([]judgeEstimate{a, b, c}); tokens != a.tokens()+b.tokens()+c.tokens() || priced {
		t.Errorf("sum: %d tokens, priced %v; want %d, not priced (c has no price)", tokens, priced, a.tokens()+b.tokens()+c.tokens())
	}
}

func TestHostedJudge(t *testing.T) {
	t.Parallel()
	cfg := &config.Config{Servers: []config.Server{
		{Name: "cloud", Kind: chat.KindOpenAI, URL: "https://api.together.xyz/v1", Models: []string{"big"}},
		{Name: "lan", Kind: chat.KindOpenAI, URL: "http://192.168.1.20:8000/v1"},
		{Name: "here", Kind: chat.KindOpenAI, URL: "http://localhost:8080/v1"},
		{Name: "vllm", Kind: chat.KindVLLM, URL: "http://gpu-box.example.com:8000/v1"},
		{Name: "sim", Kind: chat.KindSim},
	}}
	cases := []struct {
		j    config.Judge
		want bool
	}{
		{config.Judge{Name: "url", URL: "https://api.openai.com/v1"}, true},
		{config.Judge{Name: "url-local", URL: "http://127.0.0.1:1234/v1"}, false},
		{config.Judge{Name: "cloud", Server: "cloud"}, true},
		{config.Judge{Name: "lan", Server: "lan"}, false},
		{config.Judge{Name: "here", Server: "here"}, false},
		{config.Judge{Name: "vllm", Server: "vllm"}, false},
		{config.Judge{Name: "sim", Server: "sim"}, false},
		{config.Judge{Name: "any-big", Server: config.AnyServer, Model: "big"}, true},
		{config.Judge{Name: "any-small", Server: config.AnyServer, Model: "small"}, false},
	}
	for _, tc := range cases {
		if got, _ := hostedJudge(cfg, tc.j); got != tc.want {
			t.Errorf("%s: hosted %v, want %v", tc.j.Name, got, tc.want)
		}
	}
}

// The estimate of hosted judges is printed; on a terminal it is asked, and
// only y or yes sends; --yes and no terminal send without a question. With
// no hosted judge nothing is printed or asked.
func TestConfirmSpend(t *testing.T) {
	t.Parallel()
	hosted := []judgeEstimate{{judge: "a", calls: 72, promptTokens: 40_000, completionTokens: 3_200, cost: 0.0123, priced: true,
		hosted: true, where: "https://api.example.com/v1"}, {judge: "b", calls: 72, promptTokens: 100}}
	models := map[string]string{"a": "gpt-x"}
	cases := []struct {
		name      string
		es        []judgeEstimate
		ask, yes  bool
		answer    string
		want      bool
		printed   bool
		questions bool
	}{
		{"local judges only", hosted[1:], true, false, "n\n", true, false, false},
		{"no terminal", hosted, false, false, "n\n", true, true, false},
		{"--yes", hosted, true, true, "n\n", true, true, false},
		{"y", hosted, true, false, "y\n", true, true, true},
		{"YES", hosted, true, false, "YES\n", true, true, true},
		{"enter", hosted, true, false, "\n", false, true, true},
		{"n", hosted, true, false, "n\n", false, true, true},
		{"end of input", hosted, true, false, "", false, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			got := confirmSpend(tc.es, models, tc.ask, tc.yes, strings.NewReader(tc.answer), &out)
			s := out.String()
			if got != tc.want {
				t.Errorf("confirmSpend = %v, want %v:\n%s", got, tc.want, s)
			}
			if printed := strings.Contains(s, "a (gpt-x, hosted at https://api.example.com/v1): 72 calls, ~43k tokens, ~$0.012"); printed != tc.printed {
				t.Errorf("estimate printed %v, want %v:\n%s", printed, tc.printed, s)
			}
			if strings.Contains(s, "b (") {
				t.Errorf("a judge that is not hosted is in the estimate:\n%s", s)
			}
			if asked := strings.Contains(s, "[y/N]"); asked != tc.questions {
				t.Errorf("asked %v, want %v:\n%s", asked, tc.questions, s)
			}
		})
	}
}

// qualify on a judge behind a hosted url prints the estimate before it
// opens anything, and without a terminal sends without asking (here the
// url cannot be reached: the run stops at setup, after the estimate).
func TestQualifyPrintsTheEstimateForAHostedJudge(t *testing.T) {
	t.Parallel()
	battery, err := filepath.Abs("../examples/judge-battery.toml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "hosted.toml")
	text := `name = "hosted"
battery = ` + strconv.Quote(battery) + `
[[sim.models]]
name = "local"
[[servers]]
name = "gpu0"
kind = "sim"
models = ["local"]
[scoring]
samples = 2
[[scoring.judges]]
name = "cloud"
model = "gpt-judge"
url = "https://judge.invalid/v1"
price_in = 0.15
price_out = 0.6
`
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, stderr := inproc(t, "qualify", path, "--db", filepath.Join(dir, "ledger.db"), "--max-wait", "1s", "--timeout", "2s")
	for _, want := range []string{"estimated cost of the hosted judges' calls", "cloud (gpt-judge, hosted at https://judge.invalid/v1): 48 calls, ~", "tokens, ~$"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "[y/N]") {
		t.Errorf("asked with no terminal:\n%s", stderr)
	}
}

// The grid's estimate and rejudge's read the run's own judge requests from
// the ledger: a judge's calls so far, times the calls asked for, at its
// price; the jury is every judge.
func TestEstimatorReadsTheRunsJudgeRequests(t *testing.T) {
	t.Parallel()
	led, err := ledger.Open(filepath.Join(t.TempDir(), "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer led.Close()
	now := time.Now()
	if err := led.CreateRun(ledger.RunRow{ID: "r1", Name: "x", Status: ledger.RunRunning, StartedAt: now, Heartbeat: now, Owner: led.Self()}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []ledger.Request{judgeReq("a", "hosted", 1000, 100), judgeReq("a", "hosted", 3000, 300), judgeReq("b", "gpu0", 50, 5)} {
		q.RunID, q.QueuedAt = "r1", now
		if _, err := led.InsertRequest(&q); err != nil {
			t.Fatal(err)
		}
	}
	cfg := estimateConfig()
	cfg.Scoring.Mode = scoring.ModeJury
	est := estimator(cfg, led, "r1")
	refs := []state.CellRef{{Test: "t1", Model: "x"}, {Test: "t2", Model: "x"}}

	tokens, cost, priced, ok := est(refs, "a", 3)
	// 2 cells × 3 samples at 2000 in / 200 out, $1 and $4 a million.
	if !ok || !priced || tokens != 6*2200 || math.Abs(cost-(12000*1.0+1200*4.0)/1e6) > 1e-12 {
		t.Errorf("a: %d tokens, $%v, priced %v, ok %v; want %d, $%v", tokens, cost, priced, ok, 6*2200, (12000*1.0+1200*4.0)/1e6)
	}
	tokens, _, priced, ok = est(refs, scoring.JuryName, 1)
	if !ok || priced || tokens != 2*2200+2*55+tokensOfC(cfg, refs) {
		t.Errorf("jury: %d tokens, priced %v, ok %v; want a's, b's and c's, unpriced (c has no price)", tokens, priced, ok)
	}
	if _, _, _, ok := est(refs, "nobody", 1); ok {
		t.Error("an unknown judge has an estimate")
	}
}

// tokensOfC is judge c's estimate on refs with no call of its own: the
// other judges' mean.
func tokensOfC(cfg *config.Config, refs []state.CellRef) int {
	reqs := []ledger.Request{judgeReq("a", "hosted", 1000, 100), judgeReq("a", "hosted", 3000, 300), judgeReq("b", "gpu0", 50, 5)}
	return estimateRejudge(cfg, reqs, refs, []string{"c"}, 1)[0].tokens()
}
