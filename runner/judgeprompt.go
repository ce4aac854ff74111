package runner

import (
	"pitwall/gpu/chat"
	"pitwall/judge"
	"pitwall/runner/state"
	"slices"
)

// What a judge is asked of a cell, and under which cache key: the judge's
// messages and key are built from the same trajectory, here, beside
// judging (judging.go's prepareJudge).

// judgeSteps is an agent cell's trajectory as a judge reads it; nil for a
// cell of one request, or one read back without its steps.
func judgeSteps(c *state.Cell) []judge.Step {
	said := c.Said()
	if len(said.Steps) == 0 {
		return nil
	}
	out := make([]judge.Step, 0, len(said.Steps))
	for i, s := range said.Steps {
		if i == len(said.Steps)-1 && slices.ContainsFunc(s.Calls, func(sc state.StepCall) bool { return sc.Name == doneTool }) {
			// A loop ended by DONE ended with an answer, the cell's output.
			out = append(out, judge.Step{Text: said.Output})
			continue
		}
		js := judge.Step{Text: s.Content}
		for _, call := range s.Calls {
			js.Calls = append(js.Calls, call.ToolCall)
			js.Observations = append(js.Observations, call.Observation)
		}
		out = append(out, js)
	}
	return out
}

// judgeMessages is the judge's prompt for a cell: its trajectory as the
// candidate output for an agent cell, else its reply.
func judgeMessages(tpl judge.Template, in judge.Input, steps []judge.Step) []chat.Message {
	if steps == nil {
		return judge.Render(tpl, in)
	}
	return judge.RenderAgent(tpl, in, steps)
}

// judgeCacheKey is the cache key of a judge sample of a cell, matching
// judgeMessages.
func judgeCacheKey(k judge.KeyInput, steps []judge.Step) string {
	if steps == nil {
		return judge.CacheKey(k)
	}
	return judge.AgentCacheKey(k, steps)
}
