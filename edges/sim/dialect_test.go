package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"pitwall/gpu/simspec"
	"strings"
	"testing"
)

var allBackends = []string{BackendOpenAI, BackendLMStudio, BackendOllama, BackendLlamaCpp, BackendVLLM}

func timeTool() map[string]any {
	return map[string]any{"type": "function", "function": map[string]any{"name": "get_time",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"zone": map[string]any{"type": "string"}}}}}
}

func forceTool(name string) map[string]any {
	return map[string]any{"type": "function", "function": map[string]any{"name": name}}
}

// calledNames is the functions a reply calls.
func calledNames(b completionBody) []string {
	var out []string
	for _, ch := range b.Choices {
		for _, tc := range ch.Message.ToolCalls {
			out = append(out, tc.Function.Name)
		}
	}
	return out
}

// A server that honours tool_choice answers a named function with a call
// of it, right or wrong, even when the oracle's answer is another tool;
// Ollama (no tool_choice field) and llama-server (tool_choice read only as
// a string) answer as with "auto". No backend calls a tool it was not
// offered, and "none" stops calls wherever it is read.
func TestToolChoiceAsEachBackendReadsIt(t *testing.T) {
	const prompts = 40
	answers := map[string]Answer{}
	for i := range prompts {
		answers[fmt.Sprintf("What time is it in zone %d?", i)] = Answer{Category: "tools", ToolName: "get_time", ToolArgs: map[string]any{"zone": fmt.Sprint(i)}}
	}
	tools := []any{weatherTool(), timeTool()}
	for _, backend := range allBackends {
		honours := backend == BackendOpenAI || backend == BackendVLLM || backend == BackendLMStudio
		readsNone := backend != BackendOllama
		t.Run(backend, func(t *testing.T) {
			cfg := instant("good", "bad")
			cfg.Spec.Backend = backend
			cfg.Catalog = map[string]simspec.Model{"good": {Skill: 1}, "bad": {Skills: map[string]float64{"tools": 0}}}
			cfg.Answers = answers
			s := start(t, cfg)
			c := client(t)
			for prompt := range answers {
				for _, model := range []string{"good", "bad"} {
					forced := complete(t, c, s, body(model, prompt, map[string]any{"tools": tools, "tool_choice": forceTool("get_weather")}))
					names := calledNames(forced)
					for _, n := range names {
						if n != "get_weather" && n != "get_time" {
							t.Fatalf("%s called %q, which was not offered", model, n)
						}
					}
					switch {
					case honours && (len(names) != 1 || names[0] != "get_weather"):
						t.Fatalf("%s answered a forced get_weather with calls %v, %q", model, names, forced.content())
					case !honours && model == "good" && (len(names) != 1 || names[0] != "get_time"):
						t.Fatalf("good model under an ignored tool_choice called %v, want the oracle's get_time", names)
					}
					none := complete(t, c, s, body(model, prompt, map[string]any{"tools": tools, "tool_choice": "none"}))
					if n := calledNames(none); readsNone && len(n) > 0 {
						t.Fatalf("%s called %v under tool_choice none", model, n)
					} else if !readsNone && model == "good" && len(n) == 0 {
						t.Fatalf("Ollama ignores tool_choice, but the good model made no call under none")
					}
				}
			}
		})
	}
}

func TestAnOracleToolThatWasNotOfferedIsNeverCalled(t *testing.T) {
	cfg := instant("m")
	cfg.Catalog = map[string]simspec.Model{"m": {Skills: map[string]float64{"tools": 0.5}}}
	cfg.Answers = map[string]Answer{}
	for i := range 100 {
		cfg.Answers[fmt.Sprintf("Search for item %d", i)] = Answer{Category: "tools", ToolName: "search_web", ToolArgs: map[string]any{"q": fmt.Sprint(i)}}
	}
	s := start(t, cfg)
	c := client(t)
	calls := 0
	for _, choice := range []string{"auto", "required"} {
		for prompt := range cfg.Answers {
			b := complete(t, c, s, body("m", prompt, map[string]any{"tools": []any{weatherTool()}, "tool_choice": choice}))
			for _, n := range calledNames(b) {
				calls++
				if n != "get_weather" {
					t.Fatalf("tool_choice %s: a call of %q, offered only get_weather", choice, n)
				}
			}
		}
	}
	if calls < 100 {
		t.Errorf("%d calls in 200 replies; required alone should make 100", calls)
	}
}

