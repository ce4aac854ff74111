package ui

import (
	"bufio"
	"fmt"
	"io"
	"pitwall/internal/textutil"
	"pitwall/runner/state"
	"sort"
	"strconv"
	"strings"
	"time"
)

// RunPlain is the headless renderer. For each cell that reaches a terminal
// state, and each judgment that completes, it prints one line on stderr,
// found by diffing consecutive snapshots (a row whose pointer did not change
// has no changes). It returns once it has drawn a snapshot with Final and no
// judge work in flight, or when the channel closes, after printing the final
// grid and its Summary on stdout. It reads every snapshot it is given, so the
// final one is never missed; a jump over dropped intermediate snapshots only
// means that several lines come out of one diff.
func RunPlain(snaps <-chan *state.BatteryRun, stdout, stderr io.Writer, opts Options) *state.BatteryRun {
	// Plain output has no escape sequences of its own: whatever a battery
	// or a server put in a name or a message is shown escaped.
	// A snapshot's lines go out in one write, not one each: a run of
	// 100,000 cells prints 200,000 of them. The buffer is below the
	// escaping, which sees each line whole: a buffer above it would cut
	// a character in two where the buffer fills, and each half would be
	// escaped as a stray byte.
	raw := struct{ io.Writer }{stderr} // a bufio.Writer of its own, never the caller's
	lines := bufio.NewWriterSize(raw, 32<<10)
	cut := false // a flush failed part way: its last line was left half written
	flush := func() {
		if lines.Buffered() == 0 {
			return
		}
		if cut {
			if _, err := io.WriteString(raw, "\n"); err != nil {
				lines.Reset(raw) // still refused: these lines go too
				return
			}
			cut = false
		}
		if n := lines.Buffered(); lines.Flush() != nil {
			// stderr refused the lines (a closed pipe, a full disk): the
			// run goes on, and the next snapshot's lines are tried afresh,
			// on a line of their own if part of these went out.
			cut = lines.Buffered() < n
			lines.Reset(raw)
		}
	}
	stdout, stderr = textutil.TerminalWriter(stdout), textutil.TerminalWriter(lines)
	p := newPlain(stderr, opts)
	var last *state.BatteryRun
	for run := range snaps {
		if run == nil {
			continue
		}
		if last == nil && opts.Continued {
			p.already(run)
		} else {
			p.diff(last, run)
		}
		flush()
		last = run
		if run.Final && run.JudgeInFlight == 0 {
			break
		}
	}
	if last == nil {
		fmt.Fprintln(stderr, "pitwall: the run ended before its first snapshot")
		flush()
		return nil
	}
	judge := defaultJudge(last)
	fmt.Fprint(stdout, RenderGrid(last, judge, opts.ASCII))
	fmt.Fprint(stdout, "\n"+Summary(last, judge, opts))
	return last
}

// waitingEvery is the longest the headless output goes without a waiting
// line while work waits (on servers down, or rate-limited): a log that
// stops for minutes must say why. A variable so that tests can shorten it.
var waitingEvery = 30 * time.Second

// plain prints progress lines.
type plain struct {
	c        *common
	w        io.Writer
	waiting  string         // what waited when the last waiting line was printed
	waitedAt time.Time      // when it was printed
	done     int            // cells whose inference is over
	judged   map[string]int // judgments done, per judge
	board    board          // tallies of the run's judge, for the judge lines' total
	// hdr reads progress, ETA and rate as the grid's header does, for a
	// progress line every progressEvery; progressAt is when the last went.
	hdr        header
	progressAt time.Time
}

// progressEvery is how often a headless run says how far it is.
const progressEvery = 30 * time.Second

func newPlain(w io.Writer, opts Options) *plain {
	p := &plain{c: plainCommon(opts), w: w, judged: map[string]int{}}
	p.hdr = header{c: p.c}
	return p
}

// plainCommon is what text for a file or a pipe is drawn with: no colour,
// widths by wcwidth, the screen's rule where the terminal does not say
// otherwise (common.wm).
func plainCommon(opts Options) *common {
	c := newCommon(opts)
	c.styles = newStyles(true)
	c.opts.NoColor = true
	return c
}

// fold makes s ASCII in ASCII mode.
func (p *plain) fold(s string) string { return fold(p.c, s) }

func fold(c *common, s string) string {
	if c.opts.ASCII {
		return asciiFold.Replace(s)
	}
	return s
}

