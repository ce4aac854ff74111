package runner

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"pitwall/config"
	"pitwall/gpu"
	"pitwall/gpu/chat"
	"pitwall/internal/textutil"
	"pitwall/judge/check"
	"pitwall/judge/scoring"
	"pitwall/runner/state"
)

// An agent test (config.ModeAgent) is a tool loop, one inference request
// per model turn. Each reply's tool calls are answered from the test's
// mock_tools and sent back as tool messages, after the assistant message
// that made them, until the loop ends. The loop is prompt-prix's react
// loop (its react/dispatch.py and mcp/tools/react_step.py), so that a
// battery written for it gets the verdicts it gets there:
//
//  1. answered: a reply makes no tool call, or calls DONE (prompt-prix's
//     end of a loop: its "response" argument, or else the reply's text, is
//     the final answer, and the step's other calls are not run). The cell
//     is then checked as any other (check.ValidateTrajectory, and the
//     test's checks over the trajectory), ✓ or ❌.
//  2. stagnation: once the loop has made six calls, the calls so far end
//     with the same cycle of calls (name and arguments, one call or
//     several) three times over. ❌.
//  3. max iterations: MaxIterations turns have passed and the last one
//     still called a tool. ❌.
//
// A call that goes wrong is not an ending: a tool the test does not offer,
// arguments that are not a JSON object, or a call that no mock answers gets
// an error observation (starting "Error: ", as prompt-prix's do) and the
// model may recover. The agent-loop check counts such calls in its reason.
// Each call gets an id of its own in the loop: a model that sends none, or
// one it sent before, is given call_<step>_<n>, so that every tool message
// names one call. Each step is its own ledger row (attempt numbers go on
// across the cell's steps; params say "agent_step"), is retried like any
// attempt on a transient error (the retry budget counts per step), and the
// cell carries the trajectory as it grows. Stop cancels the loop between
// or during steps, and the cell ends cancelled with the steps it made.

// stagnationRepeats is how many times a cycle of calls must repeat for the
// loop to count as stagnant (prompt-prix's CYCLE_MIN_REPETITIONS), and
// stagnationCalls how many calls the loop must have made before prompt-prix
// looks for one (twice the repeats).
const (
	stagnationRepeats = 3
	stagnationCalls   = 2 * stagnationRepeats
)

// doneTool is the call with which a model ends prompt-prix's loop.
const doneTool = "DONE"

// agentLoop is one agent cell's loop. The attempts of its steps carry it;
// only the engine's goroutine touches it.
type agentLoop struct {
	test    config.Test
	max     int
	offered map[string]bool
	conv    []chat.Message // what the next step sends
	steps   []state.Step
	sigs    []string        // every call so far as name(canonical arguments)
	ids     map[string]bool // every call id sent so far
	invalid int             // calls answered with an error observation
	done    bool            // the last step called DONE
	answer  string          // then, the loop's final answer (doneAnswer)
	// base is the attempt number before the current step's first try: the
	// retry budget counts the step's own tries.
	base int
	end  loopEnd
	why  string // how it ended, for the cell's agent-loop check
}

type loopEnd int

const (
	loopRunning loopEnd = iota
	loopAnswered
	loopStagnation
	loopMaxIterations
)

func newAgentLoop(t config.Test, base int) *agentLoop {
	lp := &agentLoop{test: t, max: t.MaxIterations, offered: map[string]bool{}, ids: map[string]bool{}, conv: t.Conversation(), base: base}
	if lp.max <= 0 {
		lp.max = config.DefaultMaxIterations
	}
	for _, tool := range t.Tools {
		lp.offered[tool.Function.Name] = true
	}
	return lp
}

// try is which try of its step an attempt is (1 for the first), which the
// retry budget counts; for a test of one request, its attempt number.
func (a *inferAttempt) try() int {
	if a.loop != nil {
		return a.n - a.loop.base
	}
	return a.n
}

