package ui

import (
	"slices"

	"pitwall/internal/textutil"
	"pitwall/runner/state"
)

// The detail view's texts come from batteries, servers and judges: a reply
// may hold ESC and a sequence of its own, a test id a right-to-left
// override. shownTest and shownCell are what the detail view is made of,
// every such text escaped (textutil.Terminal) before it is styled, wrapped
// or measured, so that the view's own styling is the only thing that acts
// on the terminal and its widths are those of what is shown. Text with
// nothing to escape is kept without a copy.

var esc = textutil.Terminal

// shownTest is t as the detail view shows it.
func shownTest(t state.TestInfo) state.TestInfo {
	t.ID, t.Name, t.Category, t.Severity = esc(t.ID), esc(t.Name), esc(t.Category), esc(t.Severity)
	t.System, t.Prompt, t.Criteria, t.Reference = esc(t.System), esc(t.Prompt), esc(t.Criteria), esc(t.Reference)
	t.Tools = slices.Clone(t.Tools)
	for i := range t.Tools {
		f := &t.Tools[i].Function
		f.Name, f.Description = esc(f.Name), esc(f.Description)
		// Parameters is shown as JSON, which keeps bidi controls: it is
		// escaped once marshalled (buildDetail).
	}
	return t
}

// shownCell is c as the detail view shows it. Judges' names stay as they
// are, for looking judgments up; the view escapes them where it writes them.
func shownCell(c state.Cell) state.Cell {
	c.Model, c.Test, c.Server = esc(c.Model), esc(c.Test), esc(c.Server)
	r := c.EditReply()
	r.Error = esc(r.Error)
	r.Output, r.Reasoning, r.FinishReason = esc(r.Output), esc(r.Reasoning), esc(r.FinishReason)
	r.ToolCalls = slices.Clone(r.ToolCalls)
	for i := range r.ToolCalls {
		tc := &r.ToolCalls[i]
		tc.Name, tc.Arguments = esc(tc.Name), esc(tc.Arguments)
	}
	r.Checks = slices.Clone(r.Checks)
	for i := range r.Checks {
		ch := &r.Checks[i]
		ch.Name, ch.Reason = esc(ch.Name), esc(ch.Reason)
	}
	r.Steps = slices.Clone(r.Steps)
	for i := range r.Steps {
		s := &r.Steps[i]
		s.Content, s.Reasoning, s.FinishReason, s.Server = esc(s.Content), esc(s.Reasoning), esc(s.FinishReason), esc(s.Server)
		s.Calls = slices.Clone(s.Calls)
		for k := range s.Calls {
			call := &s.Calls[k]
			call.Name, call.Arguments, call.Observation = esc(call.Name), esc(call.Arguments), esc(call.Observation)
		}
	}
	c.Judgments = slices.Clone(c.Judgments)
	for i, j := range c.Judgments {
		shown := *j
		shown.Error, shown.Source = esc(j.Error), esc(j.Source)
		shown.Samples = slices.Clone(j.Samples)
		for k := range shown.Samples {
			s := &shown.Samples[k]
			s.Raw, s.Reasoning, s.Reason, s.ParseErr = esc(s.Raw), esc(s.Reasoning), esc(s.Reason), esc(s.ParseErr)
		}
		if j.Jury != nil {
			jury := *j.Jury
			jury.Judges = slices.Clone(jury.Judges)
			for k := range jury.Judges {
				jury.Judges[k].Judge = esc(jury.Judges[k].Judge)
			}
			shown.Jury = &jury
		}
		c.Judgments[i] = &shown
	}
	return c
}
