package ui

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"pitwall/judge/scoring"
	"pitwall/runner/compare"
	"pitwall/runner/state"
)

// ranking is the compare view (c): the run in view ranked by runner/compare,
// as `pitwall compare` ranks a run from the ledger, for the judge in view and
// over what the grid's filters keep. It follows the snapshots while it is
// open. A ranking is worked out by a command, off the screen's goroutine:
// its bootstrap over a large battery costs more than a frame. Snapshots that
// arrive while one is being worked out are merged into the next.
type ranking struct {
	c             *common
	width, height int
	off           int // first line shown

	last  *rankedMsg // the newest ranking; nil until the first arrives
	busy  bool       // a ranking is being worked out
	stale bool       // something changed since it was asked for

	lines []string // last laid out for built columns
	built int
}

// rankRun ranks run for judge over the tests and models kept (indices into
// run's, nil for all). The snapshot is immutable, so the command may read
// it while the screen goes on.
func rankRun(run *state.BatteryRun, judge string, tests, models []int) tea.Cmd {
	return func() tea.Msg {
		cr := compareRun(run, judge, tests, models)
		msg := rankedMsg{seq: run.Seq, judge: judge, live: !run.Final || run.JudgeInFlight > 0,
			cells: len(cr.Cells), tests: len(cr.Tests), models: len(cr.Models), allT: len(run.Tests), allM: len(run.Models)}
		for _, j := range run.Plan.Judges {
			if j != scoring.JuryName {
				msg.judges++
			}
		}
		msg.report, msg.err = compare.Runs(compare.Options{}, cr)
		return msg
	}
}

// compareRun is a snapshot as runner/compare reads a run, with judge in
// view: each cell's verdict and score are the ones the export and the
// gates give it (compare.Judged).
func compareRun(run *state.BatteryRun, judge string, tests, models []int) compare.Run {
	if tests == nil {
		tests = allIndices(len(run.Tests))
	}
	if models == nil {
		models = allIndices(len(run.Models))
	}
	r := compare.Run{ID: run.ID, Name: run.Name, Judge: judge, Judges: run.Plan.Judges,
		Categories: map[string]string{}}
	for _, mi := range models {
		r.Models = append(r.Models, run.Models[mi])
	}
	for _, t := range tests {
		info := &run.Tests[t]
		r.Tests = append(r.Tests, info.ID)
		if info.Category != "" {
			r.Categories[info.ID] = info.Category
		}
		for _, mi := range models {
			for _, c := range repeats(run, t, mi) {
				r.Cells = append(r.Cells, compareCell(c, judge))
			}
		}
	}
	return r
}

func compareCell(c *state.Cell, judge string) compare.Cell {
	verdict, score := compare.Judged(c, judge)
	cc := compare.Cell{Model: c.Model, Test: c.Test, Repeat: c.Repeat, Outcome: compare.OutcomeOf(string(c.Status), verdict),
		Judged: compare.ByJudge(judge, string(c.Status), verdict), Score: score, Latency: c.Latency, TTFT: c.TTFT, TokensPerSec: c.TokensPerSec,
		PromptTokens: c.PromptTokens, CompletionTokens: c.CompletionTokens}
	for _, j := range c.Judgments {
		if j.Status == state.JudgmentDone && j.Judge != scoring.JuryName {
			if cc.Verdicts == nil {
				cc.Verdicts = map[string]string{}
			}
			cc.Verdicts[j.Judge] = string(j.Verdict)
		}
	}
	return cc
}