// inferenceRequest is the request an inference attempt sends and its
// ledger params. An agent test's attempt sends its loop's conversation so
// far (the loop begins with the first step), with tool_choice on the first
// step only: a loop under "required" could never end.
func (in *inferencePart) inferenceRequest(a *inferAttempt) (chat.Request, string) {
	t := in.e.r.tests[a.cell.test]
	req := buildRequest(t, in.e.r.models[a.cell.model], in.e.r.cfg.Run)
	if t.Mode != config.ModeAgent {
		return req, requestParams(req)
	}
	if a.loop == nil {
		a.loop = newAgentLoop(t, a.n-1)
	}
	lp := a.loop
	req.Messages = slices.Clone(lp.conv)
	if len(lp.steps) > 0 {
		req.ToolChoice = nil
	}
	var params map[string]any
	_ = json.Unmarshal([]byte(requestParams(req)), &params) // mustJSON wrote it
	params["agent_step"], params["max_iterations"] = len(lp.steps)+1, lp.max
	return req, mustJSON(params)
}

// agentContinues takes a completed step of an agent cell: it records the
// step on the cell and sends the next one, and reports true, unless the
// loop has ended (false: the cell settles as usual, agentSettled deciding
// it). A test of one request, or an error, is not its business.
func (in *inferencePart) agentContinues(a *inferAttempt, res chat.Result, err error) bool {
	t := in.e.r.tests[a.cell.test]
	if t.Mode != config.ModeAgent || err != nil {
		return false
	}
	if in.e.life != inferring {
		// The run is stopping: a step that completed meanwhile is recorded,
		// and the loop goes no further.
		if a.loop != nil {
			if a.loop.take(res) != loopRunning {
				return false
			}
			in.showSteps(a)
			in.e.totals.tokens += int64(res.CompletionTokens)
		}
		in.settled(a, chat.Result{}, &chat.Error{Class: chat.ClassCanceled, Message: "stopped mid-loop"})
		return true
	}
	if a.loop == nil {
		// A step's answer taken from the ledger when a run is resumed: its
		// place in a loop is not known, so the loop runs again from the
		// start, its attempts numbered after every earlier one.
		n := max(a.n, in.e.table.at(a.cell).Attempts) + 1
		in.submitInference([]*inferAttempt{newInferAttempt(in, a.cell, n, nil)})
		return true
	}
	if a.loop.take(res) != loopRunning {
		return false
	}
	in.showSteps(a)
	in.e.totals.tokens += int64(res.CompletionTokens)
	delete(in.failovers, a.cell)
	a.loop.base = a.n
	in.submitInference([]*inferAttempt{newInferAttempt(in, a.cell, a.n+1, a.loop)})
	return true
}

// agentJob tells the fleet that an agent step's job is part of a loop: the
// steps the loop may still take, itself included, which placement counts as
// that many jobs of the model, and the loop's name, under which the fleet
// keeps the model on its server between one step and the next
// (gpu.Job.Loop). Other jobs are left as they are.
func (in *inferencePart) agentJob(a *inferAttempt, j *gpu.Job) {
	if a.loop == nil {
		return
	}
	j.Steps = max(a.loop.max-len(a.loop.steps), 1)
	j.Loop = fmt.Sprintf("%s/%d/%d/%d", in.e.r.id, a.cell.test, a.cell.model, a.cell.rep)
}

// showSteps puts the loop's trajectory so far on its cell.
func (in *inferencePart) showSteps(a *inferAttempt) {
	c := in.e.table.edit(a.cell)
	c.EditReply().Steps = slices.Clone(a.loop.steps)
	in.e.pub.dirty = true
}

// agentSettled decides an agent cell whose loop has ended: the cell's
// output is the trajectory's (final answer, every call, summed usage), and
// its checks are the loop's ending, the trajectory's validation and the
// test's checks over the trajectory. Other cells are left as they are.
func (in *inferencePart) agentSettled(a *inferAttempt, c *state.Cell, reply *state.Reply) {
	lp := a.loop
	if lp == nil || len(lp.steps) == 0 {
		return
	}
	t := lp.test
	reply.Steps = slices.Clone(lp.steps)
	last := lp.steps[len(lp.steps)-1]
	reply.Output, reply.Reasoning, reply.FinishReason = last.Content, last.Reasoning, last.FinishReason
	if lp.done {
		reply.Output = lp.answer
	}
	reply.ToolCalls = nil
	c.TTFT = lp.steps[0].TTFT
	c.Latency, c.PromptTokens, c.CompletionTokens = 0, 0, 0
	var decoding time.Duration
	for _, s := range lp.steps {
		for _, call := range s.Calls {
			reply.ToolCalls = append(reply.ToolCalls, call.ToolCall)
		}
		c.Latency += s.Latency
		decoding += s.Latency - s.TTFT
		c.PromptTokens += s.PromptTokens
		c.CompletionTokens += s.CompletionTokens
	}
	c.TokensPerSec = 0
	if decoding > 0 {
		c.TokensPerSec = float64(c.CompletionTokens) / decoding.Seconds()
	}
	out := lp.output()
	checks := []scoring.CheckResult{lp.result()}
	checks = append(checks, check.ValidateTrajectory(t.Validation(), out)...)
	reply.Checks = append(checks, check.RunChecks(t.Checks, out)...)
}

