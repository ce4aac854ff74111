package promptfoo

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// wireServer answers every prompt with the same text and records, per
// prompt, the names of the tools the request offered: what a tool put on
// the wire, which is what the two must agree on.
type wireServer struct {
	*httptest.Server
	mu    sync.Mutex
	tools map[string]string // prompt → tool names, sorted, comma-joined ("" for none)
}

func newWireServer(t *testing.T) *wireServer {
	s := &wireServer{tools: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[{"id":"fixed","object":"model","owned_by":"suite"}]}`)
	})
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string `json:"model"`
			Stream   bool   `json:"stream"`
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
			Tools []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tools"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		prompt := ""
		for _, m := range req.Messages {
			if m.Role == "user" {
				prompt, _ = m.Content.(string)
			}
		}
		var names []string
		for _, tl := range req.Tools {
			names = append(names, tl.Function.Name)
		}
		slices.Sort(names)
		s.mu.Lock()
		s.tools[strings.TrimSpace(prompt)] = strings.Join(names, ",")
		s.mu.Unlock()
		const content = "Paris is the answer."
		if req.Stream {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":%q,\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":%q},\"finish_reason\":null}]}\n\n", req.Model, content)
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":%q,\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":5,\"total_tokens\":10}}\n\ndata: [DONE]\n\n", req.Model)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "c", "object": "chat.completion", "created": 1, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": content}, "finish_reason": "stop"}},
			"usage":   map[string]any{"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}})
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// take returns what was recorded and starts afresh.
func (s *wireServer) take() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	got := s.tools
	s.tools = map[string]string{}
	return got
}

func wireTool(name string) string {
	return fmt.Sprintf("{type: function, function: {name: %s, parameters: {type: object, properties: {}}}}", name)
}

// wireYAML: a test on the config's provider, one whose options.provider
// (promptfoo's grader) has tools, one with a provider of its own with
// tools, one naming a provider by id alone, and assertions written as
// $ref to assertionTemplates (keys beside the $ref laid over it).
func wireYAML(base string) string {
	own := fmt.Sprintf("{id: 'openai:chat:fixed', config: {apiBaseUrl: '%s/v1', apiKey: suite, tools: [%s]}}", base, wireTool("own_tool"))
	return fmt.Sprintf(`description: what goes on the wire
assertionTemplates:
  saysParis: {type: contains, value: Paris}
  saysLondon: {type: contains, value: London}
prompts: ["{{q}}"]
providers:
  - id: openai:chat:fixed
    config: {apiBaseUrl: '%s/v1', apiKey: suite, temperature: 0, tools: [%s]}
tests:
  - description: w-plain
    metadata: {test_id: w-plain}
    vars: {q: w-plain}
    assert:
      - {metric: a00, $ref: "#/assertionTemplates/saysParis"}
      - {metric: a01, $ref: "#/assertionTemplates/saysLondon"}
      - {metric: a02, $ref: "#/assertionTemplates/saysLondon", type: not-contains}
  - description: w-grader
    metadata: {test_id: w-grader}
    vars: {q: w-grader}
    options: {provider: {config: {tools: [%s], tool_choice: required}}}
    assert:
      - {metric: a00, type: contains, value: Paris}
  - description: w-own
    metadata: {test_id: w-own}
    vars: {q: w-own}
    provider: %s
    assert:
      - {metric: a00, type: contains, value: Paris}
  - description: w-by-id
    metadata: {test_id: w-by-id}
    vars: {q: w-by-id}
    provider: openai:chat:fixed
    assert:
      - {metric: a00, type: contains, value: Paris}
`, base, wireTool("from_config"), wireTool("for_grader"), own)
}

// TestPitwallSendsTheToolsPromptfooSends runs the config through both and
// compares, per test, the tools the model was offered, and the verdicts of
// the $ref assertions.
func TestPitwallSendsTheToolsPromptfooSends(t *testing.T) {
	requirePromptfoo(t)
	srv := newWireServer(t)
	// A provider named by id alone reads its base URL from the environment.
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "wire.yaml")
	if err := os.WriteFile(cfg, []byte(wireYAML(srv.URL)), 0o644); err != nil {
		t.Fatal(err)
	}
	pfCells := map[string]verdict{}
	pf := runPromptfoo(t, dir, cfg, pfCells, false)
	pfWire := srv.take()
	pw := runPitwallCells(t, dir, cfg, srv.URL)
	pwWire := srv.take()
	want := map[string]string{"w-plain": "from_config", "w-grader": "from_config", "w-own": "own_tool", "w-by-id": ""}
	agree := 0
	for _, id := range slices.Sorted(maps.Keys(want)) {
		p, okP := pfWire[id]
		w, okW := pwWire[id]
		switch {
		case !okP || !okW:
			t.Errorf("%s: no request (promptfoo %v, pitwall %v)", id, okP, okW)
		case p != w:
			t.Errorf("%s: promptfoo offered the model [%s], pitwall [%s]", id, p, w)
		default:
			agree++
			if p != want[id] {
				t.Errorf("%s: both offered [%s]; this suite was written when promptfoo 0.123.1 offered [%s]", id, p, want[id])
			}
		}
	}
	verdicts := 0
	for id, metrics := range pf {
		cell, ok := pw[id]
		if !ok {
			t.Errorf("%s: pitwall has no cell", id)
			continue
		}
		checks := cell.checks[len(cell.checks)-len(metrics):]
		for i := 0; i < len(metrics); i++ {
			m := fmt.Sprintf("a%02d", i)
			if metrics[m].pass != checks[i].pass {
				t.Errorf("%s %s: promptfoo pass=%v (%s), pitwall pass=%v (%s)", id, m, metrics[m].pass, clip(metrics[m].reason), checks[i].pass, clip(checks[i].reason))
				continue
			}
			verdicts++
		}
	}
	if verdicts < 6 {
		t.Errorf("%d verdicts compared, want the 6 assertions", verdicts)
	}
	t.Logf("agreement: %d of %d tests offer the same tools; %d assertions agree", agree, len(want), verdicts)
}
