package runner

import (
	"context"
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
	"time"

	"pitwall/config"
	"pitwall/gpu/chat"
	"pitwall/judge/scoring"
	"pitwall/runner/history"
	"pitwall/runner/ledger"
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
	for _, r := range c.Checks {
		if r.Name == "agent-loop" {
			return r.Pass, r.Reason
		}
	}
	t.Fatalf("%s: no agent-loop check in %+v", c.Model, c.Checks)
	return false, ""
}

func TestAgentLoopsEndAsTheyShould(t *testing.T) {
	srv := newAgentServer()
	srv.failAt["flaky"] = 2 // its second step's first try
	models := []string{"clean", "flaky", "busy", "stuck", "cycle", "invalid", "broken", "unmocked"}
	h := scriptedAgents(t, srv, `
[scoring]
mode = "judge"
[[scoring.judges]]
name = "j"
model = "judge"
server = "s"
`, models...)
	b := h.finish(t)

	tests := []struct {
		model  string
		status state.CellStatus
		steps  int
		loop   bool   // the agent-loop check passed
		reason string // in the agent-loop check's reason
	}{
		{"clean", state.Completed, 3, true, ""},
		{"flaky", state.Completed, 3, true, ""},
		{"busy", state.Failed, 7, false, "max iterations: 7 model turns"},
		{"stuck", state.Failed, 3, false, `stagnation at step 3: the model called list_dir({"path":"downloads/"}) 3 times`},
		{"cycle", state.Failed, 6, false, `stagnation at step 6: the model repeated the calls read_file({"path":"a.pdf"}) → read_file({"path":"b.png"})`},
		{"invalid", state.Failed, 2, false, `invalid call at step 2: "delete_file" is not one of the test's tools`},
		{"broken", state.Failed, 1, false, "invalid call at step 1: read_file arguments are not a JSON object"},
		{"unmocked", state.Failed, 2, true, ""},
	}
	for i, tt := range tests {
		c := b.Cell(0, i, 0)
		if c.Model != tt.model {
			t.Fatalf("cell %d is %s, want %s", i, c.Model, tt.model)
		}
		if c.Status != tt.status || len(c.Steps) != tt.steps {
			t.Errorf("%s: %s after %d steps, want %s after %d (checks %+v)", tt.model, c.Status, len(c.Steps), tt.status, tt.steps, c.Checks)
			continue
		}
		pass, reason := loopCheck(t, c)
		if pass != tt.loop || !strings.Contains(reason, tt.reason) {
			t.Errorf("%s: agent-loop %v %q, want %v with %q", tt.model, pass, reason, tt.loop, tt.reason)
		}
		judged := c.Judgment("j") != nil
		if judged != (tt.status == state.Completed) {
			t.Errorf("%s: judged %v, but only completed cells are judged", tt.model, judged)
		}
	}

	clean := b.Cell(0, 0, 0)
	t.Run("the trajectory on the cell", func(t *testing.T) {
		s2 := clean.Steps[1]
		if len(s2.Calls) != 2 || s2.Calls[0].ID != "r1" || s2.Calls[1].ID != "call_2_2" {
			t.Fatalf("step 2 calls %+v: want r1 and the id pitwall gave the call without one", s2.Calls)
		}
		if s2.Calls[0].Observation != "%PDF report" || s2.Calls[1].Observation != "PNG image" || !s2.Calls[1].Mocked {
			t.Errorf("step 2 observations %+v", s2.Calls)
		}
		if clean.Steps[0].Content != "Listing first." || clean.Output != clean.Steps[2].Content {
			t.Errorf("thought %q, output %q", clean.Steps[0].Content, clean.Output)
		}
		if len(clean.ToolCalls) != 3 || clean.CompletionTokens != 12 || clean.PromptTokens != 30 {
			t.Errorf("cell totals: %d calls, %d+%d tokens; want every call and the steps' sums", len(clean.ToolCalls), clean.PromptTokens, clean.CompletionTokens)
		}
		un := b.Cell(0, 7, 0).Steps[0].Calls[0]
		if un.Mocked || !strings.HasPrefix(un.Observation, config.NoMockPrefix) {
			t.Errorf("an unanswered call: %+v, want the error observation", un)
		}
		var failedChecks []string
		for _, r := range b.Cell(0, 7, 0).Checks {
			if !r.Pass {
				failedChecks = append(failedChecks, r.Name)
			}
		}
		if strings.Join(failedChecks, ",") != `tool-call list_dir({"path":"downloads/"}),tool-call read_file({"path":"b.png"})` {
			t.Errorf("unmocked failed %v: the trajectory's checks, not the loop", failedChecks)
		}
	})

	t.Run("the wire", func(t *testing.T) {
		srv.mu.Lock()
		bodies := srv.bodies["clean"]
		srv.mu.Unlock()
		if len(bodies) != 3 {
			t.Fatalf("%d requests of clean, want one per step", len(bodies))
		}
		if bodies[0]["tool_choice"] != "required" || bodies[1]["tool_choice"] != nil || bodies[2]["tool_choice"] != nil {
			t.Errorf("tool_choice %v %v %v: want it on the first step only", bodies[0]["tool_choice"], bodies[1]["tool_choice"], bodies[2]["tool_choice"])
		}
		msgs, _ := json.Marshal(bodies[2]["messages"])
		var got []struct {
			Role       string `json:"role"`
			Content    string `json:"content"`
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct{ Name, Arguments string }
			} `json:"tool_calls"`
		}
		if err := json.Unmarshal(msgs, &got); err != nil {
			t.Fatal(err)
		}
		var shape []string
		for _, m := range got {
			s := m.Role
			for _, c := range m.ToolCalls {
				s += " " + c.ID + ":" + c.Function.Name
			}
			if m.ToolCallID != "" {
				s += " ← " + m.ToolCallID + " " + m.Content
			}
			shape = append(shape, s)
		}
		want := []string{"user", "assistant l1:list_dir", "tool ← l1 a.pdf\nb.png",
			"assistant r1:read_file call_2_2:read_file", "tool ← r1 %PDF report", "tool ← call_2_2 PNG image"}
		if strings.Join(shape, " | ") != strings.Join(want, " | ") {
			t.Errorf("step 3 sent\n%s\nwant\n%s", strings.Join(shape, "\n"), strings.Join(want, "\n"))
		}
	})

	t.Run("the ledger", func(t *testing.T) {
		reqs, err := h.led.Requests(h.run.ID())
		if err != nil {
			t.Fatal(err)
		}
		rows := map[string][]string{}
		for _, q := range reqs {
			if q.Purpose != ledger.PurposeInference {
				continue
			}
			var p struct {
				Step int `json:"agent_step"`
				Max  int `json:"max_iterations"`
			}
			_ = json.Unmarshal([]byte(q.Params), &p)
			rows[q.Model] = append(rows[q.Model], fmt.Sprintf("%d:%d:%s", p.Step, q.Attempt, q.Status))
			if p.Max != 7 {
				t.Errorf("row %d: max_iterations %d in params", q.ID, p.Max)
			}
		}
		for model, want := range map[string]string{
			"clean": "1:1:completed 2:2:completed 3:3:completed",
			"flaky": "1:1:completed 2:2:error 2:3:completed 3:4:completed",
			"busy":  "1:1:completed 2:2:completed 3:3:completed 4:4:completed 5:5:completed 6:6:completed 7:7:completed",
		} {
			if got := strings.Join(rows[model], " "); got != want {
				t.Errorf("%s's rows (step:attempt:status) %s, want %s", model, got, want)
			}
		}
		if c := b.Cell(0, 1, 0); c.Attempts != 4 {
			t.Errorf("flaky's cell says %d attempts, want 4", c.Attempts)
		}
	})

	t.Run("the judge reads the trajectory, fenced", func(t *testing.T) {
		srv.mu.Lock()
		judged := srv.bodies["judge"]
		srv.mu.Unlock()
		if len(judged) == 0 {
			t.Fatal("the judge was never asked")
		}
		msgs := judged[0]["messages"].([]any)
		prompt := msgs[len(msgs)-1].(map[string]any)["content"].(string)
		block := prompt[strings.Index(prompt, "<candidate_output>"):strings.Index(prompt, "</candidate_output>")]
		for _, want := range []string{
			"[agent trajectory] 3 model turns, 3 tool calls, ended with a final answer",
			"[step 1]\nListing first.\n[tool call] list_dir({\"path\":\"downloads/\"})\n[observation]\na.pdf\nb.png",
			"[observation]\nPNG image",
			"[final answer]\nSorted: a.pdf to docs/, b.png to images/.",
		} {
			if !strings.Contains(block, want) {
				t.Errorf("the judge's candidate block lacks %q:\n%s", want, block)
			}
		}
		if j := clean.Judgment("j"); j == nil || j.Verdict != scoring.Pass {
			t.Errorf("clean's judgment %+v", j)
		}
	})

	t.Run("the export", func(t *testing.T) {
		x := h.export(t)
		steps := map[string][]history.ExportStep{}
		for _, c := range x.Cells {
			steps[c.Model] = c.Steps
		}
		if s := steps["clean"]; len(s) != 3 || s[1].Calls[1].ID != "call_2_2" || s[1].Calls[1].Observation == nil ||
			*s[1].Calls[1].Observation != "PNG image" || s[2].Content != clean.Output {
			t.Errorf("clean's exported steps %+v", s)
		}
		if s := steps["flaky"]; len(s) != 3 || s[1].Attempt != 3 {
			t.Errorf("flaky's exported steps %+v: want three, step 2 from attempt 3", s)
		}
		busy := steps["busy"]
		if len(busy) != 7 || busy[5].Calls[0].Observation == nil || busy[6].Calls[0].Observation != nil {
			t.Errorf("busy's exported steps %+v: observations up to the last step, whose the ledger lacks", busy)
		}
		raw, _ := json.Marshal(x)
		if !strings.Contains(string(raw), `"steps":[{"step":1,"attempt":1,"content":"Listing first."`) {
			t.Errorf("the JSON export holds no steps")
		}
	})
}