func TestToolChoiceIsRefusedWhereTheServerRefusesIt(t *testing.T) {
	for _, tc := range []struct {
		backend    string
		toolChoice any
		status     int
		message    string // part of the error message
	}{
		{BackendOpenAI, forceTool("nope"), 400, `function "nope" is not among the tools offered`},
		{BackendOpenAI, "sometimes", 400, `"sometimes" is not one of`},
		{BackendVLLM, forceTool("nope"), 400, `function "nope"`},
		{BackendLlamaCpp, "sometimes", 400, "Invalid tool_choice: sometimes"},
		{BackendLlamaCpp, forceTool("nope"), 200, ""}, // an object reads as auto
		{BackendOllama, "sometimes", 200, ""},
		{BackendOllama, forceTool("nope"), 200, ""},
	} {
		t.Run(fmt.Sprintf("%s %v", tc.backend, tc.toolChoice), func(t *testing.T) {
			cfg := instant("m")
			cfg.Spec.Backend = tc.backend
			s := start(t, cfg)
			status, _, out := post(t, client(t), s, body("m", "hi", map[string]any{"tools": []any{weatherTool()}, "tool_choice": tc.toolChoice}))
			if status != tc.status {
				t.Fatalf("status %d, want %d: %s", status, tc.status, out)
			}
			if tc.status != 200 {
				if e := decodeError(t, out); !strings.Contains(e.Error.Message, tc.message) {
					t.Errorf("message %q lacks %q", e.Error.Message, tc.message)
				}
			}
			if tc.backend == BackendOpenAI && !contains(out, `"param":"tool_choice"`) {
				t.Errorf("OpenAI names the param at fault: %s", out)
			}
		})
	}
}

// n answers as the backend does: OpenAI and vLLM give n choices,
// llama-server up to its slots, Ollama and LM Studio one.
func TestNChoicesAsEachBackendAnswersThem(t *testing.T) {
	for _, tc := range []struct {
		backend string
		slots   int
		n       int
		status  int
		choices int
		message string
	}{
		{BackendOpenAI, 1, 3, 200, 3, ""},
		{BackendOpenAI, 1, 0, 400, 0, "Invalid 'n'"},
		{BackendOpenAI, 1, 129, 400, 0, "Invalid 'n'"},
		{BackendVLLM, 1, 3, 200, 3, ""},
		{BackendLlamaCpp, 3, 3, 200, 3, ""},
		{BackendLlamaCpp, 2, 3, 400, 0, "n_cmpl cannot be greater than the number of slots, please increase -np"},
		{BackendOllama, 1, 3, 200, 1, ""},
		{BackendLMStudio, 1, 3, 200, 1, ""},
	} {
		t.Run(fmt.Sprintf("%s slots %d n %d", tc.backend, tc.slots, tc.n), func(t *testing.T) {
			cfg := instant("m")
			cfg.Spec.Backend = tc.backend
			cfg.Slots = tc.slots
			s := start(t, cfg)
			c := client(t)
			req := body("m", "Tell me about rivers.", map[string]any{"n": tc.n})
			status, _, out := post(t, c, s, req)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %s", status, tc.status, out)
			}
			if tc.status != 200 {
				if e := decodeError(t, out); !strings.Contains(e.Error.Message, tc.message) {
					t.Errorf("message %q lacks %q", e.Error.Message, tc.message)
				}
				if s.Stats().Requests != 0 {
					t.Errorf("a refused request counted as accepted")
				}
				return
			}
			var cb completionBody
			if err := json.Unmarshal(out, &cb); err != nil {
				t.Fatal(err)
			}
			if len(cb.Choices) != tc.choices {
				t.Fatalf("%d choices, want %d", len(cb.Choices), tc.choices)
			}
			contents := map[string]bool{}
			tokens := 0
			for i, ch := range cb.Choices {
				var idx struct {
					Choices []struct{ Index int } `json:"choices"`
				}
				_ = json.Unmarshal(out, &idx)
				if idx.Choices[i].Index != i || ch.FinishReason != "stop" || ch.Message.Content == nil {
					t.Errorf("choice %d: index %d, finish %q", i, idx.Choices[i].Index, ch.FinishReason)
					continue
				}
				contents[*ch.Message.Content] = true
				tokens += countTokens(*ch.Message.Content)
			}
			if len(contents) != tc.choices {
				t.Errorf("%d distinct replies among %d choices; each choice is its own sample", len(contents), tc.choices)
			}
			if cb.Usage.CompletionTokens != tokens {
				t.Errorf("usage counts %d completion tokens, the choices hold %d", cb.Usage.CompletionTokens, tokens)
			}
			// Streamed, the same choices arrive by index, each with its own
			// role chunk and finish_reason.
			_, ev := streamChat(t, c, s, body("m", "Tell me about rivers.", map[string]any{"n": tc.n, "stream": true,
				"stream_options": map[string]any{"include_usage": true}}))
			byIndex := map[int]string{}
			finishes := map[int]int{}
			roles := map[int]int{}
			for _, d := range ev.data {
				if d == "[DONE]" {
					continue
				}
				var ch wireChunk
				if err := json.Unmarshal([]byte(d), &ch); err != nil {
					t.Fatal(err)
				}
				for _, c := range ch.Choices {
					if c.Delta.Content != nil {
						byIndex[c.Index] += *c.Delta.Content
					}
					if c.Delta.Role == "assistant" {
						roles[c.Index]++
					}
					if c.FinishReason != nil {
						finishes[c.Index]++
					}
				}
			}
			for i, ch := range cb.Choices {
				wantRoles := 1
				if tc.backend == BackendOllama { // on every delta
					wantRoles = roles[i]
				}
				if byIndex[i] != *ch.Message.Content || finishes[i] != 1 || roles[i] != wantRoles || roles[i] == 0 {
					t.Errorf("streamed choice %d: %d role chunks, %d finishes, content equal %v", i, roles[i], finishes[i], byIndex[i] == *ch.Message.Content)
				}
			}
			if len(byIndex) != tc.choices {
				t.Errorf("streamed %d choices, want %d", len(byIndex), tc.choices)
			}
		})
	}
}

