package history

import (
	"encoding/json"

	"pitwall/gpu/chat"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

// An agent cell's trajectory is read back from its inference requests: the
// runner writes one per model turn, with "agent_step" in its params. A
// step's text, calls, usage and timings are its own row's; the calls as
// they were sent back (with the ids the runner gave calls that had none)
// and their observations are in the next step's input, after the
// assistant message that made them. The last step's calls, on a loop that
// ended without an answer (max iterations, stagnation, an invalid call),
// were never sent back: their observations are on the cell's row, whose
// tool calls carry each call's observation (lastObserved).

// recordedStep is one step read back, with the ledger attempt that made
// it and whether its observations were found.
type recordedStep struct {
	state.Step
	Attempt  int
	Observed bool
	observed []bool // per call, where Observed is false (lastObserved)
}

// trajectories reads every agent cell's last loop from a run's requests
// (in ledger order). A step 1 begins a loop again (a resumed cell).
func trajectories(reqs []ledger.Request) map[ck][]recordedStep {
	type row struct {
		q    ledger.Request
		step int
	}
	loops := map[ck][]row{}
	for _, q := range reqs {
		if q.Purpose != ledger.PurposeInference || q.Status != ledger.StatusCompleted {
			continue
		}
		var p struct {
			Step int `json:"agent_step"`
		}
		if json.Unmarshal([]byte(q.Params), &p) != nil || p.Step < 1 {
			continue
		}
		k := ck{q.Model, q.Test, q.Repeat}
		switch {
		case p.Step == 1:
			loops[k] = []row{{q, 1}}
		case p.Step == len(loops[k])+1:
			loops[k] = append(loops[k], row{q, p.Step})
		}
	}
	out := make(map[ck][]recordedStep, len(loops))
	for k, rows := range loops {
		steps := make([]recordedStep, len(rows))
		for i, r := range rows {
			q := r.q
			s := recordedStep{Attempt: q.Attempt, Step: state.Step{Content: q.Output, Reasoning: q.Reasoning, Server: q.Server,
				TTFT: q.TTFT, Latency: q.Latency, PromptTokens: q.PromptTokens, CompletionTokens: q.CompletionTokens}}
			var calls []chat.ToolCall
			_ = decode(q.ToolCalls, &calls) // a row the runner wrote; unreadable reads as no calls
			if i+1 < len(rows) {
				if sent, ok := sentBack(rows[i+1].q.Input, len(calls)); ok {
					s.Calls, s.Observed = sent, true
				}
			}
			if !s.Observed {
				for _, c := range calls {
					s.Calls = append(s.Calls, state.StepCall{ToolCall: c})
				}
				s.Observed = len(calls) == 0
			}
			steps[i] = s
		}
		out[k] = steps
	}
	return out
}

// sentBack reads, from the input of the step after, the n calls of a step
// as they were sent back and the observation each was answered with: the
// last assistant message with tool calls, and the tool messages after it.
func sentBack(input string, n int) ([]state.StepCall, bool) {
	var msgs []chat.Message
	if n == 0 || json.Unmarshal([]byte(input), &msgs) != nil {
		return nil, false
	}
	at := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "assistant" && len(msgs[i].ToolCalls) > 0 {
			at = i
			break
		}
	}
	if at < 0 || len(msgs[at].ToolCalls) != n {
		return nil, false
	}
	calls := make([]state.StepCall, n)
	byID := map[string]int{}
	for i, c := range msgs[at].ToolCalls {
		calls[i].ToolCall = c
		byID[c.ID] = i
	}
	for _, m := range msgs[at+1:] {
		if i, ok := byID[m.ToolCallID]; ok && m.Role == "tool" {
			calls[i].Observation = m.Content
		}
	}
	return calls, true
}

// ExportStep is one model turn of an agent cell's loop.
type ExportStep struct {
	Step             int              `json:"step"`
	Attempt          int              `json:"attempt"` // the ledger request's attempt number
	Content          string           `json:"content"`
	Reasoning        string           `json:"reasoning,omitempty"`
	Calls            []ExportStepCall `json:"calls,omitempty"`
	Server           string           `json:"server"`
	LatencyMS        int64            `json:"latency_ms"`
	TTFTMS           int64            `json:"ttft_ms"`
	PromptTokens     int              `json:"prompt_tokens"`
	CompletionTokens int              `json:"completion_tokens"`
}

// ExportStepCall is one tool call of a step and its observation; null when
// the ledger does not hold it (a run recorded before cell rows kept the last
// step's observations, or a call the loop never ran).
type ExportStepCall struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Arguments   string  `json:"arguments"`
	Observation *string `json:"observation"`
}

func exportSteps(steps []recordedStep) []ExportStep {
	out := make([]ExportStep, 0, len(steps))
	for i, s := range steps {
		es := ExportStep{Step: i + 1, Attempt: s.Attempt, Content: s.Content, Reasoning: s.Reasoning, Server: s.Server,
			LatencyMS: s.Latency.Milliseconds(), TTFTMS: s.TTFT.Milliseconds(),
			PromptTokens: s.PromptTokens, CompletionTokens: s.CompletionTokens}
		for k, c := range s.Calls {
			ec := ExportStepCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
			if s.Observed || k < len(s.observed) && s.observed[k] {
				ec.Observation = ptr(c.Observation)
			}
			es.Calls = append(es.Calls, ec)
		}
		out = append(out, es)
	}
	return out
}

// lastObserved fills in the last step's calls from the cell row's tool
// calls (every call of the loop, as the loop ran it, with its observation):
// the ids the loop gave them and what they were answered with. A call the
// loop never ran (one beside a DONE that ended it) keeps no observation.
func lastObserved(steps []recordedStep, cellCalls string) {
	if len(steps) == 0 || steps[len(steps)-1].Observed || cellCalls == "" {
		return
	}
	var ran []struct {
		ID          string  `json:"id"`
		Name        string  `json:"name"`
		Arguments   string  `json:"arguments"`
		Observation *string `json:"observation"`
	}
	if json.Unmarshal([]byte(cellCalls), &ran) != nil {
		return
	}
	last := &steps[len(steps)-1]
	last.observed = make([]bool, len(last.Calls))
	// The step's calls are the last of the loop's; match them from the end.
	j := len(ran) - 1
	for i := len(last.Calls) - 1; i >= 0 && j >= 0; i-- {
		c, r := &last.Calls[i], ran[j]
		if r.Name != c.Name || r.Arguments != c.Arguments {
			continue
		}
		c.ID = r.ID
		if r.Observation != nil {
			c.Observation, last.observed[i] = *r.Observation, true
		}
		j--
	}
}