func TestStopCancelsALoopMidWay(t *testing.T) {
	srv := newAgentServer()
	srv.hangAt["slow"] = 1 // its second step never answers
	h := scriptedAgents(t, srv, "", "slow")
	if err := h.run.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-srv.hanging:
	case <-time.After(30 * time.Second):
		t.Fatal("the loop's second step never reached the server")
	}
	h.run.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b := h.run.Wait(ctx)
	if !b.Final || b.Status != state.RunStopped {
		t.Fatalf("run %s final %v, want stopped", b.Status, b.Final)
	}
	c := b.Cell(0, 0, 0)
	if c.Status != state.Cancelled || len(c.Steps) != 1 || c.Steps[0].Calls[0].Observation != "a.pdf\nb.png" {
		t.Errorf("cell %s with steps %+v, want cancelled with its first step", c.Status, c.Steps)
	}
	reqs, err := h.led.Requests(h.run.ID())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, q := range reqs {
		if q.Purpose == ledger.PurposeInference {
			got = append(got, fmt.Sprintf("%d:%s", q.Attempt, q.Status))
		}
	}
	if strings.Join(got, " ") != "1:completed 2:canceled" {
		t.Errorf("rows %v, want the first step completed and the second cancelled", got)
	}
}

func TestCycleDetection(t *testing.T) {
	for _, tt := range []struct {
		sigs string
		want int
	}{
		{"a a a", 1},
		{"a a", 0},
		{"b a a a", 1},
		{"a b a b a b", 2},
		{"a b a b a", 0},
		{"a b c a b c a b c", 3},
		{"a b c a b c a b", 0},
		{"x a b a b a b", 2},
		{"a a b a a b a a b", 3},
		{"", 0},
	} {
		if got := cycle(strings.Fields(tt.sigs), stagnationRepeats); got != tt.want {
			t.Errorf("cycle(%s) = %d, want %d", tt.sigs, got, tt.want)
		}
	}
}

func chatCall(name, args string) chat.ToolCall { return chat.ToolCall{Name: name, Arguments: args} }

func TestSignatureIgnoresSpacingAndKeyOrder(t *testing.T) {
	a := signature(chatCall("f", `{"b": 1, "a": "x"}`))
	if b := signature(chatCall("f", `{"a":"x","b":1}`)); a != b {
		t.Errorf("%s != %s", a, b)
	}
	if c := signature(chatCall("f", `{"a":"y","b":1}`)); a == c {
		t.Errorf("other arguments, same signature %s", c)
	}
	if signature(chatCall("f", "")) != signature(chatCall("f", "{}")) {
		t.Errorf("no arguments differ from {}")
	}
}
