package importrun

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pitwall/gpu/chat"
	"pitwall/judge/scoring"
	"pitwall/runner/history"
	"pitwall/runner/state"
)

const pfBattery = `description: weather by two prompts
prompts:
  - "What's the weather in {{city}}?"
  - id: terse
    raw: "Weather, {{city}}, one word."
providers:
  - id: openai:chat:qwen3-8b
    config:
      tools:
        - type: function
          function:
            name: get_weather
            parameters: {type: object, properties: {city: {type: string}}}
tests:
  - description: Tokyo
    vars: {city: Tokyo}
    metadata: {test_id: w_tokyo}
    assert:
      - type: contains
        value: Tokyo
  - description: Paris
    vars: {city: Paris}
    metadata: {test_id: w_paris}
    assert:
      - type: icontains
        value: paris
`

// pfOut is one promptfoo result as `promptfoo eval -o` writes it.
func pfOut(provider any, testIdx, promptIdx int, testID string, output any, extra map[string]any) map[string]any {
	r := map[string]any{
		"provider": provider, "testIdx": testIdx, "promptIdx": promptIdx, "promptId": "abc",
		"prompt":   map[string]any{"raw": "…", "label": "…"},
		"testCase": map[string]any{"vars": map[string]any{"city": "x"}, "metadata": map[string]any{"test_id": testID}},
		"response": map[string]any{"output": output, "tokenUsage": map[string]any{"prompt": 12, "completion": 5, "total": 17}},
		"success":  true, "score": 1, "failureReason": 0, "latencyMs": 250, "namedScores": map[string]any{},
	}
	for k, v := range extra {
		r[k] = v
	}
	return r
}

