package importrun

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pitwall/gpu/chat"
	"pitwall/runner/state"
)

// The fixture is a prompt-prix battery of 15 tests and a results export of
// 6 models that answered it, written by the tests: tool calls in
// prompt-prix's rendering (whole, and in the streamed fragments older
// versions wrote), in LiquidAI's and Hermes' raw tokens, wrong calls, text
// answers, errors, a cancelled cell and a cell missing from the export.
// Each cell says what pitwall must make of it.

type fxKind int

const (
	fxWeather  fxKind = iota // tool_choice required, get_weather(city)
	fxGreet                  // tools offered, tool_choice auto: answer with a word, no call
	fxNone                   // tool_choice none: answer in text
	fxParallel               // two calls at once
)

type fxTest struct {
	id   string
	kind fxKind
	city string // fxWeather
	word string // fxGreet
}

// fxCell is one cell of the export and what pitwall must make of it.
type fxCell struct {
	model, test string // model as the export writes it (with a server prefix or not)
	status      string // prompt-prix's status; "" leaves the cell out of the export
	response    string
	err         string
	want        state.CellStatus
	wantCalls   []chat.ToolCall
}

var fxCities = []string{"Tokyo", "Paris", "Rome", "Oslo", "Lima", "Cairo", "Quito", "Seoul", "Dakar", "Hanoi"}

func fxTests() []fxTest {
	var out []fxTest
	for i, c := range fxCities {
		out = append(out, fxTest{id: fmt.Sprintf("weather_%02d", i+1), kind: fxWeather, city: c})
	}
	for i, w := range []string{"apple", "banana", "cherry"} {
		out = append(out, fxTest{id: fmt.Sprintf("greet_%02d", i+11), kind: fxGreet, word: w})
	}
	out = append(out, fxTest{id: "none_14", kind: fxNone}, fxTest{id: "parallel_15", kind: fxParallel})
	return out
}

// fxBattery writes the battery in prompt-prix's JSON.
func fxBattery(t *testing.T, dir string) string {
	t.Helper()
	weather := map[string]any{"type": "function", "function": map[string]any{"name": "get_weather",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}},
			"required": []string{"city"}}}}
	var prompts []map[string]any
	for _, ft := range fxTests() {
		p := map[string]any{"id": ft.id, "category": "tools", "system": "You have one tool, get_weather.", "tools": []any{weather}}
		switch ft.kind {
		case fxWeather:
			p["user"], p["tool_choice"] = "What's the weather in "+ft.city+"?", "required"
			p["expected"] = map[string]any{"tool_name": "get_weather", "params": map[string]any{"city": ft.city}}
		case fxGreet:
			p["category"] = "text"
			p["user"], p["tool_choice"] = "Say the word "+ft.word+" and nothing else.", "auto"
			p["expected"] = map[string]any{"response_contains": ft.word, "no_tool_call": true}
		case fxNone:
			p["category"] = "text"
			p["user"], p["tool_choice"] = "Is it sunny? Answer without tools.", "none"
			p["expected"] = map[string]any{"response_contains": "sunny"}
		case fxParallel:
			p["user"], p["tool_choice"] = "What's the weather in Paris and in Rome?", "required"
			p["expected"] = map[string]any{"tool_calls_count": 2}
		}
		prompts = append(prompts, p)
	}
	return writeJSON(t, filepath.Join(dir, "battery.json"), map[string]any{"test_suite": "fixture", "prompts": prompts})
}