// take records a completed step: its calls answered, and whether the loop
// ends here.
func (lp *agentLoop) take(res chat.Result) loopEnd {
	n := len(lp.steps) + 1
	step := state.Step{Content: res.Content, Reasoning: res.Reasoning, FinishReason: res.FinishReason, Server: res.Server,
		TTFT: res.TTFT, Latency: res.Latency, PromptTokens: res.PromptTokens, CompletionTokens: res.CompletionTokens}
	if len(res.ToolCalls) == 0 {
		lp.steps = append(lp.steps, step)
		lp.end, lp.why = loopAnswered, lp.invalidNote()
		return lp.end
	}
	if i := slices.IndexFunc(res.ToolCalls, func(c chat.ToolCall) bool { return c.Name == doneTool }); i >= 0 {
		// The step keeps every call the model made; none is run, DONE
		// included, so none has an observation.
		for k, call := range res.ToolCalls {
			call.ID = lp.freshID(call.ID, n, k)
			step.Calls = append(step.Calls, state.StepCall{ToolCall: call})
		}
		lp.answer = doneAnswer(res.ToolCalls[i].Arguments, res.Content)
		lp.steps = append(lp.steps, step)
		lp.done = true
		lp.end, lp.why = loopAnswered, strings.TrimPrefix(lp.invalidNote()+"; ended by a DONE call", "; ")
		return lp.end
	}
	said := chat.Message{Role: "assistant", Content: res.Content}
	var answers []chat.Message
	for i, call := range res.ToolCalls {
		call.ID = lp.freshID(call.ID, n, i)
		sc := state.StepCall{ToolCall: call}
		switch {
		case !lp.offered[call.Name]:
			sc.Observation = fmt.Sprintf("%s%s is not a tool offered here (offered: %s)", config.NoMockPrefix, quoteName(call.Name), strings.Join(lp.toolNames(), ", "))
		case !argsObject(call.Arguments):
			sc.Observation = config.NoMockPrefix + "Could not parse tool arguments (not a JSON object): " + textutil.Clip(call.Arguments, 200)
		default:
			sc.Observation, sc.Mocked = lp.test.MockTools.Observe(call.Name, call.Arguments)
		}
		if strings.HasPrefix(sc.Observation, config.NoMockPrefix) {
			lp.invalid++
		}
		step.Calls = append(step.Calls, sc)
		said.ToolCalls = append(said.ToolCalls, call)
		answers = append(answers, chat.Message{Role: "tool", Content: sc.Observation, ToolCallID: call.ID})
		lp.sigs = append(lp.sigs, signature(call))
	}
	lp.steps = append(lp.steps, step)
	lp.conv = append(append(lp.conv, said), answers...)
	p := 0
	if len(lp.sigs) >= stagnationCalls {
		p = cycle(lp.sigs, stagnationRepeats)
	}
	switch {
	case p > 0:
		lp.end, lp.why = loopStagnation, stagnationWhy(lp.sigs, p, n)
	case n >= lp.max:
		lp.end, lp.why = loopMaxIterations, fmt.Sprintf("max iterations: %d model turns and still calling tools, no final answer", n)
		if res.FinishReason == "length" {
			lp.why += " (the last reply was cut at max_tokens)"
		}
	}
	if lp.end != loopRunning {
		if note := lp.invalidNote(); note != "" {
			lp.why += "; " + note
		}
	}
	return lp.end
}

// freshID is the id a call goes by in the loop: its own, unless it has none
// or the loop has seen it before (a tool message must name one call).
func (lp *agentLoop) freshID(id string, step, i int) string {
	if id == "" || lp.ids[id] {
		id = fmt.Sprintf("call_%d_%d", step, i+1)
		for k := 2; lp.ids[id]; k++ {
			id = fmt.Sprintf("call_%d_%d_%d", step, i+1, k)
		}
	}
	lp.ids[id] = true
	return id
}

