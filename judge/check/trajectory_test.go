package check

import (
	"strings"
	"testing"
	"time"

	"pitwall/gpu/chat"
	"pitwall/judge/scoring"
)

// sortLoop is an agent's loop as the runner hands it to checks: it listed a
// folder, read a file, moved two, and answered.
func sortLoop() Output {
	steps := []Output{
		{Content: "I will list the folder.", ToolCalls: []chat.ToolCall{{Name: "list_dir", Arguments: `{"path":"downloads/"}`}}, Latency: time.Second},
		{ToolCalls: []chat.ToolCall{{Name: "read_file", Arguments: `{"path":"a.pdf"}`}}, Latency: time.Second},
		{Content: "Moving both.", ToolCalls: []chat.ToolCall{
			{Name: "move_file", Arguments: `{"src":"a.pdf","dst":"docs/"}`},
			{Name: "move_file", Arguments: `{"src":"b.png","dst":"images/"}`}}, Latency: time.Second},
		{Content: "Sorted: a.pdf to docs/, b.png to images/.", Latency: time.Second},
	}
	out := Output{Content: steps[3].Content, Steps: steps}
	for _, s := range steps {
		out.ToolCalls = append(out.ToolCalls, s.ToolCalls...)
		out.Latency += s.Latency
	}
	return out
}

func TestChecksReadATrajectoryByScope(t *testing.T) {
	loop := sortLoop()
	tests := []struct {
		name   string
		check  Check
		pass   bool
		reason string
	}{
		{"a tool-call matches a call at any step", Check{Type: "tool-call", Name: "move_file", Args: map[string]any{"src": "b.png"}}, true, ""},
		{"first-tool-call is the loop's first", Check{Type: "first-tool-call", Name: "list_dir"}, true, ""},
		{"first-tool-call of another tool", Check{Type: "first-tool-call", Name: "move_file"}, false, "the first call was list_dir"},
		{"the count is the loop's calls", Check{Type: "tool-call-count", Value: "4"}, true, ""},
		{"the count of one tool's calls", Check{Type: "tool-call-count", Name: "move_file", Value: "2"}, true, ""},
		{"text is the final answer", Check{Type: "contains", Value: "Sorted"}, true, ""},
		{"a thought is not the final answer", Check{Type: "contains", Value: "Moving both"}, false, "Sorted"},
		{"no-tool-call over the loop", Check{Type: "no-tool-call"}, false, "called list_dir"},
		{"max-latency over the loop", Check{Type: "max-latency", Value: "3s"}, false, "4s"},

		{"final: no call at the last turn", Check{Type: "no-tool-call", Scope: "final"}, true, ""},
		{"final: a call made earlier is not in it", Check{Type: "tool-call", Name: "move_file", Scope: "final"}, false, "no tool call"},
		{"final: its latency alone", Check{Type: "max-latency", Value: "3s", Scope: "final"}, true, ""},

		{"any-step: a thought", Check{Type: "contains", Value: "Moving both", Scope: "any-step"}, true, ""},
		{"any-step: a count within one turn", Check{Type: "tool-call-count", Name: "move_file", Value: "2", Scope: "any-step"}, true, ""},
		{"any-step: no turn made three calls", Check{Type: "tool-call-count", Value: "3", Scope: "any-step"}, false, "step 1:"},
		{"any-step: not- holds when no turn matches", Check{Type: "not-contains", Value: "rm -rf", Scope: "any-step"}, true, ""},
		{"any-step: not- fails when one turn matches", Check{Type: "not-contains", Value: "list", Scope: "any-step"}, false, "step 1:"},
		{"an unknown scope is an invalid check", Check{Type: "contains", Value: "x", Scope: "every"}, false, "unknown scope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := RunChecks([]Check{tt.check}, loop)[0]
			if res.Pass != tt.pass {
				t.Fatalf("%s: pass %v, want %v (%s)", res.Name, res.Pass, tt.pass, res.Reason)
			}
			if tt.reason != "" && !strings.Contains(res.Reason, tt.reason) {
				t.Errorf("%s: reason %q, want it to contain %q", res.Name, res.Reason, tt.reason)
			}
			if tt.check.Scope != "" && !strings.Contains(res.Name, "["+tt.check.Scope+"]") && !strings.Contains(res.Reason, "scope") {
				t.Errorf("name %q does not say the scope", res.Name)
			}
		})
	}
}

