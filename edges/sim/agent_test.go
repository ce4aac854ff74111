package sim

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"pitwall/gpu/simspec"
)

// The tools of a file-sorting agent task: list a folder, then read and move
// each file in it.
func agentTools() []any {
	str := map[string]any{"type": "string"}
	fn := func(name string, props map[string]any, required ...string) map[string]any {
		return map[string]any{"type": "function", "function": map[string]any{"name": name,
			"parameters": map[string]any{"type": "object", "properties": props, "required": required}}}
	}
	return []any{
		fn("list_dir", map[string]any{"path": str}, "path"),
		fn("read_file", map[string]any{"path": str}, "path"),
		fn("move_file", map[string]any{"src": str, "dst": str}, "src", "dst"),
	}
}

// agentMocks answers the task's calls as a battery's mock_tools would, by
// the call's first argument value.
var agentMocks = map[string]map[string]string{
	"list_dir":  {"downloads/": "a.pdf\nb.png"},
	"read_file": {"a.pdf": "%PDF-1.4 report", "b.png": "PNG image"},
	"move_file": {"a.pdf": "moved a.pdf", "b.png": "moved b.png"},
}

func observe(name, args string) string {
	var m map[string]any
	if json.Unmarshal([]byte(args), &m) != nil {
		return "Error: arguments are not JSON"
	}
	for _, v := range m {
		if obs, ok := agentMocks[name][fmt.Sprint(v)]; ok {
			return obs
		}
	}
	return "Error: no mock for " + name + args
}

const agentTask = "Sort the files in downloads/."

// playLoop runs a tool loop against the server as pitwall's runner does,
// for at most turns model turns, and returns every call as name(args) and
// the final answer ("" when the loop did not end).
func playLoop(t *testing.T, s *Server, model string, turns int) (calls []string, final string) {
	t.Helper()
	c := client(t)
	msgs := []any{map[string]any{"role": "user", "content": agentTask}}
	for turn := range turns {
		raw, _ := json.Marshal(map[string]any{"model": model, "messages": msgs, "tools": agentTools(), "seed": 7})
		b := complete(t, c, s, raw)
		m := b.Choices[0].Message
		if len(m.ToolCalls) == 0 {
			return calls, b.content()
		}
		said := map[string]any{"role": "assistant", "content": b.content()}
		var wire, answers []any
		for i, tc := range m.ToolCalls {
			id := fmt.Sprintf("call_%d_%d", turn, i)
			calls = append(calls, tc.Function.Name+tc.Function.Arguments)
			wire = append(wire, map[string]any{"id": id, "type": "function",
				"function": map[string]any{"name": tc.Function.Name, "arguments": tc.Function.Arguments}})
			answers = append(answers, map[string]any{"role": "tool", "tool_call_id": id, "content": observe(tc.Function.Name, tc.Function.Arguments)})
		}
		said["tool_calls"] = wire
		msgs = append(append(msgs, said), answers...)
	}
	return calls, ""
}

func agentServer(t *testing.T, seed int64, models map[string]simspec.Model) *Server {
	t.Helper()
	var names []string
	for n := range models {
		names = append(names, n)
	}
	cfg := instant(names...)
	cfg.Seed = seed
	cfg.Catalog = models
	cfg.Answers = map[string]Answer{agentTask: {Category: "tools", ToolName: "list_dir",
		ToolArgs: map[string]any{"path": "downloads/"}, Content: "Moved a.pdf and b.png.", Exact: true}}
	return start(t, cfg)
}

func TestACoherentModelWorksThroughWhatItListed(t *testing.T) {
	s := agentServer(t, 1, map[string]simspec.Model{"coherent": {Skill: 1}})
	calls, final := playLoop(t, s, "coherent", 10)
	want := []string{
		`list_dir{"path":"downloads/"}`,
		`read_file{"path":"a.pdf"}`,
		`move_file{"dst":"example","src":"a.pdf"}`,
		`read_file{"path":"b.png"}`,
		`move_file{"dst":"example","src":"b.png"}`,
	}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("calls\n%s\nwant\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
	}
	if final != "Moved a.pdf and b.png." {
		t.Errorf("final answer %q, want the oracle's", final)
	}
}