// invalidNote says how many calls got an error observation, or nothing.
func (lp *agentLoop) invalidNote() string {
	if lp.invalid == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d calls got an error observation (unknown tool, unreadable arguments or no mock)", lp.invalid, len(lp.sigs))
}

// doneAnswer is the final answer of a loop ended by DONE: its "response"
// argument, as prompt-prix takes it, or else the reply's text.
func doneAnswer(args, content string) string {
	var m map[string]any
	if json.Unmarshal([]byte(args), &m) == nil {
		if r, ok := m["response"]; ok {
			if s, ok := r.(string); ok {
				return s
			}
			return config.ValueText(r)
		}
	}
	return content
}

// result is the loop's ending as a check: passed when it ended with an
// answer.
func (lp *agentLoop) result() scoring.CheckResult {
	r := scoring.CheckResult{Name: "agent-loop", Pass: lp.end == loopAnswered, Reason: lp.why}
	if lp.end == loopRunning {
		r.Reason = "the loop did not end"
	}
	return r
}

// output is the trajectory as checks read it.
func (lp *agentLoop) output() check.Output {
	var out check.Output
	for i, s := range lp.steps {
		o := check.Output{Content: s.Content, Latency: s.Latency}
		for _, c := range s.Calls {
			if lp.done && i == len(lp.steps)-1 {
				break // DONE ends the loop with an answer; it is no tool's call
			}
			o.ToolCalls = append(o.ToolCalls, c.ToolCall)
		}
		out.ToolCalls = append(out.ToolCalls, o.ToolCalls...)
		out.Latency += s.Latency
		out.Steps = append(out.Steps, o)
	}
	if n := len(lp.steps); n > 0 {
		out.Content = lp.steps[n-1].Content
		if lp.done {
			out.Content = lp.answer
			out.Steps[n-1].Content = lp.answer
		}
	}
	return out
}

func (lp *agentLoop) toolNames() []string {
	names := make([]string, 0, len(lp.test.Tools))
	for _, t := range lp.test.Tools {
		names = append(names, t.Function.Name)
	}
	return names
}

// argsObject reports whether a call's arguments are a JSON object; servers
// send "" for a call without arguments, which is one.
func argsObject(args string) bool {
	if strings.TrimSpace(args) == "" {
		return true
	}
	var m map[string]any
	return json.Unmarshal([]byte(args), &m) == nil && m != nil
}

// signature is a call as stagnation compares calls: its name and its
// arguments with keys sorted and spacing dropped, so that a model
// reordering the same arguments still repeats itself.
func signature(c chat.ToolCall) string {
	args := strings.TrimSpace(c.Arguments)
	var v any
	if json.Unmarshal([]byte(args), &v) == nil {
		args = mustJSON(v)
	} else {
		args = "{}" // none, or unreadable: prompt-prix records such a call with no arguments
	}
	return c.Name + "(" + args + ")"
}

// cycle is the shortest period p such that sigs ends with the same p calls
// repeated times times over, or 0 when it does not.
func cycle(sigs []string, times int) int {
	for p := 1; p*times <= len(sigs); p++ {
		tail := sigs[len(sigs)-p:]
		same := true
		for r := 2; r <= times && same; r++ {
			same = slices.Equal(sigs[len(sigs)-r*p:len(sigs)-(r-1)*p], tail)
		}
		if same {
			return p
		}
	}
	return 0
}

// stagnationWhy says which cycle of calls the loop repeated, and how many
// times over it ends with it.
func stagnationWhy(sigs []string, p, step int) string {
	pattern := sigs[len(sigs)-p:]
	times := 1
	for len(sigs) >= (times+1)*p && slices.Equal(sigs[len(sigs)-(times+1)*p:len(sigs)-times*p], pattern) {
		times++
	}
	shown := make([]string, len(pattern))
	for i, s := range pattern {
		shown[i] = textutil.Clip(s, 80)
	}
	if len(shown) == 1 {
		return fmt.Sprintf("stagnation at step %d: the model called %s %d times in a row", step, shown[0], times)
	}
	return fmt.Sprintf("stagnation at step %d: the model repeated the calls %s %d times over", step, strings.Join(shown, " → "), times)
}

// quoteName shows a tool name a model made up, quoted when it is not plain.
func quoteName(name string) string {
	if name == "" {
		return "a call with no name"
	}
	return fmt.Sprintf("%q", name)
}