func TestRetrieveModelAsEachBackendServesIt(t *testing.T) {
	models := []string{"gpt-4o-mini", "lmstudio-community/qwen3-8b", "qwen3:8b", "hf.co/bartowski/Llama-3.2-1B:Q4_K_M"}
	for _, tc := range []struct {
		backend string
		serves  bool
		owners  []string // owned_by per model
	}{
		{BackendOpenAI, true, []string{"system", "system", "system", "system"}},
		{BackendOllama, true, []string{"library", "", "library", ""}}, // "" : no route for an id with a slash
		{BackendLMStudio, false, nil},
		{BackendLlamaCpp, false, nil},
		{BackendVLLM, false, nil},
	} {
		t.Run(tc.backend, func(t *testing.T) {
			cfg := instant(models...)
			cfg.Spec.Backend = tc.backend
			cfg.Catalog = map[string]simspec.Model{"hf.co/bartowski/Llama-3.2-1B:Q4_K_M": {SizeGB: 1}}
			s := start(t, cfg)
			c := client(t)
			_, listed := get(t, c, s, "/v1/models")
			for i, m := range models {
				// The Python SDK puts the id in the path as it is; the Node
				// SDK escapes its slashes.
				for _, path := range []string{m, strings.ReplaceAll(m, "/", "%2F")} {
					status, out := get(t, c, s, "/v1/models/"+path)
					if tc.serves && tc.owners[i] == "" {
						if status != http.StatusNotFound || string(out) != "404 page not found" {
							t.Errorf("GET /v1/models/%s: %d %s, want Ollama's plain 404", path, status, out)
						}
						continue
					}
					if !tc.serves {
						if status != http.StatusNotFound {
							t.Errorf("GET /v1/models/%s: %d %s, want the backend's 404", path, status, out)
						}
						decodeError(t, out)
						continue
					}
					var got map[string]any
					if err := json.Unmarshal(out, &got); err != nil || status != 200 {
						t.Fatalf("GET /v1/models/%s: %d %s", path, status, out)
					}
					want := map[string]any{"id": m, "object": "model", "owned_by": tc.owners[i]}
					for k, v := range want {
						if got[k] != v {
							t.Errorf("GET /v1/models/%s: %s = %v, want %v", path, k, got[k], v)
						}
					}
					if _, ok := got["created"].(float64); !ok || len(got) != 4 {
						t.Errorf("GET /v1/models/%s: %s, want id, object, created and owned_by", path, out)
					}
					if !contains(listed, string(out)) {
						t.Errorf("the model list %s does not hold %s", listed, out)
					}
				}
			}
			status, out := get(t, c, s, "/v1/models/nope:latest")
			if status != http.StatusNotFound {
				t.Fatalf("unknown model: %d %s", status, out)
			}
			if tc.backend == BackendOpenAI && string(out) != `{"error":{"code":"model_not_found","message":"The model `+"`nope:latest`"+` does not exist or you do not have access to it.","param":null,"type":"invalid_request_error"}}` {
				t.Errorf("unknown model: %s", out)
			}
			if tc.backend == BackendOllama && string(out) != `{"error":{"code":null,"message":"model 'nope:latest' not found","param":null,"type":"api_error"}}` {
				t.Errorf("unknown model: %s", out)
			}
		})
	}
}

