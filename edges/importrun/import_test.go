package importrun

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pitwall/config"
	"pitwall/gpu/chat"
	"pitwall/judge/scoring"
	"pitwall/runner/history"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

var fixedNow = func() time.Time { return time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC) }

func openLedger(t *testing.T, dir string) *ledger.Ledger {
	t.Helper()
	led, err := ledger.Open(filepath.Join(dir, ".pitwall", "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { led.Close() })
	return led
}

// importFixture imports the 6 × 15 fixture and returns the ledger and the
// summary.
func importFixture(t *testing.T) (*ledger.Ledger, *Summary, []fxCell) {
	t.Helper()
	dir := t.TempDir()
	battery := fxBattery(t, dir)
	cells := fxCells()
	file := fxExport(t, filepath.Join(dir, "results.json"), cells)
	led := openLedger(t, dir)
	sum, err := Import(led, file, Options{Battery: battery, Now: fixedNow})
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	return led, sum, cells
}

// TestImportPromptPrixFixture imports the 6 × 15 fixture once and reads it
// back as show, export and a reopen do.
func TestImportPromptPrixFixture(t *testing.T) {
	led, sum, cells := importFixture(t)
	for _, tt := range []struct {
		name string
		fn   func(*testing.T, *ledger.Ledger, *Summary, []fxCell)
	}{
		{"shows every cell", showsEveryCell},
		{"timing and error class", timingAndErrorClass},
		{"exports", exports},
		{"records where it came from", recordsWhereItCameFrom},
		{"compares verdicts", comparesVerdicts},
	} {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, led, sum, cells) })
	}
}

func showsEveryCell(t *testing.T, led *ledger.Ledger, sum *Summary, cells []fxCell) {
	b, err := history.LoadSnapshot(led, sum.RunID, "")
	if err != nil {
		t.Fatal(err)
	}
	wantModels := []string{"qwen3-8b", "lfm2-1.2b-tool", "gemma-3-12b", "llama-3.1-8b", "mistral-7b", "phi-4-mini"}
	if !slices.Equal(b.Models, wantModels) {
		t.Errorf("models = %q, want the server prefixes cleaned: %q", b.Models, wantModels)
	}
	if len(b.Tests) != 15 || b.Repeat != 1 {
		t.Fatalf("%d tests × %d repeats, want 15 × 1", len(b.Tests), b.Repeat)
	}
	tindex := map[string]int{}
	for i, ti := range b.Tests {
		tindex[ti.ID] = i
	}
	want := map[state.CellStatus]int{}
	for _, fc := range cells {
		want[fc.want]++
		mi := slices.Index(fxModels, fc.model)
		c := b.Cell(tindex[fc.test], mi, 0)
		if c == nil {
			t.Fatalf("no cell %s × %s", fc.model, fc.test)
		}
		name := fc.model + " × " + fc.test
		if c.Status != fc.want {
			t.Errorf("%s: status %s, want %s (checks %+v, error %q)", name, c.Status, fc.want, c.Said().Checks, c.Said().Error)
		}
		if !sameCalls(c.Said().ToolCalls, fc.wantCalls) {
			t.Errorf("%s: tool calls %+v, want %+v", name, c.Said().ToolCalls, fc.wantCalls)
		}
		if fc.want == state.Completed || fc.want == state.Failed {
			if strings.Contains(c.Said().Output, "Tool Call") || strings.Contains(c.Said().Output, "tool_call") {
				t.Errorf("%s: the calls' markup is left in the output: %q", name, c.Said().Output)
			}
			if len(c.Said().Checks) == 0 {
				t.Errorf("%s: a reply with no checks run", name)
			}
		}
		if fc.want == state.Errored && (c.Said().Error != fc.err || c.Server != ServerImported) {
			t.Errorf("%s: error %q on %q, want %q on %q", name, c.Said().Error, c.Server, fc.err, ServerImported)
		}
	}
	for s, n := range want {
		if sum.Cells[s] != n {
			t.Errorf("summary: %d %s cells, want %d", sum.Cells[s], s, n)
		}
	}
	if b.Counts.Cells() != 90 {
		t.Errorf("tally counts %d cells, want 90", b.Counts.Cells())
	}
	if b.Status != state.RunStopped || sum.Status != string(state.RunStopped) {
		t.Errorf("status %s / %s: a run with ⊘ cells reads stopped", b.Status, sum.Status)
	}
}