func TestImportPromptfooEvalOutput(t *testing.T) {
	dir := t.TempDir()
	battery := filepath.Join(dir, "promptfooconfig.yaml")
	if err := os.WriteFile(battery, []byte(pfBattery), 0o644); err != nil {
		t.Fatal(err)
	}
	qwen := map[string]any{"id": "openai:chat:qwen3-8b", "label": "qwen3-8b"}
	gpt := map[string]any{"id": "openai:gpt-4o-mini"}
	toolCalls := []any{map[string]any{"id": "call_1", "type": "function",
		"function": map[string]any{"name": "get_weather", "arguments": `{"city":"Tokyo"}`}}}
	results := []any{
		// promptIdx counts each provider's prompts, providers first: qwen 0 and 1, gpt 2 and 3.
		pfOut(qwen, 0, 0, "w_tokyo", "Sunny in Tokyo.", nil),
		pfOut(qwen, 0, 1, "w_tokyo", "Sunny.", map[string]any{"success": false, "failureReason": 1,
			"gradingResult": map[string]any{"pass": false, "reason": "Expected output to contain \"Tokyo\""}}),
		pfOut(qwen, 1, 0, "w_paris", "Rain in PARIS.", nil),
		pfOut(qwen, 1, 1, "w_paris", "Paris: rain.", nil),
		pfOut(gpt, 0, 2, "w_tokyo", toolCalls, map[string]any{"success": false, "failureReason": 1}),
		pfOut(gpt, 0, 3, "w_tokyo", map[string]any{"content": "Tokyo:", "tool_calls": toolCalls}, nil),
		pfOut(gpt, 1, 2, "w_paris", nil, map[string]any{"success": false, "failureReason": 2, "error": "API error: 503 Service Unavailable",
			"response": nil}),
		// gpt × Paris × terse is not in the file: the eval was stopped.
	}
	file := writeJSON(t, filepath.Join(dir, "results.json"), map[string]any{
		"evalId": "eval-xyz-2026-01-02T03:04:05", "shareableUrl": nil, "config": map[string]any{},
		"results": map[string]any{"version": 3, "timestamp": "2026-01-02T03:04:05.000Z", "results": results,
			"prompts": []any{}, "stats": map[string]any{"successes": 4, "failures": 2, "errors": 1}},
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
	if len(b.Models) != 2 || b.Models[0] != "qwen3-8b" || b.Models[1] != "openai:gpt-4o-mini" {
		t.Errorf("models %q, want the providers' labels or ids", b.Models)
	}
	want := map[string]state.CellStatus{ // model × test index
		"qwen3-8b 0": state.Completed, "qwen3-8b 1": state.Failed, "qwen3-8b 2": state.Completed, "qwen3-8b 3": state.Completed,
		// contains "Tokyo" reads tool calls as their JSON, as promptfoo does.
		"openai:gpt-4o-mini 0": state.Completed, "openai:gpt-4o-mini 1": state.Completed,
		"openai:gpt-4o-mini 2": state.Errored, "openai:gpt-4o-mini 3": state.Cancelled,
	}
	if len(b.Tests) != 4 {
		t.Fatalf("tests %v, want 2 tests × 2 prompts", b.Tests)
	}
	for ti, info := range b.Tests {
		wantPrefix := []string{"w_tokyo", "w_tokyo", "w_paris", "w_paris"}[ti]
		if !strings.HasPrefix(info.ID, wantPrefix) {
			t.Errorf("test %d is %q, want the battery's %s", ti, info.ID, wantPrefix)
		}
		for mi, m := range b.Models {
			c := b.Cell(ti, mi, 0)
			if w := want[m+" "+string(rune('0'+ti))]; c.Status != w {
				t.Errorf("%s × %s: %s, want %s (checks %+v)", m, info.ID, c.Status, w, c.Said().Checks)
			}
		}
	}
	whole, err := history.LoadCell(led, sum.RunID, state.CellRef{Test: b.Tests[1].ID, Model: "qwen3-8b"})
	if err != nil {
		t.Fatal(err)
	}
	if k := slices.IndexFunc(whole.Said().Checks, func(r scoring.CheckResult) bool { return r.Name == ImportedVerdictPrefix+"promptfoo)" }); k < 0 ||
		whole.Said().Checks[k].Reason != `Expected output to contain "Tokyo"` {
		t.Errorf("promptfoo's reason is not kept with the cell: %+v", whole.Said().Checks)
	}
	c := b.Cell(1, 1, 0)
	if len(c.Said().ToolCalls) != 1 || c.Said().ToolCalls[0].ID != "call_1" || c.Said().ToolCalls[0].Arguments != `{"city":"Tokyo"}` || c.Said().Output != "Tokyo:" {
		t.Errorf("a message with tool_calls: output %q calls %+v", c.Said().Output, c.Said().ToolCalls)
	}
	if c := b.Cell(2, 1, 0); c.Said().ErrorClass != chat.ClassUnavailable || !strings.Contains(c.Said().Error, "503") {
		t.Errorf("errored result: %q %q", c.Said().ErrorClass, c.Said().Error)
	}
	if c := b.Cell(0, 0, 0); c.PromptTokens != 12 || c.CompletionTokens != 5 {
		t.Errorf("tokens %d/%d, want the response's tokenUsage", c.PromptTokens, c.CompletionTokens)
	}
}

func TestImportPromptfooRefusesAnotherBattery(t *testing.T) {
	dir := t.TempDir()
	battery := filepath.Join(dir, "promptfooconfig.yaml")
	if err := os.WriteFile(battery, []byte(pfBattery), 0o644); err != nil {
		t.Fatal(err)
	}
	file := writeJSON(t, filepath.Join(dir, "results.json"), map[string]any{"evalId": "e",
		"results": map[string]any{"version": 3, "results": []any{pfOut("p", 0, 0, "w_london", "x", nil)}}})
	_, err := Import(openLedger(t, dir), file, Options{Battery: battery, Now: fixedNow})
	if err == nil || !strings.Contains(err.Error(), `"w_london"`) || !strings.Contains(err.Error(), "w_tokyo") {
		t.Errorf("err = %v, want the ids that disagree named", err)
	}
}

func TestImportInspectLog(t *testing.T) {
	dir := t.TempDir()
	battery := filepath.Join(dir, "data.jsonl")
	data := `{"id": "s1", "input": "Capital of France?", "target": "Paris"}
{"input": "Weather in Oslo?", "target": "a call"}
{"input": "Say hi.", "target": "hi"}
`
	if err := os.WriteFile(battery, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	out := func(content any, calls []any) map[string]any {
		msg := map[string]any{"role": "assistant", "content": content, "source": "generate"}
		if calls != nil {
			msg["tool_calls"] = calls
		}
		return map[string]any{"model": "gpt-4o", "choices": []any{map[string]any{"message": msg, "stop_reason": "stop"}},
			"usage": map[string]any{"input_tokens": 10, "output_tokens": 3, "total_tokens": 13}, "time": 0.75}
	}
	samples := []any{
		map[string]any{"id": "s1", "epoch": 1, "input": "Capital of France?", "target": "Paris", "output": out("Paris", nil),
			"scores": map[string]any{"match": map[string]any{"value": "C"}}},
		map[string]any{"id": "s1", "epoch": 2, "input": "Capital of France?", "target": "Paris",
			"output": out([]any{map[string]any{"type": "reasoning", "reasoning": "hmm"}, map[string]any{"type": "text", "text": "London"}}, nil),
			"scores": map[string]any{"match": map[string]any{"value": "I", "explanation": "wrong"}}},
		map[string]any{"id": 2, "epoch": 1, "input": "Weather in Oslo?", "target": "a call",
			"output": out("", []any{map[string]any{"id": "c1", "function": "get_weather", "arguments": map[string]any{"city": "Oslo"}}})},
		map[string]any{"id": 3, "epoch": 1, "input": "Say hi.", "target": "hi", "output": map[string]any{"model": "gpt-4o", "choices": []any{}},
			"error": map[string]any{"message": "RuntimeError: the sandbox died", "traceback": "…"}},
	}
	file := writeJSON(t, filepath.Join(dir, "log.json"), map[string]any{"version": 2, "status": "success",
		"eval":    map[string]any{"task": "capitals", "model": "openai/gpt-4o", "created": "2026-01-02T03:04:05+00:00"},
		"samples": samples, "results": map[string]any{}, "stats": map[string]any{}})
	led := openLedger(t, dir)
	sum, err := Import(led, file, Options{Battery: battery, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	b, err := history.LoadSnapshot(led, sum.RunID, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Models) != 1 || b.Models[0] != "openai/gpt-4o" || b.Repeat != 2 || len(b.Tests) != 3 {
		t.Fatalf("models %q repeat %d tests %d", b.Models, b.Repeat, len(b.Tests))
	}
	tests := []struct {
		ti, rep int
		want    state.CellStatus
		output  string
	}{
		{0, 0, state.Completed, "Paris"},
		{0, 1, state.Completed, "London"}, // inspect's I is not a check: a judge decides it
		{1, 0, state.Failed, ""},          // a call, and the test offered no tools
		{1, 1, state.Cancelled, ""},
		{2, 0, state.Errored, ""},
	}
	for _, tt := range tests {
		c := b.Cell(tt.ti, 0, tt.rep)
		if c.Status != tt.want || c.Said().Output != tt.output {
			t.Errorf("%s run %d: %s %q, want %s %q", b.Tests[tt.ti].ID, tt.rep+1, c.Status, c.Said().Output, tt.want, tt.output)
		}
	}
	if c := b.Cell(1, 0, 0); len(c.Said().ToolCalls) != 1 || c.Said().ToolCalls[0].Arguments != `{"city":"Oslo"}` {
		t.Errorf("tool calls %+v", c.Said().ToolCalls)
	}
	if c := b.Cell(0, 0, 0); c.Latency.Milliseconds() != 750 || c.CompletionTokens != 3 {
		t.Errorf("latency %s tokens %d", c.Latency, c.CompletionTokens)
	}
	if len(sum.Verdicts) != 1 || !strings.Contains(sum.Verdicts[0], "inspect failed 1") {
		t.Errorf("verdicts %q", sum.Verdicts)
	}
}