// Ollama's chunks, as v0.17.4 sends them: role on every delta and no
// separate role chunk, a tool call whole in one delta with its index, a
// finishing delta of role and "" content; a message beside tool calls has
// content "" and indexed calls; max_completion_tokens is not read.
func TestOllamaChunksAsOllamaSendsThem(t *testing.T) {
	cfg := instant("m")
	cfg.Spec.Backend = BackendOllama
	cfg.Catalog = map[string]simspec.Model{"m": {Skill: 1, ReplyTokens: 100}}
	cfg.Answers = map[string]Answer{"Weather in Oslo?": {ToolName: "get_weather", ToolArgs: map[string]any{"city": "Oslo", "units": "metric"}}}
	s := start(t, cfg)
	c := client(t)
	tools := map[string]any{"tools": []any{weatherTool()}}

	_, _, out := post(t, c, s, body("m", "Weather in Oslo?", tools))
	if !contains(out, `"message":{"role":"assistant","content":"","tool_calls":[{"index":0,"id":"call_`) {
		t.Errorf("message beside a tool call: %s", out)
	}
	tools["stream"] = true
	_, ev := streamChat(t, c, s, body("m", "Weather in Oslo?", tools))
	a := assemble(t, ev)
	var callDeltas int
	for i, ch := range a.chunks {
		d := ch.Choices[0].Delta
		if d.Role != "assistant" {
			t.Errorf("chunk %d: role %q; Ollama puts it on every delta", i, d.Role)
		}
		if len(d.ToolCalls) > 0 {
			callDeltas++
			if tc := d.ToolCalls[0]; tc.ID == "" || tc.Function.Name != "get_weather" || tc.Function.Arguments != `{"city":"Oslo","units":"metric"}` {
				t.Errorf("tool call delta %+v, want the whole call", tc)
			}
		}
	}
	if callDeltas != 1 || a.finish != "tool_calls" {
		t.Errorf("%d tool call deltas, finish %q", callDeltas, a.finish)
	}
	last := a.chunks[len(a.chunks)-1].Choices[0].Delta
	if last.Content == nil || *last.Content != "" {
		t.Errorf("finishing delta %+v, want role and empty content", last)
	}

	_, ev = streamChat(t, c, s, body("m", "Tell me about rivers.", map[string]any{"stream": true}))
	if first := assemble(t, ev).chunks[0].Choices[0].Delta; first.Content == nil || *first.Content == "" {
		t.Errorf("first chunk %+v: Ollama sends no empty role chunk", first)
	}
	for _, tc := range []struct {
		field string
		want  func(n int) bool
	}{
		{"max_completion_tokens", func(n int) bool { return n > 5 }},
		{"max_tokens", func(n int) bool { return n == 5 }},
	} {
		if got := complete(t, c, s, body("m", "Tell me about rivers.", map[string]any{tc.field: 5})).Usage.CompletionTokens; !tc.want(got) {
			t.Errorf("%s 5: %d completion tokens", tc.field, got)
		}
	}
}
