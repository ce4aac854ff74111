package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// spendDoc is a share of the export's inference or judging section.
type spendDoc struct {
	Requests         int      `json:"requests"`
	Live             int      `json:"live"`
	Cached           int      `json:"cached"`
	Shared           int      `json:"shared"`
	PromptTokens     int      `json:"prompt_tokens"`
	CompletionTokens int      `json:"completion_tokens"`
	WallMS           int64    `json:"wall_ms"`
	GPUMS            int64    `json:"gpu_ms"`
	CostUSD          *float64 `json:"cost_usd"`
	Unpriced         []string `json:"unpriced"`
}

type costDoc struct {
	Models []string `json:"models"`
	Tests  []string `json:"tests"`
	Judges []string `json:"judges"`
	Cells  []struct {
		Model, Test string
		Repeat      int
	} `json:"cells"`
	Requests []struct {
		Purpose, Server, Model, Test, Judge string
		Repeat, Sample                      int
		CandidateModel                      string `json:"candidate_model"`
		PromptTokens                        int    `json:"prompt_tokens"`
		CompletionTokens                    int    `json:"completion_tokens"`
		LatencyMS                           int64  `json:"latency_ms"`
	} `json:"requests"`
	Inference struct {
		spendDoc
		Models []struct {
			Model string `json:"model"`
			spendDoc
		} `json:"models"`
	} `json:"inference"`
	Judging struct {
		spendDoc
		Judges []struct {
			Judge string `json:"judge"`
			Model string `json:"model"`
			spendDoc
		} `json:"judges"`
	} `json:"judging"`
}

// The demo with prices: judge small its own (appended to the last judge
// table), judge large by its model's [prices], one tested model priced.
const demoPrices = `
price_in  = 3
price_out = 15

[prices.judge-large]
price_in  = 1
price_out = 2

[prices.qwen3-8b]
price_in  = 0.5
price_out = 0.5
`