func TestAModelWithNoSkillAtLoopsRepeatsItsCall(t *testing.T) {
	// Right at the first call (tools), wrong at every later turn (agent).
	s := agentServer(t, 1, map[string]simspec.Model{"stuck": {Skill: 1, Skills: map[string]float64{"agent": 0}}})
	calls, final := playLoop(t, s, "stuck", 6)
	if final != "" || len(calls) != 6 {
		t.Fatalf("a stuck model ended the loop: calls %v, final %q", calls, final)
	}
	for i, c := range calls {
		if c != `list_dir{"path":"downloads/"}` {
			t.Errorf("call %d = %s, want the opening call again", i+1, c)
		}
	}
}

func TestLoopTurnsAreDeterministicAndSkillDecidesThem(t *testing.T) {
	models := map[string]simspec.Model{"fair": {Skill: 1, Skills: map[string]float64{"agent": 0.8}}}
	coherent, stagnant := 0, 0
	for seed := range int64(24) {
		s := agentServer(t, seed, models)
		calls, final := playLoop(t, s, "fair", 8)
		again, final2 := playLoop(t, s, "fair", 8)
		if !reflect.DeepEqual(calls, again) || final != final2 {
			t.Fatalf("seed %d: the same conversation played twice differs:\n%v %q\n%v %q", seed, calls, final, again, final2)
		}
		n := len(calls)
		switch {
		case final != "":
			coherent++
		case n >= 3 && calls[n-1] == calls[n-2] && calls[n-2] == calls[n-3]:
			stagnant++
		default:
			t.Errorf("seed %d: neither an answer nor a repeated call: %v", seed, calls)
		}
	}
	// Five right turns in a row at 0.8 is a 1-in-3 draw per seed, and a
	// repeat at any turn sticks: over 24 seeds both endings occur.
	if coherent == 0 || stagnant == 0 {
		t.Errorf("coherent %d, stagnant %d of 24 seeds: want both", coherent, stagnant)
	}
}

func TestNotALoopTurn(t *testing.T) {
	cfg := instant("m")
	cfg.Catalog = map[string]simspec.Model{"m": {Skill: 1}}
	s := start(t, cfg)
	turn := func(extra map[string]any, result string) completionBody {
		req := map[string]any{"model": "m", "tools": agentTools(), "messages": []any{
			map[string]any{"role": "user", "content": "Sort my files."},
			map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{"id": "c1", "type": "function",
				"function": map[string]any{"name": "list_dir", "arguments": `{"path":"downloads/"}`}}}},
			map[string]any{"role": "tool", "tool_call_id": "c1", "content": result},
		}}
		for k, v := range extra {
			req[k] = v
		}
		raw, _ := json.Marshal(req)
		return complete(t, client(t), s, raw)
	}
	if b := turn(map[string]any{"tool_choice": "none"}, "a.pdf\nb.png"); len(b.Choices[0].Message.ToolCalls) != 0 {
		t.Errorf("tool_choice none: the model called %+v", b.Choices[0].Message.ToolCalls)
	}
	if b := turn(nil, "3°C, cloudy"); len(b.Choices[0].Message.ToolCalls) != 0 || b.content() == "" {
		t.Errorf("a result that lists nothing: reply %+v", b.Choices[0].Message)
	}
	b := turn(nil, `{"files": ["x.txt", "y.txt"]}`)
	if tc := b.Choices[0].Message.ToolCalls; len(tc) != 1 || tc[0].Function.Name != "read_file" || tc[0].Function.Arguments != `{"path":"x.txt"}` {
		t.Errorf("a JSON list: reply %+v, want read_file of its first item", b.Choices[0].Message)
	}
}

func TestListedItems(t *testing.T) {
	for _, tt := range []struct {
		result string
		want   []string
	}{
		{"a.pdf\nb.png\n", []string{"a.pdf", "b.png"}},
		{"- a.pdf\n- b.png\n- a.pdf", []string{"a.pdf", "b.png"}},
		{`["x", "y", 3]`, []string{"x", "y"}},
		{`{"count": 2, "files": ["x", "y"]}`, []string{"x", "y"}},
		{`{"port": 8080}`, nil},
		{"It is 3 degrees in Oslo, and cloudy.", nil},
		{"Error: no such folder\nreally", nil},
		{"", nil},
	} {
		if got := listedItems(tt.result); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("listedItems(%q) = %q, want %q", tt.result, got, tt.want)
		}
	}
	var many []string
	for i := range 100 {
		many = append(many, fmt.Sprintf("f%d", i))
	}
	if n := len(listedItems(strings.Join(many, "\n"))); n != maxItems {
		t.Errorf("%d items of 100, want the first %d", n, maxItems)
	}
}