func timingAndErrorClass(t *testing.T, led *ledger.Ledger, sum *Summary, _ []fxCell) {
	b, err := history.LoadSnapshot(led, sum.RunID, "")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		model, test string
		class       chat.ErrorClass
	}{
		{"llama-3.1-8b", "weather_01", chat.ClassTimeout},
		{"llama-3.1-8b", "parallel_15", chat.ClassHTTP5xx},
		{"phi-4-mini", "weather_09", chat.ClassCanceled},
		{"phi-4-mini", "weather_10", chat.ClassCanceled},
	}
	for _, tt := range tests {
		t.Run(tt.model+"/"+tt.test, func(t *testing.T) {
			c := cellOf(t, b, tt.model, tt.test)
			if c.Said().ErrorClass != tt.class {
				t.Errorf("class %q, want %q (error %q)", c.Said().ErrorClass, tt.class, c.Said().Error)
			}
		})
	}
	if c := cellOf(t, b, "qwen3-8b", "weather_01"); c.Latency < 100*time.Millisecond || c.Latency > 200*time.Millisecond {
		t.Errorf("latency %s, want the export's latency_ms", c.Latency)
	}
}

func cellOf(t *testing.T, b *state.BatteryRun, model, test string) *state.Cell {
	t.Helper()
	mi := slices.Index(b.Models, model)
	ti := slices.IndexFunc(b.Tests, func(x state.TestInfo) bool { return x.ID == test })
	c := b.Cell(ti, mi, 0)
	if c == nil {
		t.Fatalf("no cell %s × %s", model, test)
	}
	return c
}

func sameCalls(got, want []chat.ToolCall) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i].Name != want[i].Name || !jsonEqual(got[i].Arguments, want[i].Arguments) {
			return false
		}
	}
	return true
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return a == b
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

func exports(t *testing.T, led *ledger.Ledger, sum *Summary, _ []fxCell) {
	x, err := history.BuildExport(led, sum.RunID, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Cells) != 90 {
		t.Fatalf("%d cells exported, want 90", len(x.Cells))
	}
	if len(x.Requests) != 0 || len(x.Summary.Requests) != 0 {
		t.Errorf("an imported run sent no request, but the export lists %d", len(x.Requests))
	}
	if b, err := json.Marshal(x); err != nil || !strings.Contains(string(b), `"requests":[]`) {
		t.Errorf("an imported run's export does not say \"requests\": [] (%v)", err)
	}
	if x.Categories["weather_01"] != "tools" || x.Categories["greet_11"] != "text" {
		t.Errorf("categories %v, want the battery's", x.Categories)
	}
	i := slices.IndexFunc(x.Cells, func(c history.ExportCell) bool { return c.Model == "lfm2-1.2b-tool" && c.Test == "weather_01" })
	var calls []chat.ToolCall
	if err := json.Unmarshal(x.Cells[i].ToolCalls, &calls); err != nil || !sameCalls(calls, []chat.ToolCall{call("Tokyo")}) {
		t.Errorf("exported tool calls %s (%v)", x.Cells[i].ToolCalls, err)
	}
	if x.Cells[i].Outcome != "pass" {
		t.Errorf("outcome %q, want pass (checks only)", x.Cells[i].Outcome)
	}
	for _, format := range []string{"json", "csv", "md", "html", "junit"} {
		var b strings.Builder
		if err := history.WriteExport(&b, led, sum.RunID, "", format); err != nil {
			t.Errorf("export %s: %v", format, err)
		}
	}
}

func recordsWhereItCameFrom(t *testing.T, led *ledger.Ledger, sum *Summary, _ []fxCell) {
	row, err := led.Run(sum.RunID)
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := led.Requests(sum.RunID)
	if err != nil || len(reqs) != 0 {
		t.Errorf("%d request rows (%v): pitwall sent nothing", len(reqs), err)
	}
	path, err := history.ConfigPath(led, sum.RunID)
	if err != nil || path != sum.ConfigPath {
		t.Fatalf("ConfigPath = %q (%v), want the written config %q", path, err, sum.ConfigPath)
	}
	// The config loads as it is, from any folder, and holds the run's tests
	// and models: what a reopen needs.
	cfg, err := config.Load(path, config.Overrides{}, func(string) string { return "" })
	if err != nil {
		t.Fatalf("the run's config does not load: %v", err)
	}
	if !slices.Equal(cfg.Models, row.Models) || len(cfg.Tests) != len(row.Tests) {
		t.Errorf("config models %q tests %d, run %q %d", cfg.Models, len(cfg.Tests), row.Models, len(row.Tests))
	}
	prov, ok := Imported(row)
	if !ok || prov.Format != "prompt-prix results export" || !filepath.IsAbs(prov.File) || len(prov.SHA256) != 64 ||
		!strings.HasSuffix(prov.Battery, "battery.json") {
		t.Errorf("Imported = %+v, %v", prov, ok)
	}
	for _, other := range []ledger.RunRow{{}, {ConfigJSON: `{"path":"pitwall.toml"}`}, {ConfigJSON: "not json"}} {
		if _, ok := Imported(other); ok {
			t.Errorf("a run pitwall ran (%q) reads as imported", other.ConfigJSON)
		}
	}
	if row.ScoringMode != "deterministic" || !row.StartedAt.Equal(fixedNow()) || row.EndedAt.IsZero() {
		t.Errorf("run row: mode %q started %s ended %s", row.ScoringMode, row.StartedAt, row.EndedAt)
	}
}