func TestDemoExportShowsJudgingApartAndEachJudgeRequestNamesItsCell(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, f := range []string{"demo.toml", "demo-battery.toml"} {
		data, err := os.ReadFile(filepath.Join("..", "examples", f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "demo.toml" {
			data = append(data, demoPrices...)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, _, stderr := pitwall(t, dir, nil, "run", "demo.toml", "--headless", "--time-scale", "0")
	if code != 0 && code != 1 {
		t.Fatalf("exit %d, want 0 or 1\nstderr:\n%s", code, stderr)
	}
	code, out, stderr := pitwall(t, dir, nil, "export", "last", "--format", "json")
	if code != 0 {
		t.Fatalf("export exited %d: %s", code, stderr)
	}
	var x costDoc
	if err := json.Unmarshal([]byte(out), &x); err != nil {
		t.Fatalf("export is not JSON: %v", err)
	}

	// What the rows add up to, per purpose and per judge or model.
	sums := map[string]*spendDoc{}
	add := func(key, server string, in, outTok int, ms int64) {
		s := sums[key]
		if s == nil {
			s = &spendDoc{}
			sums[key] = s
		}
		s.Requests++
		switch server {
		case "(cache)":
			s.Cached++
		case "(shared)":
			s.Shared++
		case "":
		default:
			s.Live++
			s.PromptTokens += in
			s.CompletionTokens += outTok
			s.GPUMS += ms
		}
	}
	cells := map[string]bool{}
	for _, c := range x.Cells {
		cells[c.Model+"|"+c.Test+"|"+string(rune('0'+c.Repeat))] = true
	}
	for _, q := range x.Requests {
		switch q.Purpose {
		case "inference":
			add("inference", q.Server, q.PromptTokens, q.CompletionTokens, q.LatencyMS)
			add("model "+q.Model, q.Server, q.PromptTokens, q.CompletionTokens, q.LatencyMS)
		case "judge":
			add("judging", q.Server, q.PromptTokens, q.CompletionTokens, q.LatencyMS)
			add("judge "+q.Judge, q.Server, q.PromptTokens, q.CompletionTokens, q.LatencyMS)
			if !slices.Contains(x.Judges, q.Judge) || !cells[q.CandidateModel+"|"+q.Test+"|"+string(rune('0'+q.Repeat))] {
				t.Errorf("judge request (judge %q, model %q, test %q, repeat %d, sample %d) names no cell of the run",
					q.Judge, q.CandidateModel, q.Test, q.Repeat, q.Sample)
			}
			if q.Model == q.CandidateModel {
				t.Errorf("judge request's model %q is the candidate's, not the judge's", q.Model)
			}
		}
	}
	judged := sums["judging"]
	if judged == nil || judged.PromptTokens == 0 || judged.CompletionTokens == 0 || sums["inference"].CompletionTokens == 0 {
		t.Fatalf("the demo paid for no judge or inference tokens: %+v", sums)
	}

	same := func(what string, got spendDoc, want *spendDoc) {
		t.Helper()
		if want == nil {
			want = &spendDoc{}
		}
		if got.Requests != want.Requests || got.Live != want.Live || got.Cached != want.Cached || got.Shared != want.Shared ||
			got.PromptTokens != want.PromptTokens || got.CompletionTokens != want.CompletionTokens {
			t.Errorf("%s: export says %+v, the request rows add up to %+v", what, got, *want)
		}
		// GPU time sums the latencies before rounding to milliseconds, the
		// rows' latency_ms after: less than 1ms apart per request.
		if got.GPUMS < want.GPUMS || got.GPUMS > want.GPUMS+int64(want.Live) {
			t.Errorf("%s: GPU %dms, the rows' latencies add up to %dms over %d requests", what, got.GPUMS, want.GPUMS, want.Live)
		}
		if got.WallMS > got.GPUMS {
			t.Errorf("%s: wall %dms is more than GPU %dms", what, got.WallMS, got.GPUMS)
		}
	}
	same("judging", x.Judging.spendDoc, sums["judging"])
	same("inference", x.Inference.spendDoc, sums["inference"])
	if len(x.Judging.Judges) != len(x.Judges) {
		t.Errorf("judging has %d judges, the run %d", len(x.Judging.Judges), len(x.Judges))
	}
	cost := func(s spendDoc, in, outP float64) float64 {
		return (float64(s.PromptTokens)*in + float64(s.CompletionTokens)*outP) / 1e6
	}
	price := map[string][2]float64{"small": {3, 15}, "large": {1, 2}}
	var total float64
	for _, j := range x.Judging.Judges {
		same("judge "+j.Judge, j.spendDoc, sums["judge "+j.Judge])
		p := price[j.Judge]
		want := cost(j.spendDoc, p[0], p[1])
		total += want
		if j.CostUSD == nil || math.Abs(*j.CostUSD-want) > 1e-12 {
			t.Errorf("judge %s (%s) costs %v, want %g", j.Judge, j.Model, j.CostUSD, want)
		}
	}
	if c := x.Judging.CostUSD; c == nil || math.Abs(*c-total) > 1e-12 || len(x.Judging.Unpriced) > 0 {
		t.Errorf("judging costs %v (unpriced %q), want %g", c, x.Judging.Unpriced, total)
	}
	for _, m := range x.Inference.Models {
		same("model "+m.Model, m.spendDoc, sums["model "+m.Model])
		if (m.CostUSD != nil) != (m.Model == "qwen3-8b") {
			t.Errorf("model %s priced %v: only qwen3-8b has a price", m.Model, m.CostUSD)
		}
	}
	if !slices.Contains(x.Inference.Unpriced, "mistral-7b") || slices.Contains(x.Inference.Unpriced, "qwen3-8b") {
		t.Errorf("inference unpriced %q: want every model but qwen3-8b", x.Inference.Unpriced)
	}
	if !strings.Contains(out, `"candidate_model"`) {
		t.Error("no request names its candidate model")
	}
}
