package ui

import (
	"pitwall/runner/state"
	"strings"

	"charm.land/bubbles/v2/textinput"
)

// statusFilter is what `f` cycles through.
type statusFilter uint8

const (
	showAll statusFilter = iota
	showFailures
	showErrors
	showDisagreements
	numStatusFilters
)

func (s statusFilter) String() string {
	switch s {
	case showFailures:
		return "failures"
	case showErrors:
		return "errors"
	case showDisagreements:
		return "disagreements"
	}
	return "all"
}

func (s statusFilter) flag() cellFlag {
	switch s {
	case showFailures:
		return flagFailure
	case showErrors:
		return flagError
	case showDisagreements:
		return flagDisagree
	}
	return 0
}

// nameFilter is what `/` typed. Words are matched case-insensitively as
// substrings: "m:word" against model names, "t:word" against test ids, names
// and categories, and a bare word against whichever of the two it matches
// (so "qwen" keeps qwen's columns and every test). An axis keeps the items
// that match any of its words, or all of them when it has none.
// "sev:level" (or "severity:level") keeps the tests whose severity begins
// with level, on top of the words: "t:json sev:crit" is the critical json
// tests, not the json tests and the critical ones.
type nameFilter struct {
	models, tests, severities []string
}

func parseFilter(q string, run *state.BatteryRun) nameFilter {
	var f nameFilter
	for _, w := range strings.Fields(strings.ToLower(q)) {
		switch {
		case isSeverityWord(w):
			f.severities = append(f.severities, w[strings.IndexByte(w, ':')+1:])
		case strings.HasPrefix(w, "m:") && len(w) > 2:
			f.models = append(f.models, w[2:])
		case strings.HasPrefix(w, "t:") && len(w) > 2:
			f.tests = append(f.tests, w[2:])
		default:
			inModels := anyModel(run, w)
			inTests := anyTest(run, w)
			if inModels || !inTests {
				f.models = append(f.models, w)
			}
			if inTests || !inModels {
				f.tests = append(f.tests, w)
			}
		}
	}
	return f
}

// isSeverityWord reports whether w asks for a severity: "sev:level" or
// "severity:level". A bare "sev:" keeps the tests that have one, so the
// grid does not empty while the level is being typed.
func isSeverityWord(w string) bool {
	return strings.HasPrefix(w, "sev:") || strings.HasPrefix(w, "severity:")
}

// severityMatches reports whether t has a severity that begins with one of
// levels.
func severityMatches(t *state.TestInfo, levels []string) bool {
	sev := strings.ToLower(t.Severity)
	for _, l := range levels {
		if sev != "" && strings.HasPrefix(sev, l) {
			return true
		}
	}
	return false
}

// critical reports whether a failure of t matters most: the tests
// --fail-on critical gates on, marked in the test column.
func critical(t *state.TestInfo) bool { return strings.EqualFold(t.Severity, "critical") }

func anySeverity(run *state.BatteryRun) bool {
	for i := range run.Tests {
		if run.Tests[i].Severity != "" {
			return true
		}
	}
	return false
}

func anyCritical(run *state.BatteryRun) bool {
	for i := range run.Tests {
		if critical(&run.Tests[i]) {
			return true
		}
	}
	return false
}

func modelMatches(name string, words []string) bool {
	name = strings.ToLower(name)
	for _, w := range words {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

func testMatches(t *state.TestInfo, words []string) bool {
	id, name, cat := strings.ToLower(t.ID), strings.ToLower(t.Name), strings.ToLower(t.Category)
	for _, w := range words {
		if strings.Contains(id, w) || strings.Contains(name, w) || strings.Contains(cat, w) {
			return true
		}
	}
	return false
}

func anyModel(run *state.BatteryRun, w string) bool {
	for _, m := range run.Models {
		if modelMatches(m, []string{w}) {
			return true
		}
	}
	return false
}

func anyTest(run *state.BatteryRun, w string) bool {
	for i := range run.Tests {
		if testMatches(&run.Tests[i], []string{w}) {
			return true
		}
	}
	return false
}

// visibleModels are the model indices the name filter keeps, reusing buf.
func (f nameFilter) visibleModels(run *state.BatteryRun, buf []int) []int {
	buf = buf[:0]
	for i, m := range run.Models {
		if len(f.models) == 0 || modelMatches(m, f.models) {
			buf = append(buf, i)
		}
	}
	return buf
}

// visibleTests are the test indices both filters keep: a status filter keeps
// a test when one of its cells among models shows what it looks for.
func (f nameFilter) visibleTests(run *state.BatteryRun, b *board, st statusFilter, models []int, buf []int) []int {
	buf = buf[:0]
	want := st.flag()
	allModels := len(models) == len(run.Models)
	for t := range run.Tests {
		if len(f.tests) > 0 && !testMatches(&run.Tests[t], f.tests) {
			continue
		}
		if len(f.severities) > 0 && !severityMatches(&run.Tests[t], f.severities) {
			continue
		}
		if want != 0 {
			if allModels {
				if b.rowFlag[t]&want == 0 {
					continue
				}
			} else if !anyFlag(b, t, models, want) {
				continue
			}
		}
		buf = append(buf, t)
	}
	return buf
}

func anyFlag(b *board, t int, models []int, want cellFlag) bool {
	for _, m := range models {
		if b.cell(t, m).flags&want != 0 {
			return true
		}
	}
	return false
}

// newFilterInput is the / prompt's editor: textinput's keys (backspace,
// ctrl+u, arrows, ctrl+w…) edit it, and it reads no clipboard of its own
// (bracketed paste arrives as tea.PasteMsg).
func newFilterInput() textinput.Model {
	in := textinput.New()
	in.KeyMap.Paste.SetEnabled(false)
	in.KeyMap.AcceptSuggestion.SetEnabled(false)
	in.Focus()
	return in
}
