package runner

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"pitwall/config"
	"pitwall/runner/state"
)

// agentBattery is one agent test: list downloads/, then deal with each
// file. Its checks read the whole trajectory, and its final turn.
const agentBattery = `
[[tests]]
id = "sort"
category = "agent"
mode = "agent"
max_iterations = 7
user = "Sort the files in downloads/ into docs/ and images/."
tool_choice = "required"
criteria = "Lists downloads/, reads each file, and says where each one belongs."
  [[tests.tools]]
  type = "function"
  function = { name = "list_dir", parameters = { type = "object", properties = { path = { type = "string" } }, required = ["path"] } }
  [[tests.tools]]
  type = "function"
  function = { name = "read_file", parameters = { type = "object", properties = { path = { type = "string" } }, required = ["path"] } }
  [[tests.tools]]
  type = "function"
  function = { name = "move_file", parameters = { type = "object", properties = { src = { type = "string" }, dst = { type = "string" } }, required = ["src", "dst"] } }
  [tests.mock_tools]
  list_dir = { "downloads/" = "a.pdf\nb.png" }
  read_file = { "a.pdf" = "%PDF report", "b.png" = "PNG image", _default = "(empty file)" }
  move_file = { "a.pdf" = "moved a.pdf" }
  [[tests.checks]]
  type = "tool-call"
  name = "list_dir"
  args = { path = "downloads/" }
  [[tests.checks]]
  type = "tool-call"
  name = "read_file"
  args = { path = "b.png" }
  [[tests.checks]]
  type = "contains"
  value = "Sorted"
  [[tests.checks]]
  type = "no-tool-call"
  scope = "final"
`

// scriptCall is one tool call a scripted model makes.
type scriptCall struct{ id, name, args string }

// agentScripts say what each scripted model does at each turn of the loop
// (turn 0 first): calls, or a final answer when it makes none.
var agentScripts = map[string]func(turn int) (string, []scriptCall){
	// Lists, reads both files at once (one call without an id), answers.
	"clean": func(turn int) (string, []scriptCall) {
		switch turn {
		case 0:
			return "Listing first.", []scriptCall{{"l1", "list_dir", `{"path": "downloads/"}`}}
		case 1:
			return "", []scriptCall{{"r1", "read_file", `{"path":"a.pdf"}`}, {"", "read_file", `{"path":"b.png"}`}}
		}
		return "Sorted: a.pdf to docs/, b.png to images/.", nil
	},
	// Reads another file every turn and never answers.
	"busy": func(turn int) (string, []scriptCall) {
		return "", []scriptCall{{fmt.Sprintf("b%d", turn), "read_file", fmt.Sprintf(`{"path":"f%d.txt"}`, turn)}}
	},
	// Lists the same folder over and over, its arguments spaced differently.
	"stuck": func(turn int) (string, []scriptCall) {
		args := `{"path":"downloads/"}`
		if turn%2 == 1 {
			args = `{ "path" : "downloads/" }`
		}
		return "Let me look again.", []scriptCall{{fmt.Sprintf("s%d", turn), "list_dir", args}}
	},
	// Reads a.pdf, b.png, a.pdf, b.png, …: a cycle of two calls.
	"cycle": func(turn int) (string, []scriptCall) {
		return "", []scriptCall{{fmt.Sprintf("c%d", turn), "read_file", []string{`{"path":"a.pdf"}`, `{"path":"b.png"}`}[turn%2]}}
	},
	// Calls a tool the test does not offer at its second turn.
	"invalid": func(turn int) (string, []scriptCall) {
		if turn == 0 {
			return "", []scriptCall{{"i1", "list_dir", `{"path":"downloads/"}`}}
		}
		return "", []scriptCall{{"i2", "delete_file", `{"path":"a.pdf"}`}}
	},
	// Sends arguments that are not JSON.
	"broken": func(int) (string, []scriptCall) {
		return "", []scriptCall{{"x1", "read_file", `{"path": "a.pdf"`}}
	},
	// Lists the folder three times, then answers: prompt-prix looks for a
	// cycle only once six calls are made, so this is no stagnation.
	"thrice": func(turn int) (string, []scriptCall) {
		if turn < 3 {
			return "", []scriptCall{{fmt.Sprintf("t%d", turn), "list_dir", `{"path":"downloads/"}`}}
		}
		return "Sorted: nothing to read.", nil
	},
	// Lists, reads both files, then ends with DONE (beside a call that is
	// then never run), its answer in DONE's response argument.
	"done": func(turn int) (string, []scriptCall) {
		switch turn {
		case 0:
			return "", []scriptCall{{"d1", "list_dir", `{"path":"downloads/"}`}}
		case 1:
			return "", []scriptCall{{"d2", "read_file", `{"path":"a.pdf"}`}, {"d3", "read_file", `{"path":"b.png"}`}}
		}
		return "All done.", []scriptCall{{"d4", "move_file", `{"src":"a.pdf","dst":"docs/"}`},
			{"d5", "DONE", `{"response":"Sorted: a.pdf to docs/, b.png to images/."}`}}
	},
	// Calls a tool it was not offered, then sends unreadable arguments,
	// each time under the same id, and recovers from both.
	"recovers": func(turn int) (string, []scriptCall) {
		switch turn {
		case 0:
			return "", []scriptCall{{"same", "delete_file", `{"path":"a.pdf"}`}}
		case 1:
			return "", []scriptCall{{"same", "list_dir", `{"path": "downloads/"`}}
		case 2:
			return "", []scriptCall{{"same", "list_dir", `{"path":"downloads/"}`}}
		case 3:
			return "", []scriptCall{{"same", "read_file", `{"path":"b.png"}`}}
		}
		return "Sorted: b.png to images/.", nil
	},
	// Makes a call no mock answers, then answers anyway.
	"unmocked": func(turn int) (string, []scriptCall) {
		if turn == 0 {
			return "", []scriptCall{{"u1", "move_file", `{"src":"x.doc","dst":"docs/"}`}}
		}
		return "Sorted nothing: x.doc could not be moved.", nil
	},
}

