package ui

import (
	"github.com/charmbracelet/x/ansi"
	"strconv"
	"strings"
	"time"

	"pitwall/judge/scoring"
	"pitwall/runner/state"
)

// barW is the width of the header's progress bar.
const barW = 20

// header draws the three top lines: what runs and which judge is in view;
// the phase with its progress, elapsed time, ETA and throughput (or the
// summary once the run is over); and a status line.
type header struct {
	c     *common
	width int

	// The current phase, when it started and how far it had got then: the
	// ETA and the per-minute rate are of what was done since.
	phase     state.Phase
	phaseAt   time.Time
	phaseDone int

	// tokens are TokensGenerated as snapshots brought it, oldest first,
	// for tok/s over the last tokWindow.
	tokens []tokenSample

	// loading is how many models are being loaded at the last snapshot.
	loading int
}

// tokWindow is how far back tok/s looks: long enough to span a few cells'
// completions (tokens are counted as a cell completes), short enough that
// the figure falls to nothing soon after generation stops.
const tokWindow = 10 * time.Second

type tokenSample struct {
	at     time.Time
	tokens int64
}

// SetSize sets the header's width.
func (h *header) SetSize(w int) { h.width = w }

// observe notes phase changes and token counts as snapshots arrive.
func (h *header) observe(run *state.BatteryRun, counts state.Tally) {
	if run == nil {
		return
	}
	now := h.c.now()
	h.observeTokens(run, now)
	h.loading = loadingModels(run, counts)
	if run.Phase == h.phase {
		return
	}
	h.phase = run.Phase
	h.phaseAt = now
	h.phaseDone = progressOf(run, counts)
	if run.Phase == state.PhaseInference && !run.Started.IsZero() {
		h.phaseAt, h.phaseDone = run.Started, 0
	}
}

// observeTokens keeps the samples tok/s needs: those inside the window and
// the last one before it, which says how many tokens there were when the
// window began.
func (h *header) observeTokens(run *state.BatteryRun, now time.Time) {
	if n := len(h.tokens); n > 0 && run.TokensGenerated < h.tokens[n-1].tokens {
		h.tokens = h.tokens[:0] // another run, or a count that went back
	}
	if len(h.tokens) == 0 && !run.Started.IsZero() && now.Sub(run.Started) <= tokWindow {
		// A run that began inside the window had no tokens then.
		h.tokens = append(h.tokens, tokenSample{run.Started, 0})
	}
	h.tokens = append(h.tokens, tokenSample{now, run.TokensGenerated})
	drop := 0
	for drop+1 < len(h.tokens) && !h.tokens[drop+1].at.After(now.Add(-tokWindow)) {
		drop++
	}
	h.tokens = append(h.tokens[:0], h.tokens[drop:]...)
}

// tokensPerSec is the rate of generation over the last tokWindow: the tokens
// counted since the window began over the time since then, or since the
// first sample when the UI has watched for less. It needs two samples, or
// time passed since the one: a first snapshot alone says nothing of a rate.
func (h *header) tokensPerSec(now time.Time) (float64, bool) {
	if len(h.tokens) == 0 {
		return 0, false
	}
	// The window begins with the last sample before it: the count then.
	base, last := h.tokens[0], h.tokens[len(h.tokens)-1]
	for _, s := range h.tokens[1:] {
		if s.at.After(now.Add(-tokWindow)) {
			break
		}
		base = s
	}
	span := min(now.Sub(base.at), tokWindow)
	if span < time.Second {
		return 0, false
	}
	return float64(last.tokens-base.tokens) / span.Seconds(), true
}

// phaseRate is the progress the current phase made per minute since it
// began (or since the UI first saw it), once there has been time enough
// to tell.
func (h *header) phaseRate(now time.Time, done int) (float64, bool) {
	since := now.Sub(h.phaseAt)
	if h.phaseAt.IsZero() || since < 2*time.Second {
		return 0, false
	}
	return float64(done-h.phaseDone) / since.Minutes(), true
}

// progressOf is the count the current phase advances.
func progressOf(run *state.BatteryRun, counts state.Tally) int {
	if run.Phase == state.PhaseJudgment {
		return counts.Judged
	}
	return counts.Done()
}

func totalCells(run *state.BatteryRun) int {
	return len(run.Tests) * len(run.Models) * max(run.Repeat, 1)
}

// headerState is what the model tells the header beyond the snapshot.
type headerState struct {
	counts state.Tally
	judge  string
	status string // left of the status line
	alert  bool   // status is a question or an error
	right  string // right of the status line
	// ask: status is a question the user must answer. It takes the whole
	// line, without right, and wraps onto more lines where one is too
	// short: its cost and its [y/N] are never cut.
	ask bool
}