// fleet prints servers going down and coming back, and what waits on the
// servers that are down, each time that changes.
func (p *plain) fleet(prev, run *state.BatteryRun) {
	was := map[string]bool{}
	if prev != nil {
		for _, s := range prev.Fleet {
			was[s.Name] = s.Up
		}
	}
	for _, s := range run.Fleet {
		up, known := was[s.Name]
		switch {
		case !s.Up && (up || !known && prev != nil):
			fmt.Fprintf(p.w, "server %s down: %s\n", s.Name, s.DownReason)
		case s.Up && known && !up:
			fmt.Fprintf(p.w, "server %s is back\n", s.Name)
		}
	}
	// The line says how long servers have been down: it is printed again
	// when what waits changes, and at least every waitingEvery while
	// anything waits, not every time the clock moves.
	key := stranded(run)
	now := p.c.now()
	if w := waiting(run, now); w != "" && (key != p.waiting || now.Sub(p.waitedAt) >= waitingEvery) {
		fmt.Fprintln(p.w, w)
		p.waitedAt = now
	}
	p.waiting = key
}

// stranded names what waits on which server, without times that move: the
// servers down, the holds of those rate-limited.
func stranded(run *state.BatteryRun) string {
	var sb strings.Builder
	for _, s := range run.Stranded() {
		fmt.Fprintf(&sb, "%s:%d ", s.Name, s.Stranded)
	}
	for _, s := range run.Fleet {
		if s.Up && !s.HeldUntil.IsZero() {
			fmt.Fprintf(&sb, "%s@%d:%d ", s.Name, s.HeldUntil.UnixNano(), s.Queue)
		}
	}
	return sb.String()
}

// diff prints what changed from prev to run.
func (p *plain) diff(prev, run *state.BatteryRun) {
	if prev != nil && (len(prev.Tests) != len(run.Tests) || len(prev.Models) != len(run.Models) || prev.Repeat != run.Repeat) {
		prev = nil
	}
	p.board.apply(run, defaultJudge(run))
	p.hdr.observe(run, p.board.counts)
	defer p.progress(run)
	p.fleet(prev, run)
	total := totalCells(run)
	for t := range run.Tests {
		row := rowAt(run, t)
		var old *state.Row
		if prev != nil {
			old = rowAt(prev, t)
		}
		if row == old || row == nil {
			continue
		}
		for i := range row.Cells {
			c := row.Cells[i]
			var was *state.Cell
			if old != nil && i < len(old.Cells) {
				was = old.Cells[i]
			}
			if c == was {
				continue // copied on write: the same cell, nothing to say
			}
			switch {
			case c.Status.Terminal() && (was == nil || !was.Status.Terminal()):
				p.done++
				fmt.Fprintf(p.w, "[%d/%d] %s %s\n", p.done, total, p.cellName(run, c), p.fold(p.outcome(c)))
			case !c.Status.Terminal() && was != nil && was.Status.Terminal():
				p.done--
			}
			p.judgments(run, c, was)
		}
	}
}

// already takes in a continued run's first snapshot: its finished cells and
// verdicts are counted as done and not listed, so that a retry of five
// cells prints five lines, not the whole run again.
func (p *plain) already(run *state.BatteryRun) {
	p.board.apply(run, defaultJudge(run))
	p.fleet(nil, run)
	for t := range run.Tests {
		row := rowAt(run, t)
		if row == nil {
			continue
		}
		for _, c := range row.Cells {
			if c.Status.Terminal() {
				p.done++
			}
			for _, j := range c.Judgments {
				if j != nil && j.Status == state.JudgmentDone {
					p.judged[j.Judge]++
				}
			}
		}
	}
	fmt.Fprintf(p.w, "run %s goes on: %d of %d cells were already done (not listed again)\n", run.ID, p.done, totalCells(run))
}

func (p *plain) cellName(run *state.BatteryRun, c *state.Cell) string {
	name := c.Model + " " + p.c.glyphs.times + " " + c.Test
	if run.Repeat > 1 {
		name += "#" + strconv.Itoa(c.Repeat+1)
	}
	return name
}

// outcome is the end of an inference line: glyph, timing, and why it failed.
func (p *plain) outcome(c *state.Cell) string {
	g := p.c.glyphs
	said := c.Said()
	switch c.Status {
	case state.Completed:
		return g.ok + " " + timing(c)
	case state.Failed:
		why := said.Error
		checks := said.Checks
		if c.Clipped && len(checks) == 0 && p.c.opts.hasLedger() {
			// The live state leaves a finished cell's checks to the ledger:
			// the line says which one failed, so it reads them there.
			if r, err := p.c.opts.ledger().Reply(state.CellRef{Test: c.Test, Model: c.Model, Repeat: c.Repeat}); err == nil {
				checks = r.Checks
			}
		}
		for _, ch := range checks {
			if !ch.Pass {
				why = ch.Name
				if ch.Reason != "" {
					why += ": " + ch.Reason
				}
				break
			}
		}
		return strings.TrimSpace(g.failed + " " + timing(c) + " " + why)
	case state.Errored:
		msg := string(said.ErrorClass)
		if said.Error != "" {
			msg = strings.TrimPrefix(msg+": "+said.Error, ": ")
		}
		if c.Attempts > 1 {
			msg += " (after " + strconv.Itoa(c.Attempts) + " attempts)"
		}
		return g.errored + " " + msg
	}
	return g.cancel + " cancelled"
}

