package ui

import (
	"strconv"
	"strings"

	"pitwall/runner/state"
)

// An agent cell's trajectory in the detail view: how the loop ended, then
// each model turn (its thought, its calls and what they were answered),
// then the final answer.

const (
	thoughtLines = 3 // a step's thought, wrapped, is clipped to this many lines
	obsLines     = 2 // and a call's line (name, arguments, observation) to this many
)

// agentLoopCheck is the cell's agent-loop check: how its loop ended.
func agentLoopCheck(cell *state.Cell) (pass bool, reason string, ok bool) {
	for _, ch := range cell.Said().Checks {
		if ch.Name == "agent-loop" {
			return ch.Pass, ch.Reason, true
		}
	}
	return false, "", false
}

// writeSteps writes an agent cell's trajectory in place of a reply.
func writeSteps(w *detailWriter, cell *state.Cell) {
	c, g := w.c, w.c.glyphs
	said := cell.Said()
	head := "Agent loop · " + strconv.Itoa(len(said.Steps)) + " step"
	if len(said.Steps) != 1 {
		head += "s"
	}
	w.line(2, c.styles.title.Render(head))
	if pass, reason, ok := agentLoopCheck(cell); ok {
		mark := c.styles.kind[kindOK].Render(g.ok)
		if !pass {
			mark = c.styles.kind[kindFailed].Render(g.failed)
		}
		if reason == "" {
			reason = "ended with an answer"
		}
		w.para(4, mark+" "+reason)
	} else if !cell.Status.Terminal() {
		w.line(4, c.styles.dim.Render("under way"+g.ellipsis))
	}

	last := len(said.Steps) - 1
	for i := range said.Steps {
		s := &said.Steps[i]
		w.line(2, stepHead(i, s))
		if s.Reasoning != "" {
			w.clipped(4, c.styles.dim.Render(s.Reasoning), thoughtLines)
		}
		// The last step's text is the final answer, written whole below.
		final := i == last && len(s.Calls) == 0 && cell.Status.Terminal()
		switch {
		case final:
			w.line(4, c.styles.dim.Render("(its answer is the final answer, below)"))
		case s.Content != "":
			w.clipped(4, s.Content, thoughtLines)
		case len(s.Calls) == 0:
			w.line(4, c.styles.dim.Render("(empty)"))
		}
		for _, call := range s.Calls {
			writeStepCall(w, call)
		}
		if s.FinishReason != "" && s.FinishReason != "stop" && s.FinishReason != "tool_calls" {
			w.line(4, c.styles.dim.Render("finish: "+s.FinishReason))
		}
	}

	// A loop cut short (stagnation, max iterations) ended on a call, not
	// an answer: there is no final answer to show.
	answered := last >= 0 && len(said.Steps[last].Calls) == 0 && cell.Status.Terminal()
	if answered || said.Output != "" {
		w.line(2, c.styles.title.Render("Final answer"))
		w.para(4, said.Output)
		if said.FinishReason != "" {
			w.line(4, c.styles.dim.Render("finish: "+said.FinishReason))
		}
	}
	if said.Reasoning != "" {
		w.line(2, c.styles.title.Render("Reasoning"))
		w.para(4, c.styles.dim.Render(said.Reasoning))
	}
}

// stepHead is "Step N · server · latency · tokens".
func stepHead(i int, s *state.Step) string {
	parts := []string{"Step " + strconv.Itoa(i+1)}
	if s.Server != "" {
		parts = append(parts, s.Server)
	}
	if s.Latency > 0 {
		parts = append(parts, shortDur(s.Latency))
	}
	if s.PromptTokens > 0 || s.CompletionTokens > 0 {
		parts = append(parts, strconv.Itoa(s.PromptTokens)+" + "+strconv.Itoa(s.CompletionTokens)+" tokens")
	}
	return strings.Join(parts, " · ")
}

// writeStepCall writes "→ name(args) → observation", clipped. A call no mock
// answered is marked and in the warning style: the model was shown an error
// rather than what the test meant it to see.
func writeStepCall(w *detailWriter, call state.StepCall) {
	c, g := w.c, w.c.glyphs
	text := "→ " + call.Name + "(" + oneLine(call.Arguments) + ") → " + oneLine(call.Observation)
	if call.Mocked {
		w.clipped(4, text, obsLines)
		return
	}
	w.clipped(4, c.styles.kind[kindWarn].Render(g.errored+" unmocked "+text), obsLines)
}

// oneLine folds a text's line breaks and runs of space into single spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// clipped writes text wrapped to the width and cut to at most n lines, the
// last ending in an ellipsis when some was left out.
func (w *detailWriter) clipped(indent int, text string, n int) {
	text = strings.TrimSpace(strings.ReplaceAll(text, "\r\n", "\n"))
	width := max(w.width-indent, 10)
	lines := strings.Split(w.c.wm.Wrap(strings.ReplaceAll(text, "\t", "    "), width, ""), "\n")
	if len(lines) > n {
		lines = lines[:n]
		last := lines[n-1]
		if w.c.sw(last)+w.c.sw(w.c.glyphs.ellipsis) > width {
			last = w.c.truncate(last, width)
		} else {
			last += w.c.glyphs.ellipsis
		}
		lines[n-1] = last
	}
	for _, l := range lines {
		w.sb.WriteString(strings.Repeat(" ", indent))
		w.sb.WriteString(l)
		w.sb.WriteString("\n")
	}
}