func comparesVerdicts(t *testing.T, _ *ledger.Ledger, sum *Summary, _ []fxCell) {
	text := strings.Join(sum.Verdicts, "\n")
	for _, want := range []string{
		"prompt-prix failed 10 repl(ies); pitwall's checks pass 2 of them (mistral-7b × weather_05; mistral-7b × weather_06)",
		"pitwall's checks fail 3 of them",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("verdict comparison lacks %q:\n%s", want, text)
		}
	}
	if !slices.ContainsFunc(sum.Notes, func(n string) bool { return strings.Contains(n, "cancelled") }) {
		t.Errorf("notes %q say nothing of the cancelled cell", sum.Notes)
	}
}

func TestImportConsistencyExportIsRepeats(t *testing.T) {
	dir := t.TempDir()
	battery := fxBattery(t, dir)
	res := func(status, resp string) map[string]any {
		return map[string]any{"status": status, "response": resp, "latency_ms": 120.5, "error": nil, "failure_reason": nil}
	}
	good, bad := renderPP(call("Tokyo")), "It is warm in Tokyo."
	file := writeJSON(t, filepath.Join(dir, "consistency.json"), map[string]any{
		"tests": []string{"weather_01", "greet_11"}, "models": []string{"1: a-model", "b-model"}, "runs_total": 3,
		"aggregates": []map[string]any{
			{"test_id": "weather_01", "model_id": "1: a-model", "status": "inconsistent", "passes": 2, "total": 3, "avg_latency_ms": 120.5,
				"results": []any{res("completed", good), res("semantic_failure", bad), res("completed", good)}},
			{"test_id": "weather_01", "model_id": "b-model", "status": "consistent_pass", "passes": 2, "total": 2,
				"results": []any{res("completed", good), map[string]any{"status": "error", "error": "Connection refused"}}},
			{"test_id": "greet_11", "model_id": "1: a-model", "status": "consistent_pass",
				"results": []any{res("completed", "apple"), res("completed", "apple"), res("completed", "pear")}},
		},
	})
	led := openLedger(t, dir)
	sum, err := Import(led, file, Options{Battery: battery, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	b, err := history.LoadSnapshot(led, sum.RunID, "")
	if err != nil {
		t.Fatal(err)
	}
	if b.Repeat != 3 || !slices.Equal(b.Models, []string{"a-model", "b-model"}) {
		t.Fatalf("repeat %d models %q, want 3 runs of a-model and b-model", b.Repeat, b.Models)
	}
	want := map[string][]state.CellStatus{
		"weather_01/a-model": {state.Completed, state.Failed, state.Completed},
		"weather_01/b-model": {state.Completed, state.Errored, state.Cancelled}, // the third run is not in the file
		"greet_11/a-model":   {state.Completed, state.Completed, state.Failed},
		"greet_11/b-model":   {state.Cancelled, state.Cancelled, state.Cancelled},
	}
	for ti, info := range b.Tests {
		for mi, m := range b.Models {
			for rep := range 3 {
				got := b.Cell(ti, mi, rep).Status
				if w := want[info.ID+"/"+m][rep]; got != w {
					t.Errorf("%s × %s run %d: %s, want %s", m, info.ID, rep+1, got, w)
				}
			}
		}
	}
	if c := b.Cell(0, 1, 1); c.Said().ErrorClass != chat.ClassUnavailable {
		t.Errorf("connection refused: class %q", c.Said().ErrorClass)
	}
}

func TestImportRefusesWithReasons(t *testing.T) {
	dir := t.TempDir()
	battery := fxBattery(t, dir)
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, file, battery string
		want                []string
	}{
		{"a test the battery lacks", write("a.json", `{"tests":["weather_1"],"models":["m"],"results":[{"test_id":"weather_1","model_id":"m","status":"completed","response":"x"}]}`),
			battery, []string{`"weather_1"`, `did you mean "weather_01"`, "--battery"}},
		{"not JSON", write("b.json", "{\n\"tests\": [,]}"), battery, []string{"b.json", "line 2", "not JSON"}},
		{"cut off", write("c.json", `{"tests": ["a"`), battery, []string{"ends before the JSON does"}},
		{"a battery given as the run", battery, battery, []string{"looks like a battery", "--battery"}},
		{"a wrong type", write("d.json", `{"tests":["weather_01"],"models":["m"],"results":[{"test_id":"weather_01","model_id":"m","latency_ms":"fast"}]}`),
			battery, []string{"results[0].latency_ms", "a string where a number belongs"}},
		{"too many runs", write("e.json", `{"tests":["weather_01"],"models":["m"],"runs_total":5000,"aggregates":[]}`),
			battery, []string{"5000 runs per cell", "more than pitwall imports (1000)"}},
		{"an inspect .eval zip", write("f.eval", "PK\x03\x04rest"), battery, []string{"inspect log convert"}},
		{"no battery", write("g.json", `{"tests":["weather_01"],"models":["m"],"results":[]}`), "", []string{"--battery"}},
		{"a missing battery", write("h.json", `{"tests":["weather_01"],"models":["m"],"results":[]}`), filepath.Join(dir, "nope.json"),
			[]string{"nope.json"}},
		{"an empty file", write("i.json", " \n"), battery, []string{"empty"}},
		{"an export of nothing", write("j.json", `{"tests":[],"models":[],"results":[]}`), battery,
			[]string{"prompt-prix results export holds no results"}},
		{"a pitwall export", write("k.json", `{"run":{"id":"r1"},"models":["m"],"tests":["weather_01"],"cells":[],"requests":[]}`), battery,
			[]string{"this is a pitwall export", "pitwall export RUN"}},
		{"a pitwall CSV export", write("l.csv", "run,model,test,category,severity,repeat,status\r\nr1,m,weather_01,tools,,0,completed\r\n"), battery,
			[]string{"this is a pitwall CSV export", "pitwall show RUN"}},
		{"another tool's results CSV", write("m.csv", "test_id,model_id,status,response\nweather_01,m,completed,x\n"), battery,
			[]string{"this is a results CSV", "as JSON"}},
		{"a BOM before a pitwall export", write("n.json", "\xef\xbb\xbf"+`{"run":{},"tests":[],"cells":[]}`), battery,
			[]string{"this is a pitwall export"}},
	}
	led := openLedger(t, dir)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Import(led, tt.file, Options{Battery: tt.battery, Now: fixedNow})
			if err == nil {
				t.Fatal("imported")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
			for _, goWords := range []string{"Go struct", "map[string]", "interface {}", "[]string", "json: cannot unmarshal"} {
				if strings.Contains(err.Error(), goWords) {
					t.Errorf("error speaks Go (%q): %v", goWords, err)
				}
			}
		})
	}
	runs, err := led.Runs(0)
	if err != nil || len(runs) != 0 {
		t.Errorf("%d runs left behind by refused imports (%v)", len(runs), err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".pitwall", "imports", "*.toml")); len(left) != 0 {
		t.Errorf("configs left behind: %q", left)
	}
}