// statusLines is how many lines the status takes: 1, or more for a
// question too long for one.
func (h *header) statusLines(s headerState) int {
	if !s.ask {
		return 1
	}
	return len(h.wrapQuestion(s.status))
}

// wrapQuestion is a question broken into lines of the header's width, each
// after the one space of margin the status line keeps.
func (h *header) wrapQuestion(q string) []string {
	return strings.Split(h.c.wm.Wrap(q, max(h.width-1, 1), ""), "\n")
}

// View draws the header in three lines.
func (h *header) View(run *state.BatteryRun, s headerState) string {
	st := h.c.styles
	var title, right string
	if run == nil {
		title = " pitwall"
	} else {
		// The run's name, id and judge come from configs and ledgers, the
		// status from servers: escaped before they are styled and measured.
		title = " pitwall · " + esc(run.Name)
		if run.ID != "" {
			title += " · run " + esc(run.ID)
		}
		switch {
		case s.judge == "":
			right = "checks only"
		case s.judge == scoring.JuryName:
			right = "judge jury (" + strconv.Itoa(len(run.Plan.Judges)) + " judges)"
		default:
			right = "judge " + esc(s.judge)
		}
	}
	line1 := h.split(st.title.Render(title), st.title.Render(right+" "))

	line2 := " waiting for the run…"
	if run != nil {
		line2 = h.progress(run, s.counts, s.judge)
	}
	if s.status == "" && run != nil {
		// Work waiting on servers that are down is the news while it lasts.
		if w := waiting(run, h.c.now()); w != "" {
			s.status, s.alert = esc(w), true
		}
	}
	if s.ask {
		lines := h.wrapQuestion(s.status)
		for i, l := range lines {
			lines[i] = " " + st.alert.Render(l)
		}
		return line1 + "\n" + h.fitItems(line2) + "\n" + strings.Join(lines, "\n")
	}
	status := " " + s.status
	if s.alert {
		status = " " + st.alert.Render(s.status)
	} else if s.status != "" {
		status = " " + st.status.Render(s.status)
	}
	right3 := st.dim.Render(s.right + " ")
	if s.status != "" && h.c.sw(status)+h.c.sw(right3)+1 > h.width {
		// A message (where an export went, an error) is the news: the
		// position in the grid gives way to it rather than cut it.
		right3 = ""
	}
	line3 := h.split(status, right3)
	return line1 + "\n" + h.fitItems(line2) + "\n" + line3
}

// fitItems fits the progress line to the width by dropping whole " · "
// items from its end, so that no figure is cut in half; only a first item
// too long for the line is cut.
func (h *header) fitItems(line string) string {
	for h.c.sw(line) > h.width {
		plain := ansi.Strip(line)
		i := strings.LastIndex(plain, " · ")
		if i <= 0 {
			break
		}
		line = h.c.wm.Truncate(line, h.c.sw(plain[:i]), "")
	}
	return h.c.cut(line, h.width)
}

// split puts left and right on one line. When both do not fit, right keeps
// up to half the width and left is cut.
func (h *header) split(left, right string) string {
	lw, rw := h.c.sw(left), h.c.sw(right)
	if lw+rw+1 > h.width {
		right = h.c.cut(right, max(h.width/2, h.width-lw-1))
		rw = h.c.sw(right)
		left = h.c.cut(left, max(h.width-rw-1, 0))
		lw = h.c.sw(left)
	}
	return left + strings.Repeat(" ", max(h.width-lw-rw, 0)) + right
}

