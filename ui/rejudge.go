package ui

import (
	"pitwall/judge/scoring"
	"pitwall/runner/state"
	"strconv"

	tea "charm.land/bubbletea/v2"
)

// rejudgeCell asks for the completed repeats of (t, m) to be judged again by
// the judge in view; inference is not repeated.
func (m *model) rejudgeCell(t, mi int) tea.Cmd {
	refs := completedRefs(m.run, t, mi)
	if len(refs) == 0 {
		m.say("nothing to re-judge: this cell's inference did not complete", true)
		return nil
	}
	return m.askRejudge(refs, false)
}

// asking is what a pending re-judge question is about.
type asking struct {
	refs []state.CellRef
	all  bool // the whole run (R)
	// What the calls should cost (Ledger.Estimate), worked out once, by
	// a command (it reads the ledger), when the question is asked; id tells
	// its answer from one to an earlier question.
	id        int
	estimated bool
	tokens    int
	cost      float64
	priced    bool
}

// askRejudge asks before spending judge calls: how many it will make, what
// they should cost (filled in when the estimate arrives), and how many
// verdicts the judge in view has on those cells now.
func (m *model) askRejudge(refs []state.CellRef, all bool) tea.Cmd {
	if len(refs) == 0 {
		m.say("nothing to re-judge: no cell's inference completed", true)
		return nil
	}
	m.asked++
	m.asking = asking{refs: refs, all: all, id: m.asked}
	m.ask = askRejudge
	if !m.c.opts.hasLedger() {
		return nil
	}
	est := m.c.opts.ledger().Estimate
	id, judge, samples := m.asked, m.judge, m.rejudgeSamples()
	return func() tea.Msg {
		e := estimatedMsg{id: id}
		e.tokens, e.cost, e.priced, e.ok = est(refs, judge, samples)
		return e
	}
}

// estimatedMsg is what a re-judge question's calls should cost.
type estimatedMsg struct {
	id         int
	tokens     int
	cost       float64
	priced, ok bool
}

// estimated fills the pending question's cost in, if it is still the one
// the estimate was made for.
func (m *model) estimated(e estimatedMsg) {
	if m.ask != askRejudge || m.asking.id != e.id {
		return
	}
	a := &m.asking
	a.tokens, a.cost, a.priced, a.estimated = e.tokens, e.cost, e.priced, e.ok
}

// rejudgeSamples is how many calls a re-judge makes per judge per cell.
func (m *model) rejudgeSamples() int {
	if m.run == nil {
		return 1
	}
	return max(m.run.Plan.Samples, 1)
}

// rejudgeQuestion names the cost of the pending re-judge.
func (m *model) rejudgeQuestion() string {
	refs := m.asking.refs
	judges := 1
	if m.judge == scoring.JuryName && m.run != nil {
		judges = max(len(m.run.Plan.Judges), 1)
	}
	samples := m.rejudgeSamples()
	have := 0
	if m.run != nil {
		idx := map[string]int{}
		for i, t := range m.run.Tests {
			idx["t"+t.ID] = i
		}
		for i, mo := range m.run.Models {
			idx["m"+mo] = i
		}
		for _, r := range refs {
			if c := m.run.Cell(idx["t"+r.Test], idx["m"+r.Model], r.Repeat); c != nil {
				if j := c.Judgment(m.judge); j != nil && j.Status == state.JudgmentDone {
					have++
				}
			}
		}
	}
	what := itoa(len(refs)) + " cells"
	if len(refs) == 1 {
		what = refs[0].Model + " " + m.c.glyphs.times + " " + refs[0].Test
	}
	cost := ""
	if a := m.asking; a.estimated {
		cost = ", ~" + thousands(a.tokens) + " tokens"
		if a.priced {
			cost += ", ~$" + strconv.FormatFloat(a.cost, 'f', costDigits(a.cost), 64)
		}
	}
	return "Re-judge " + what + " with " + m.judge + "? " + itoa(len(refs)*judges*samples) + " judge calls" + cost + "; " +
		itoa(have) + " verdicts now, kept until the new ones are in. [y/N]"
}

// rejudgeNow sends the re-judge the user said yes to.
func (m *model) rejudgeNow() tea.Cmd {
	a := m.asking
	m.asking = asking{}
	m.handOver()
	if a.all {
		m.sayJudging("re-judging the run with " + m.judge + "… (s cancels)")
		return m.act.rejudgeAll(m.judge)
	}
	m.sayJudging("re-judging " + itoa(len(a.refs)) + " cells with " + m.judge + "… (s cancels)")
	if len(a.refs) == 1 {
		m.sayJudging("re-judging " + a.refs[0].Model + " " + m.c.glyphs.times + " " + a.refs[0].Test + " with " + m.judge + "… (s cancels)")
	}
	return m.act.rejudge(a.refs, m.judge)
}

// rejudging reports whether judge work runs after the run's end: a
// re-judge or a judge switch, which s cancels.
func (m *model) rejudging() bool {
	return m.run != nil && m.run.Final && m.ctrl != nil && (m.run.JudgeInFlight > 0 || m.hand.pending())
}

func completedRefs(run *state.BatteryRun, t, mi int) []state.CellRef {
	if run == nil || t >= len(run.Tests) || mi >= len(run.Models) {
		return nil
	}
	var refs []state.CellRef
	for r, c := range repeats(run, t, mi) {
		if c.Status == state.Completed {
			refs = append(refs, state.CellRef{Test: run.Tests[t].ID, Model: run.Models[mi], Repeat: r})
		}
	}
	return refs
}