// TestImportKeepsTheOtherToolsReason: prompt-prix's failure_reason stays
// with the cell as the tool's verdict, beside pitwall's checks, in what the
// detail view reads (the whole cell) and in the exports; it does not decide
// the cell.
func TestImportKeepsTheOtherToolsReason(t *testing.T) {
	led, sum, cells := importFixture(t)
	b, err := history.LoadSnapshot(led, sum.RunID, "")
	if err != nil {
		t.Fatal(err)
	}
	const why = "Expected tool call but got text" // the fixture's failure_reason
	name := ImportedVerdictPrefix + "prompt-prix)"
	seen := 0
	for _, fc := range cells {
		whole, err := history.LoadCell(led, sum.RunID, state.CellRef{Test: fc.test, Model: b.Models[slices.Index(fxModels, fc.model)]})
		if err != nil {
			t.Fatal(err)
		}
		k := slices.IndexFunc(whole.Said().Checks, func(r scoring.CheckResult) bool { return r.Name == name })
		if fc.status != "semantic_failure" {
			if k >= 0 {
				t.Errorf("%s × %s: prompt-prix said %q, yet the cell has %+v", fc.model, fc.test, fc.status, whole.Said().Checks[k])
			}
			continue
		}
		seen++
		if k < 0 || whole.Said().Checks[k].Pass || whole.Said().Checks[k].Reason != why {
			t.Errorf("%s × %s: checks %+v, want %q failed with %q", fc.model, fc.test, whole.Said().Checks, name, why)
		}
		if whole.Status != fc.want {
			t.Errorf("%s × %s: %s, want %s: the tool's verdict does not decide the cell", fc.model, fc.test, whole.Status, fc.want)
		}
	}
	if seen == 0 {
		t.Fatal("the fixture has no semantic_failure cell")
	}
	for _, format := range []string{"json", "csv"} {
		var out strings.Builder
		if err := history.WriteExport(&out, led, sum.RunID, "", format); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(out.String(), why); n < seen {
			t.Errorf("the %s export names the reason %d times, want at least %d", format, n, seen)
		}
	}
}
