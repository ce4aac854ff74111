package runner

import (
	"context"
	"encoding/json"
	"fmt"
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

func TestAgentLoopsEndAsTheyShould(t *testing.T) {
	t.Parallel()
	srv := newAgentServer()
	srv.failAt["flaky"] = 2 // its second step's first try
	models := []string{"clean", "flaky", "busy", "stuck", "cycle", "invalid", "broken", "unmocked", "thrice", "done", "recovers"}
	h := scriptedAgents(t, srv, `
[scoring]
mode = "judge"
[[scoring.judges]]
name = "j"
model = "judge"
server = "s"
`, models...)
	b := h.finish(t)

	// The endings are prompt-prix's react loop's: stagnation only once six
	// calls are made, DONE as an answer, and a wrong call an error
	// observation that the loop goes on from.
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
		{"stuck", state.Failed, 6, false, `stagnation at step 6: the model called list_dir({"path":"downloads/"}) 6 times in a row`},
		{"cycle", state.Failed, 6, false, `stagnation at step 6: the model repeated the calls read_file({"path":"a.pdf"}) → read_file({"path":"b.png"}) 3 times over`},
		{"invalid", state.Failed, 6, false, `stagnation at step 6: the model called delete_file({"path":"a.pdf"}) 5 times in a row; 5 of 6 calls got an error observation`},
		{"broken", state.Failed, 6, false, "stagnation at step 6: the model called read_file({}) 6 times in a row; 6 of 6 calls got an error observation"},
		{"unmocked", state.Failed, 2, true, "1 of 1 calls got an error observation"},
		{"thrice", state.Failed, 4, true, ""},
		{"done", state.Completed, 3, true, "ended by a DONE call"},
		{"recovers", state.Completed, 5, true, "2 of 4 calls got an error observation"},
	}
	for i, tt := range tests {
		c := b.Cell(0, i, 0)
		if c.Model != tt.model {
			t.Fatalf("cell %d is %s, want %s", i, c.Model, tt.model)
		}
		if c.Status != tt.status || len(c.Said().Steps) != tt.steps {
			t.Errorf("%s: %s after %d steps, want %s after %d (checks %+v)", tt.model, c.Status, len(c.Said().Steps), tt.status, tt.steps, c.Said().Checks)
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
		s2 := clean.Said().Steps[1]
		if len(s2.Calls) != 2 || s2.Calls[0].ID != "r1" || s2.Calls[1].ID != "call_2_2" {
			t.Fatalf("step 2 calls %+v: want r1 and the id pitwall gave the call without one", s2.Calls)
		}
		if s2.Calls[0].Observation != "%PDF report" || s2.Calls[1].Observation != "PNG image" || !s2.Calls[1].Mocked {
			t.Errorf("step 2 observations %+v", s2.Calls)
		}
		if clean.Said().Steps[0].Content != "Listing first." || clean.Said().Output != clean.Said().Steps[2].Content {
			t.Errorf("thought %q, output %q", clean.Said().Steps[0].Content, clean.Said().Output)
		}
		if len(clean.Said().ToolCalls) != 3 || clean.CompletionTokens != 12 || clean.PromptTokens != 30 {
			t.Errorf("cell totals: %d calls, %d+%d tokens; want every call and the steps' sums", len(clean.Said().ToolCalls), clean.PromptTokens, clean.CompletionTokens)
		}
		un := b.Cell(0, 7, 0).Said().Steps[0].Calls[0]
		if un.Mocked || !strings.HasPrefix(un.Observation, config.NoMockPrefix) {
			t.Errorf("an unanswered call: %+v, want the error observation", un)
		}
		var failedChecks []string
		for _, r := range b.Cell(0, 7, 0).Said().Checks {
			if !r.Pass {
				failedChecks = append(failedChecks, r.Name)
			}
		}
		if strings.Join(failedChecks, ",") != `tool-call list_dir({"path":"downloads/"}),tool-call read_file({"path":"b.png"})` {
			t.Errorf("unmocked failed %v: the trajectory's checks, not the loop", failedChecks)
		}
	})

	t.Run("DONE ends the loop with its response", func(t *testing.T) {
		c := b.Cell(0, 9, 0)
		last := c.Said().Steps[len(c.Said().Steps)-1]
		if c.Said().Output != "Sorted: a.pdf to docs/, b.png to images/." || len(last.Calls) != 2 || last.Calls[1].Name != "DONE" {
			t.Errorf("output %q, last step's calls %+v: want DONE's response, and the step's calls as made", c.Said().Output, last.Calls)
		}
		if last.Calls[0].Observation != "" || last.Calls[0].Mocked {
			t.Errorf("the call beside DONE was run: %+v", last.Calls[0])
		}
		for _, r := range c.Said().Checks {
			if !r.Pass {
				t.Errorf("%s failed (%s): DONE's answer is the final answer, and DONE no tool's call", r.Name, r.Reason)
			}
		}
	})

	t.Run("a wrong call is an error observation, and ids are fresh", func(t *testing.T) {
		c := b.Cell(0, 10, 0)
		obs := []string{c.Said().Steps[0].Calls[0].Observation, c.Said().Steps[1].Calls[0].Observation}
		if !strings.HasPrefix(obs[0], `Error: "delete_file" is not a tool offered here`) || !strings.HasPrefix(obs[1], "Error: Could not parse tool arguments") {
			t.Errorf("observations %q", obs)
		}
		seen := map[string]bool{}
		for _, s := range c.Said().Steps {
			for _, call := range s.Calls {
				if seen[call.ID] {
					t.Errorf("call id %q twice in one loop", call.ID)
				}
				seen[call.ID] = true
			}
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
		// The judged cells are clean's, flaky's (the same script), done's and
		// recovers': read clean's.
		prompt := ""
		for _, body := range judged {
			msgs := body["messages"].([]any)
			if p := msgs[len(msgs)-1].(map[string]any)["content"].(string); strings.Contains(p, "Listing first.") {
				prompt = p
				break
			}
		}
		if prompt == "" {
			t.Fatal("no judge prompt shows clean's trajectory")
		}
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
			*s[1].Calls[1].Observation != "PNG image" || s[2].Content != clean.Said().Output {
			t.Errorf("clean's exported steps %+v", s)
		}
		if s := steps["flaky"]; len(s) != 3 || s[1].Attempt != 3 {
			t.Errorf("flaky's exported steps %+v: want three, step 2 from attempt 3", s)
		}
		busy := steps["busy"]
		if len(busy) != 7 || busy[5].Calls[0].Observation == nil || busy[6].Calls[0].Observation == nil ||
			*busy[6].Calls[0].Observation != "(empty file)" {
			t.Errorf("busy's exported steps %+v: observations at every step, the last one's from the cell's row", busy)
		}
		if d := steps["done"]; len(d) != 3 || d[2].Calls[0].Observation != nil {
			t.Errorf("done's exported last step %+v: the call beside DONE was never run, so it has no observation", d)
		}
		// What the ledger gives back is what the cell held, step by step.
		for mi, m := range b.Models {
			live, read := b.Cell(0, mi, 0).Said().Steps, steps[m]
			if len(read) != len(live) {
				t.Errorf("%s: %d steps exported, %d on the cell", m, len(read), len(live))
				continue
			}
			for i := range live {
				if read[i].Content != live[i].Content || len(read[i].Calls) != len(live[i].Calls) {
					t.Errorf("%s step %d: exported %+v, on the cell %+v", m, i+1, read[i], live[i])
					continue
				}
				for k, lc := range live[i].Calls {
					rc := read[i].Calls[k]
					if rc.ID != lc.ID || rc.Name != lc.Name || rc.Arguments != lc.Arguments ||
						rc.Observation != nil && *rc.Observation != lc.Observation {
						t.Errorf("%s step %d call %d: exported %+v, on the cell %+v", m, i+1, k+1, rc, lc)
					}
				}
			}
		}
		raw, _ := json.Marshal(x)
		if !strings.Contains(string(raw), `"steps":[{"step":1,"attempt":1,"content":"Listing first."`) {
			t.Errorf("the JSON export holds no steps")
		}
	})
}

func TestStopCancelsALoopMidWay(t *testing.T) {
	t.Parallel()
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
	if c.Status != state.Cancelled || len(c.Said().Steps) != 1 || c.Said().Steps[0].Calls[0].Observation != "a.pdf\nb.png" {
		t.Errorf("cell %s with steps %+v, want cancelled with its first step", c.Status, c.Said().Steps)
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

func TestResumeRunsAStoppedLoopAgain(t *testing.T) {
	t.Parallel()
	srv := newAgentServer()
	srv.hangAt["slow"] = 1
	h := scriptedAgents(t, srv, "", "slow")
	if err := h.run.Start(); err != nil {
		t.Fatal(err)
	}
	<-srv.hanging
	h.run.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if b := h.run.Wait(ctx); b.Cell(0, 0, 0).Status != state.Cancelled {
		t.Fatalf("the stop left %s", b.Cell(0, 0, 0).Status)
	}
	h.run.Close()
	srv.mu.Lock()
	delete(srv.hangAt, "slow")
	srv.mu.Unlock()

	run, err := Resume(h.cfg, h.run.ID(), Again{Cancelled: true}, Options{Fleet: h.fleet, Ledger: h.led,
		Interval: 5 * time.Millisecond, Backoff: func(int) time.Duration { return time.Millisecond }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(run.Close)
	b := run.Wait(ctx)
	c := b.Cell(0, 0, 0)
	if !b.Final || c.Status != state.Completed || len(c.Said().Steps) != 3 || c.Attempts != 5 {
		t.Fatalf("resumed cell %s after %d steps and %d attempts, want completed after 3 steps, attempts 3 to 5", c.Status, len(c.Said().Steps), c.Attempts)
	}
	reqs, err := h.led.Requests(h.run.ID())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, q := range reqs {
		if q.Purpose == ledger.PurposeInference {
			var p struct {
				Step int `json:"agent_step"`
			}
			_ = json.Unmarshal([]byte(q.Params), &p)
			got = append(got, fmt.Sprintf("%d:%d:%s", p.Step, q.Attempt, q.Status))
		}
	}
	if want := "1:1:completed 2:2:canceled 1:3:completed 2:4:completed 3:5:completed"; strings.Join(got, " ") != want {
		t.Errorf("rows (step:attempt:status) %s, want %s", strings.Join(got, " "), want)
	}
}

func TestReusedStepsReplayTheLoop(t *testing.T) {
	t.Parallel()
	srv := newAgentServer()
	h := scriptedAgents(t, srv, "", "clean")
	h.cfg.Run.ReuseInference = true
	first := h.finish(t).Cell(0, 0, 0)
	srv.mu.Lock()
	sent := len(srv.bodies["clean"])
	srv.mu.Unlock()

	again, err := New(h.cfg, Options{Fleet: h.fleet, Ledger: h.led, Interval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(again.Close)
	if err := again.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := again.Wait(ctx).Cell(0, 0, 0)
	srv.mu.Lock()
	resent := len(srv.bodies["clean"]) - sent
	srv.mu.Unlock()
	if resent != 0 {
		t.Errorf("%d requests sent again: every step was in the ledger", resent)
	}
	if c.Status != state.Completed || len(c.Said().Steps) != len(first.Said().Steps) || c.Said().Output != first.Said().Output {
		t.Errorf("the replayed loop: %s, %d steps, %q; the first: %d steps, %q", c.Status, len(c.Said().Steps), c.Said().Output, len(first.Said().Steps), first.Said().Output)
	}
	for i := range c.Said().Steps {
		if c.Said().Steps[i].Server != ledger.ServerCache {
			t.Errorf("step %d served by %q, want the ledger's cache", i+1, c.Said().Steps[i].Server)
		}
	}
}

func TestCycleDetection(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