func (h *header) progress(run *state.BatteryRun, counts state.Tally, judge string) string {
	now := h.c.now()
	elapsed := time.Duration(0)
	if !run.Started.IsZero() {
		end := run.Ended
		if end.IsZero() {
			end = now
		}
		elapsed = max(end.Sub(run.Started), 0)
	}
	if run.Final || run.Phase == state.PhaseDone {
		return h.summary(run, counts, judge, elapsed)
	}
	var parts []string
	done, total, name := counts.Done(), totalCells(run), "Inference"
	if run.Phase == state.PhaseJudgment {
		done, total, name = counts.Judged, counts.ToJudge, "Judgment"
	}
	parts = append(parts, " "+name+" "+strconv.Itoa(done)+"/"+strconv.Itoa(total)+" "+h.bar(done, total)+" "+percent(done, total))
	if elapsed > 0 {
		parts = append(parts, clock(elapsed))
	}
	wait := waiting(run, now)
	if wait != "" {
		// Nothing moves while work waits for a server: no rate to
		// extrapolate.
		parts = append(parts, "ETA waiting")
	} else if eta, ok := h.eta(now, done, total); ok {
		parts = append(parts, "ETA "+clock(eta))
	}
	// Throughput is of the phase in front: verdicts per minute since
	// judgment began, not over inference that judged nothing; tok/s over
	// the last few seconds, and none once no inference runs.
	if r, ok := h.phaseRate(now, done); h.loading > 0 && (!ok || r == 0) {
		// A large fleet spends its first seconds loading models: say so,
		// not "0 cells/min".
		parts = append(parts, "loading "+plural(h.loading, "model"))
	} else if ok {
		unit := " cells/min"
		if run.Phase == state.PhaseJudgment {
			unit = " verdicts/min"
		}
		parts = append(parts, strconv.FormatFloat(r, 'f', 1, 64)+unit)
	}
	if run.Phase == state.PhaseInference {
		if tps, ok := h.tokensPerSec(now); ok && (tps > 0 || counts.Running > 0) {
			parts = append(parts, strconv.FormatFloat(tps, 'f', 0, 64)+" tok/s")
		}
	}
	if run.Phase == state.PhaseInference && (counts.Judged > 0 || run.JudgeInFlight > 0) {
		parts = append(parts, "judged "+strconv.Itoa(counts.Judged)+"/"+strconv.Itoa(counts.ToJudge))
	}
	if j := judgeSpent(run.Judging); j != "" {
		parts = append(parts, j)
	}
	return strings.Join(parts, " · ")
}

// loadingModels is how many models are being loaded: those the fleet's
// servers say they load, and those of the cells waiting for a load, one
// model counted once. The cells are read only when the tally has some
// loading, once a snapshot.
func loadingModels(run *state.BatteryRun, counts state.Tally) int {
	models := map[string]bool{}
	for _, s := range run.Fleet {
		if s.Up && s.Loading != "" {
			models[s.Loading] = true
		}
	}
	if counts.Loading > 0 {
		for t := range run.Tests {
			row := rowAt(run, t)
			if row == nil {
				continue
			}
			for _, c := range row.Cells {
				if c != nil && c.Status == state.Loading {
					models[c.Model] = true
				}
			}
		}
	}
	return len(models)
}

// judgeSpent is what judging has spent so far, apart from inference:
// "judges 53 req 14,512 tok $0.021". Empty before the first request.
func judgeSpent(s state.JudgeSpend) string {
	if s.Requests == 0 {
		return ""
	}
	out := "judges " + strconv.Itoa(s.Requests) + " req " + thousands(int(s.PromptTokens+s.CompletionTokens)) + " tok"
	if s.Priced {
		out += " $" + strconv.FormatFloat(s.Cost, 'f', costDigits(s.Cost), 64)
	}
	return out
}

// eta extrapolates the rate observed since the phase began.
func (h *header) eta(now time.Time, done, total int) (time.Duration, bool) {
	r, ok := h.phaseRate(now, done)
	if !ok || r <= 0 || done >= total {
		return 0, false
	}
	return time.Duration(float64(total-done) / r * float64(time.Minute)), true
}

func (h *header) summary(run *state.BatteryRun, c state.Tally, judge string, elapsed time.Duration) string {
	g := h.c.glyphs
	word := "Done"
	switch run.Status {
	case state.RunStopped:
		word = "Stopped"
	case state.RunFailed:
		word = "Failed"
	}
	n := strconv.Itoa
	parts := []string{
		" " + word,
		n(c.Completed) + " " + g.ok + " " + n(c.Failed) + " " + g.failed + " " + n(c.Errored) + " " + g.errored + " " + n(c.Cancelled) + " " + g.cancel,
	}
	if judge != "" {
		parts = append(parts, g.pass+" "+n(c.Pass)+" "+g.fail+" "+n(c.Fail)+" "+g.warn+" "+n(c.Warn)+" "+g.judgeError+" "+n(c.JudgeError))
	}
	if elapsed > 0 {
		parts = append(parts, clock(elapsed))
	}
	if run.JudgeInFlight > 0 {
		parts = append(parts, "judging "+n(run.JudgeInFlight)+g.ellipsis)
	} else if h.c.opts.ExitCode != nil {
		parts = append(parts, "q exits "+n(h.c.opts.ExitCode(run)))
	}
	return strings.Join(parts, " · ")
}

func (h *header) bar(done, total int) string {
	st := h.c.styles
	filled := 0
	if total > 0 {
		filled = min(done*barW/total, barW)
	}
	return st.bar.Render(strings.Repeat(h.c.glyphs.barFull, filled)) +
		st.barEmpty.Render(strings.Repeat(h.c.glyphs.barEmpty, barW-filled))
}

func percent(done, total int) string {
	if total == 0 {
		return "0%"
	}
	return strconv.Itoa(done*100/total) + "%"
}