func TestScopeChangesNothingForOneReply(t *testing.T) {
	out := Output{Content: "Paris", ToolCalls: []chat.ToolCall{{Name: "f", Arguments: "{}"}}}
	for _, sc := range []string{"", "final", "any-step"} {
		for _, c := range []Check{{Type: "contains", Value: "Paris"}, {Type: "tool-call", Name: "f"}, {Type: "not-no-tool-call"}} {
			c.Scope = sc
			if r := RunChecks([]Check{c}, out)[0]; !r.Pass {
				t.Errorf("%s with scope %q fails on one reply: %s", c.Type, sc, r.Reason)
			}
		}
	}
}

func TestValidateCheckNamesABadScope(t *testing.T) {
	err := ValidateCheck(Check{Type: "contains", Value: "x", Scope: "al-steps"})
	if err == nil || !strings.Contains(err.Error(), `scope = "final" or "any-step"`) {
		t.Errorf("ValidateCheck = %v, want a hint naming the scopes", err)
	}
	for _, sc := range append(Scopes(), "") {
		if err := ValidateCheck(Check{Type: "contains", Value: "x", Scope: sc}); err != nil {
			t.Errorf("scope %q: %v", sc, err)
		}
	}
}

func TestValidateTrajectory(t *testing.T) {
	required := Expect{ToolChoice: "required", HasTools: true}
	byName := func(rs []scoring.CheckResult) map[string]scoring.CheckResult {
		m := map[string]scoring.CheckResult{}
		for _, r := range rs {
			m[r.Name] = r
		}
		return m
	}
	t.Run("a loop that answered", func(t *testing.T) {
		rs := byName(ValidateTrajectory(required, sortLoop()))
		for _, n := range []string{"not-empty", "not-refusal", "tool_choice=required"} {
			if r, ok := rs[n]; !ok || !r.Pass {
				t.Errorf("%s: %+v (all: %+v)", n, r, rs)
			}
		}
	})
	t.Run("tool_choice is the first step's", func(t *testing.T) {
		loop := sortLoop()
		loop.Steps = append([]Output{{Content: "Let me think."}}, loop.Steps...)
		if r := byName(ValidateTrajectory(required, loop))["tool_choice=required"]; r.Pass || !strings.Contains(r.Reason, "first step") {
			t.Errorf("tool_choice=required = %+v, want a failure at the first step", r)
		}
	})
	t.Run("an empty final answer", func(t *testing.T) {
		loop := sortLoop()
		loop.Steps[3].Content, loop.Content = "", ""
		if r := byName(ValidateTrajectory(required, loop))["not-empty"]; r.Pass {
			t.Errorf("not-empty = %+v, want a failure", r)
		}
	})
	t.Run("a loop cut off mid-call is not judged as an answer", func(t *testing.T) {
		loop := sortLoop()
		loop.Steps = loop.Steps[:3]
		rs := byName(ValidateTrajectory(required, loop))
		if _, ok := rs["not-empty"]; ok {
			t.Errorf("validated a final answer the loop never gave: %+v", rs)
		}
	})
	t.Run("broken arguments along the way are the loop's to count", func(t *testing.T) {
		loop := sortLoop()
		loop.ToolCalls[1].Arguments = `{"path":`
		loop.Steps[1].ToolCalls[0].Arguments = `{"path":`
		for _, r := range ValidateTrajectory(required, loop) {
			if !r.Pass {
				t.Errorf("%s failed (%s): a call the model recovered from fails nothing here", r.Name, r.Reason)
			}
		}
	})
	t.Run("a call although no tools were offered", func(t *testing.T) {
		rs := ValidateTrajectory(Expect{}, sortLoop())
		for _, r := range rs {
			if !r.Pass {
				t.Errorf("%s failed (%s): prompt-prix answers such a call with an error and goes on", r.Name, r.Reason)
			}
		}
	})
	t.Run("one reply is Validate", func(t *testing.T) {
		out := Output{Content: "no call"}
		if a, b := ValidateTrajectory(required, out), Validate(required, out); len(a) != len(b) || a[1] != b[1] {
			t.Errorf("ValidateTrajectory %+v, Validate %+v", a, b)
		}
	})
}