func timing(c *state.Cell) string {
	if c.Cached() {
		return "cached" // the figures are the reused request's
	}
	s := plainDur(c.Latency)
	if c.TokensPerSec > 0 {
		s += " " + strconv.FormatFloat(c.TokensPerSec, 'f', 0, 64) + " tok/s"
	}
	if cut := c.Said().PromptCut; cut > 0 {
		s += " · prompt cut to " + strconv.Itoa(cut) + " tokens"
	}
	return s
}

// plainDur formats a duration for a progress line: 850ms, 1.2s, 2m05s.
func plainDur(d time.Duration) string {
	switch {
	case d <= 0:
		return ""
	case d < time.Second:
		return strconv.Itoa(int(d/time.Millisecond)) + "ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	}
	return clock(d)
}

// judgments prints the judgments of c that completed since was, configured
// judges first and in their order, so that the output is stable.
func (p *plain) judgments(run *state.BatteryRun, c, was *state.Cell) {
	if len(c.Judgments) == 0 && (was == nil || len(was.Judgments) == 0) {
		return
	}
	for _, name := range judgeOrder(run, c, was) {
		j, pj := c.Judgment(name), was.Judgment(name)
		isDone := j != nil && j.Status == state.JudgmentDone
		wasDone := pj != nil && pj.Status == state.JudgmentDone
		switch {
		case isDone && (!wasDone || pj != j && !sameJudgment(pj, j)):
			if !wasDone {
				p.judged[name]++
			}
			of := max(p.board.counts.ToJudge, p.judged[name])
			fmt.Fprintf(p.w, "[judge %d/%d] %s %s\n", p.judged[name], of, p.cellName(run, c), p.fold(p.verdict(name, j)))
		case wasDone && !isDone:
			p.judged[name]--
		}
	}
}

func judgeOrder(run *state.BatteryRun, c, was *state.Cell) []string {
	seen := map[string]bool{}
	var names []string
	for _, n := range run.Plan.Choices() {
		if !seen[n] && (c.Judgment(n) != nil || was.Judgment(n) != nil) {
			seen[n] = true
			names = append(names, n)
		}
	}
	var rest []string
	for _, cell := range []*state.Cell{c, was} {
		if cell == nil {
			continue
		}
		for _, j := range cell.Judgments {
			if n := j.Judge; !seen[n] {
				seen[n] = true
				rest = append(rest, n)
			}
		}
	}
	sort.Strings(rest)
	return append(names, rest...)
}

func sameJudgment(a, b *state.Judgment) bool {
	return a.Verdict == b.Verdict && a.Score == b.Score && a.Error == b.Error &&
		a.Latency == b.Latency && a.Source == b.Source && len(a.Samples) == len(b.Samples)
}

func (p *plain) verdict(name string, j *state.Judgment) string {
	g := p.c.glyphs
	k := verdictKind(j.Verdict)
	s := g.glyph(k, 0) + scoreText(k, j.Score) + " (" + name + ")"
	if j.Source == "cache" {
		s += " cached"
	} else if d := plainDur(j.Latency); d != "" {
		s += " " + d
	}
	if j.Jury != nil && j.Jury.Disagreement {
		s += " judges disagree"
	}
	if j.Error != "" {
		s += ": " + j.Error
	}
	return s
}

// progress prints where the run stands, as the grid's header says it
// (phase, done of total, elapsed, ETA, rate), every progressEvery while
// the run goes.
func (p *plain) progress(run *state.BatteryRun) {
	now := p.c.now()
	if run.Final || run.Phase == state.PhaseDone || run.Started.IsZero() {
		return
	}
	if p.progressAt.IsZero() {
		p.progressAt = now // the first line comes progressEvery after the output began
		return
	}
	if now.Sub(p.progressAt) < progressEvery {
		return
	}
	p.progressAt = now
	line := strings.TrimSpace(p.hdr.progress(run, p.board.counts, defaultJudge(run)))
	fmt.Fprintln(p.w, p.fold("[progress] "+line))
}