func writeJSON(t *testing.T, path string, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func call(city string) chat.ToolCall {
	return chat.ToolCall{Name: "get_weather", Arguments: fmt.Sprintf(`{"city":%q}`, city)}
}

// Encodings of calls in a reply's text.
func renderPP(calls ...chat.ToolCall) string {
	var b strings.Builder
	for _, c := range calls {
		fmt.Fprintf(&b, "\n**Tool Call:** `%s`\n```json\n%s\n```\n", c.Name, c.Arguments)
	}
	return b.String()
}

// renderFragments is an older prompt-prix's rendering of a streamed call:
// one fence per fragment of the arguments.
func renderFragments(c chat.ToolCall) string {
	a := c.Arguments
	third := len(a) / 3
	return fmt.Sprintf("\n**Tool Call:** `%s`\n```json\n%s\n```\n```json\n%s\n```\n```json\n%s\n```\n",
		c.Name, a[:third], a[third:2*third], a[2*third:])
}

func renderLFM(cities ...string) string {
	parts := make([]string, len(cities))
	for i, c := range cities {
		parts[i] = fmt.Sprintf("get_weather(city=%q)", c)
	}
	return "<|tool_call_start|>[" + strings.Join(parts, ", ") + "]<|tool_call_end|>"
}

func renderHermes(city string) string {
	return fmt.Sprintf(`<tool_call>{"name": "get_weather", "arguments": {"city": %q}}</tool_call>`, city)
}

// fxModels are the export's model ids; two carry server prefixes.
var fxModels = []string{"0: qwen3-8b", "1: lfm2-1.2b-tool", "gemma-3-12b", "llama-3.1-8b", "mistral-7b", "phi-4-mini"}

// fxCells is the whole grid, cell by cell.
func fxCells() []fxCell {
	var out []fxCell
	for _, ft := range fxTests() {
		for _, m := range fxModels {
			out = append(out, fxCellOf(m, ft))
		}
	}
	return out
}

func fxCellOf(model string, ft fxTest) fxCell {
	c := fxCell{model: model, test: ft.id, status: "completed", want: state.Completed}
	answer := func(text string) { c.response = text }
	calls := func(resp string, cs ...chat.ToolCall) { c.response, c.wantCalls = resp, cs }
	switch model {
	case "0: qwen3-8b": // prompt-prix's rendering, all correct
		switch ft.kind {
		case fxWeather:
			calls(renderPP(call(ft.city)), call(ft.city))
		case fxParallel:
			calls("Checking both."+renderPP(call("Paris"), call("Rome")), call("Paris"), call("Rome"))
		case fxGreet:
			answer(ft.word)
		case fxNone:
			answer("Yes, it is sunny.")
		}
	case "1: lfm2-1.2b-tool": // raw LFM tokens; the parallel test makes one call only
		switch ft.kind {
		case fxWeather:
			calls(renderLFM(ft.city), call(ft.city))
		case fxParallel:
			calls(renderLFM("Paris"), call("Paris"))
			c.status, c.want = "semantic_failure", state.Failed
		case fxGreet:
			answer(ft.word + ".")
		case fxNone: // calls a tool when told not to: prompt-prix missed it
			calls(renderLFM("Oslo"), call("Oslo"))
			c.want = state.Failed
		}
	case "gemma-3-12b": // an older prompt-prix's fragments; a wrong city on weather_03
		switch ft.kind {
		case fxWeather:
			city := ft.city
			if ft.id == "weather_03" {
				city = "Milan"
				c.want = state.Failed // prompt-prix did not check params: it said completed
			}
			calls(renderFragments(call(city)), call(city))
		case fxParallel:
			calls(renderFragments(call("Paris"))+renderFragments(call("Rome")), call("Paris"), call("Rome"))
		case fxGreet:
			answer("The word is " + ft.word)
		case fxNone:
			answer("It is sunny today.")
		}
	case "llama-3.1-8b": // errors, and text where a call was required
		switch {
		case ft.kind == fxWeather && ft.id <= "weather_03":
			c.status, c.err, c.want = "error", "LM Studio error for 'llama-3.1-8b': timed out after 300s", state.Errored
		case ft.kind == fxWeather:
			answer("I cannot check the weather, but " + ft.city + " is usually mild.")
			c.status, c.want = "semantic_failure", state.Failed
		case ft.kind == fxParallel:
			c.status, c.err, c.want = "error", "HTTP 500: internal server error", state.Errored
		case ft.kind == fxGreet:
			answer(ft.word)
		case ft.kind == fxNone:
			answer("Sunny? I cannot tell.") // lacks "sunny" in lower case
			c.want = state.Failed
		}
	case "mistral-7b": // prompt-prix said semantic_failure on good calls: pitwall checks again
		switch ft.kind {
		case fxWeather:
			calls(renderPP(call(ft.city)), call(ft.city))
			if ft.id == "weather_05" || ft.id == "weather_06" {
				c.status = "semantic_failure"
			}
		case fxParallel:
			calls(renderPP(call("Paris"), call("Rome")), call("Paris"), call("Rome"))
		case fxGreet:
			answer(ft.word)
		case fxNone:
			answer("sunny")
		}
	case "phi-4-mini": // Hermes tokens; a cancelled cell and one missing from the export
		switch {
		case ft.id == "weather_09":
			c.status, c.err, c.want = "error", "Battery run cancelled by user", state.Cancelled
		case ft.id == "weather_10":
			c.status, c.want = "", state.Cancelled
		case ft.kind == fxWeather:
			calls("Let me look.\n"+renderHermes(ft.city), call(ft.city))
		case ft.kind == fxParallel:
			calls(renderHermes("Paris")+"\n"+renderHermes("Rome"), call("Paris"), call("Rome"))
		case ft.kind == fxGreet:
			answer(ft.word)
		case ft.kind == fxNone:
			answer("It is sunny.")
		}
	}
	return c
}

// fxExport writes the results export of cells.
func fxExport(t *testing.T, path string, cells []fxCell) string {
	t.Helper()
	var tests []string
	for _, ft := range fxTests() {
		tests = append(tests, ft.id)
	}
	var results []map[string]any
	for i, c := range cells {
		if c.status == "" {
			continue
		}
		r := map[string]any{"test_id": c.test, "model_id": c.model, "status": c.status, "response": c.response,
			"latency_ms": 100.0 + float64(i), "error": nil, "failure_reason": nil, "judge_latency_ms": nil}
		if c.err != "" {
			r["error"], r["response"] = c.err, ""
		}
		if c.status == "semantic_failure" {
			r["failure_reason"] = "Expected tool call but got text"
		}
		results = append(results, r)
	}
	return writeJSON(t, path, map[string]any{"tests": tests, "models": fxModels, "results": results})
}