// agentServer is an OpenAI-compatible server whose models play
// agentScripts, and whose model "judge" passes whatever it is shown. It
// keeps every request body, can fail one request of a model with a 500,
// and can hang a model at a turn until the client goes away.
type agentServer struct {
	mu      sync.Mutex
	bodies  map[string][]map[string]any // by model
	failAt  map[string]int              // model → its n-th request (1-based) answers 500
	hangAt  map[string]int              // model → the turn at which it hangs
	hanging chan string                 // a model that began to hang
}

func newAgentServer() *agentServer {
	return &agentServer{bodies: map[string][]map[string]any{}, failAt: map[string]int{}, hangAt: map[string]int{},
		hanging: make(chan string, 8)}
}

func (s *agentServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/v1/models" {
		var data []string
		for m := range agentScripts {
			data = append(data, fmt.Sprintf(`{"id":%q,"object":"model"}`, m))
		}
		data = append(data, `{"id":"judge","object":"model"}`, `{"id":"slow","object":"model"}`, `{"id":"flaky","object":"model"}`)
		fmt.Fprintf(w, `{"object":"list","data":[%s]}`, strings.Join(data, ","))
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(raw, &body)
	var all map[string]any
	_ = json.Unmarshal(raw, &all)
	s.mu.Lock()
	s.bodies[body.Model] = append(s.bodies[body.Model], all)
	n := len(s.bodies[body.Model])
	fail := s.failAt[body.Model] == n
	hang, hangs := s.hangAt[body.Model]
	s.mu.Unlock()
	if fail {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `{"error":{"message":"overloaded","type":"server_error"}}`)
		return
	}
	turn := 0
	for _, m := range body.Messages {
		switch m.Role {
		case "user":
			turn = 0
		case "assistant":
			turn++
		}
	}
	if hangs && turn == hang {
		s.hanging <- body.Model
		<-r.Context().Done()
		return
	}
	var content string
	var calls []scriptCall
	switch script, ok := agentScripts[body.Model]; {
	case body.Model == "judge":
		content = "The agent listed the folder and read both files.\nVERDICT: PASS"
	case body.Model == "slow" || body.Model == "flaky":
		content, calls = agentScripts["clean"](turn)
	case ok:
		content, calls = script(turn)
	}
	streamReply(w, body.Model, content, calls)
}

// streamReply writes a streamed chat completion: the text, then each call
// (its id and name, then its arguments), then the finish and the usage.
func streamReply(w http.ResponseWriter, model, content string, calls []scriptCall) {
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any) {
		b, _ := json.Marshal(map[string]any{"id": "c", "object": "chat.completion.chunk", "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	chunk(map[string]any{"role": "assistant", "content": content}, nil)
	for i, c := range calls {
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.id, "type": "function",
			"function": map[string]any{"name": c.name, "arguments": ""}}}}, nil)
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": c.args}}}}, nil)
	}
	finish := "stop"
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	chunk(map[string]any{}, finish)
	fmt.Fprintf(w, "data: %s\n\n", `{"id":"c","object":"chat.completion.chunk","model":"m","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":4,"total_tokens":14}}`)
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// agentConfig loads a config of battery and body, the models given.
func agentConfig(t *testing.T, battery, body string, models ...string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "battery.toml"), []byte(battery), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "pitwall.toml")
	head := fmt.Sprintf("name = \"agents\"\nbattery = \"battery.toml\"\nmodels = [%s]\ndb = %s\n",
		`"`+strings.Join(models, `", "`)+`"`, quote(filepath.Join(dir, "ledger.db")))
	if err := os.WriteFile(path, []byte(head+body), 0o644); err != nil {
		t.Fatal(err)
	}
	return loadConfig(t, path)
}

func scriptedAgents(t *testing.T, srv *agentServer, scoring string, models ...string) *harness {
	t.Helper()
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	cfg := agentConfig(t, agentBattery, fmt.Sprintf(`
[run]
retries = 1
temperature = 0.0
[[servers]]
name = "s"
url = %q
kind = "openai"
slots = 4
%s`, ts.URL+"/v1", scoring), models...)
	return newHarness(t, cfg, true)
}

// loopCheck is a cell's agent-loop result.
func loopCheck(t *testing.T, c *state.Cell) (pass bool, reason string) {
	t.Helper()
	for _, r := range c.Said().Checks {
		if r.Name == "agent-loop" {
			return r.Pass, r.Reason
		}
	}
	t.Fatalf("%s: no agent-loop check in %+v", c.Model, c.Said().Checks)
	return false, ""
}