func allIndices(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// SetSize gives the ranking its part of the screen.
func (r *ranking) SetSize(w, h int) { r.width, r.height = w, h }

// take keeps a ranking that arrived.
func (r *ranking) take(msg rankedMsg) {
	r.last, r.lines = &msg, nil
	r.busy, r.stale = false, false
}

// scroll moves by n lines, no further than the end.
func (r *ranking) scroll(n int) { r.off = min(max(r.off+n, 0), r.lastOff()) }

func (r *ranking) lastOff() int { return max(len(r.layout())-r.height, 0) }

// page is how far pgup and pgdn move: a screen, less the line that says
// there is more.
func (r *ranking) page() int { return max(r.height-1, 1) }

func (r *ranking) toBottom() { r.off = r.lastOff() }

func (r *ranking) toTop() { r.off = 0 }

// View draws the ranking from the scroll offset in exactly height lines.
func (r *ranking) View() string {
	lines := r.layout()
	if len(lines) > r.height {
		r.off = min(r.off, len(lines)-r.height)
		more := r.off+r.height < len(lines)
		lines = append([]string(nil), lines[r.off:r.off+r.height]...)
		if more {
			lines[len(lines)-1] = r.c.styles.dim.Render(" " + r.c.glyphs.ellipsis + " more below (↓/j, pgdn, G)")
		}
	} else {
		r.off = 0
	}
	for len(lines) < r.height {
		lines = append(lines, "")
	}
	return strings.Join(lines[:max(r.height, 0)], "\n")
}

// layout is every line of the ranking at the current width, kept until
// the ranking or the width changes.
func (r *ranking) layout() []string {
	if r.lines != nil && r.built == r.width {
		return r.lines
	}
	r.built = r.width
	r.lines = r.build()
	for i, l := range r.lines {
		r.lines[i] = r.c.cut(l, r.width)
	}
	return r.lines
}

func (r *ranking) build() []string {
	st, g := r.c.styles, r.c.glyphs
	msg := r.last
	title := st.title.Render(" Ranking")
	switch {
	case msg == nil:
		return []string{title, st.dim.Render(" ranking the run" + g.ellipsis)}
	case msg.err != nil:
		return []string{title, st.alert.Render(" " + msg.err.Error())}
	}
	rep := msg.report
	rr := &rep.Runs[0]
	lines := []string{title + st.dim.Render(" — "+compare.JudgeLabel(msg.judge)+" · "+rep.Method())}
	decided := 0
	for _, m := range rr.Ranking {
		decided += m.Decided
	}
	about := itoa(decided) + " of " + itoa(msg.cells) + " cells decided"
	if n := rr.Pending(); n > 0 {
		// A rate of what is decided so far is not the run's: ✓ wait for
		// their verdicts while ❌ are in at once.
		about = "provisional: " + about + " · " + itoa(n) + " pending"
	}
	if msg.tests < msg.allT || msg.models < msg.allM {
		about += " · what the filters keep: " + itoa(msg.tests) + "/" + itoa(msg.allT) + " tests, " +
			itoa(msg.models) + "/" + itoa(msg.allM) + " models"
	}
	if msg.live {
		about += " · the run goes on: the ranking follows it"
	}
	lines = append(lines, st.dim.Render(" "+about), "")
	lines = append(lines, r.rankTable(rr, rep.Level, msg.judge != "")...)
	lines = append(lines, "")
	lines = append(lines, r.wrap(st.dim, "= tied: its interval overlaps another's, so the battery cannot tell them apart. "+
		g.failed+" failed (judge or checks)  "+g.warn+" split verdict  "+g.errored+" server or transport error  "+
		g.judgeError+" judge error: "+g.warn+" and "+g.errored+" count as not passed; "+g.judgeError+" and cells not run or not judged yet are left out"+
		" (+N pending: a rate is then its lowest–highest, "+g.dash+" while the judge has decided none)")...)

	lines = append(lines, "", st.section.Render(" Speed and tokens")+st.dim.Render(" — median/p95 over the cells that ran"))
	lines = append(lines, r.speedTable(rr)...)

	if len(rr.Categories) > 1 {
		lines = append(lines, "", st.section.Render(" By category")+st.dim.Render(" — pass/decided and pass rate"))
		lines = append(lines, r.categoryTable(rr)...)
	}
	if near := compare.Neighbours(rr); len(near) > 0 {
		lines = append(lines, "", st.section.Render(" Paired tests")+st.dim.Render(" — McNemar, each model against the next"))
		for _, p := range near {
			lines = append(lines, r.wrap(paint{}, p.Says)...)
		}
	}
	lines = append(lines, "", st.section.Render(" Judges' agreement"))
	switch {
	case len(rr.Judges) > 0:
		for _, j := range rr.Judges {
			lines = append(lines, r.wrap(paint{}, j.A+" and "+j.B+": "+compare.AgreementText(j))...)
		}
	case msg.judges > 1:
		lines = append(lines, st.dim.Render(" no cell judged by two judges yet"))
	case msg.judges == 1:
		lines = append(lines, st.dim.Render(" one judge: none to agree with"))
	default:
		lines = append(lines, st.dim.Render(" no judges: the checks alone decide"))
	}
	return lines
}

// wrap writes text indented by one, wrapped to the width (two for the
// lines after the first).
func (r *ranking) wrap(p paint, text string) []string {
	var out []string
	for i, l := range strings.Split(r.c.wm.Wrap(text, max(r.width-3, 20), ""), "\n") {
		pad := " "
		if i > 0 {
			pad = "   "
		}
		out = append(out, pad+p.Render(l))
	}
	return out
}

// modelW is the widest a model's name may be in a table.
func (r *ranking) modelW() int { return max(min(maxNameW, r.width/3), 8) }

func (r *ranking) rankTable(rr *compare.RunReport, level float64, scores bool) []string {
	g := r.c.glyphs
	cols := []column{
		{head: "rank"}, {head: "model", max: r.modelW()},
		{head: "pass", right: true}, {head: strconv.Itoa(int(100*level+0.5)) + "% interval"}, {head: "passed", right: true},
		{head: g.failed, right: true}, {head: g.warn, right: true},
		{head: g.errored, right: true}, {head: g.judgeError, right: true},
	}
	if scores {
		cols = append(cols, column{head: "score", right: true}, column{head: "score interval"})
	}
	cols = append(cols, column{head: "tied with"})
	for _, m := range rr.Ranking {
		row := []string{compare.RankLabel(m), m.Model,
			m.RateText(), compare.RangeText(m.Rate, m.Rated()), m.Passed(),
			itoa(m.Fail), itoa(m.Warn), itoa(m.Error), itoa(m.JudgeError)}
		if scores {
			row = append(row, compare.Score(m.Score.Value, m.Rated()), compare.ScoreRange(m.Score, m.Rated()))
		}
		tied := g.dash
		switch {
		case len(m.Tied) > 1 && len(m.Tied) == len(rr.Ranking)-1:
			tied = "all the others" // the usual word on a small battery, and a short one
		case len(m.Tied) > 0:
			short := make([]string, len(m.Tied))
			for i, t := range m.Tied {
				short[i] = shortModel(t)
			}
			tied = strings.Join(short, ", ")
		}
		row = append(row, tied)
		for i := range cols {
			cols[i].cells = append(cols[i].cells, row[i])
		}
	}
	return table(r.c, cols, 2, r.width)
}

func (r *ranking) speedTable(rr *compare.RunReport) []string {
	cols := []column{{head: "model", max: r.modelW()},
		{head: "latency", right: true}, {head: "TTFT", right: true}, {head: "tok/s", right: true},
		{head: "tokens in/out", right: true}}
	for _, m := range rr.Ranking {
		row := []string{m.Model, compare.MSPair(m.LatencyMS), compare.MSPair(m.TTFTMS), perSecPair(m.TokensPerSec, r.c.glyphs),
			thousands(m.PromptTokens) + "/" + thousands(m.CompletionTokens)}
		for i := range cols {
			cols[i].cells = append(cols[i].cells, row[i])
		}
	}
	return table(r.c, cols, 1, r.width)
}

// perSecPair is a tokens/s spread's median and p95.
func perSecPair(s compare.Spread, g *glyphs) string {
	if s.N == 0 {
		return g.dash
	}
	return compare.Num(s.Median, s.N) + "/" + compare.Num(s.P95, s.N)
}

func (r *ranking) categoryTable(rr *compare.RunReport) []string {
	cols := []column{{head: "model", max: r.modelW()}}
	for _, cat := range rr.Categories {
		cols = append(cols, column{head: cat, max: maxCellW})
	}
	for _, m := range rr.Ranking {
		cols[0].cells = append(cols[0].cells, m.Model)
		for i, cs := range m.Categories {
			s := r.c.glyphs.dash
			if cs.Known() {
				s = cs.Passed() + " " + cs.RateText()
			}
			if i+1 < len(cols) {
				cols[i+1].cells = append(cols[i+1].cells, s)
			}
		}
	}
	return table(r.c, cols, 1, r.width)
}

// key answers the ranking's own keys.
func (r *ranking) key(msg tea.KeyPressMsg) nav {
	k := r.c.keys.Compare
	switch {
	case key.Matches(msg, k.Back, k.Compare):
		return navClose
	case key.Matches(msg, k.Help):
		return navHelp
	}
	scrollKey(msg, k.scrollKeyMap, r)
	return navStay
}
