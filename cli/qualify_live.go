package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"pitwall/edges/qualify"
	"syscall"
	"time"

	"pitwall/config"
	"pitwall/judge/scoring"
	"pitwall/ui"
)

const (
	// qualifyProgressEvery is how often a headless qualification says how
	// far it got, besides a line per judge when its answers are all in.
	qualifyProgressEvery = 10 * time.Second
)

// qualifyKey names one judge's answers on one case.
type qualifyKey struct{ judge, test string }

// qualifyWatch follows a qualification as its answers settle: it draws
// the live grid's snapshots (ui.Qualify, with the figures judge.Qualify
// gives over the answers in so far) and, headless, writes progress lines.
// Only the qualification's goroutine calls it.
type qualifyWatch struct {
	cases  []qualify.Case
	judges []config.Judge
	opts   qualify.Options
	k      int
	minAcc float64
	shape  ui.Qualify // name, run, judges, samples, total, start

	calls    []qualify.Call     // the answers kept (a cancelled request is not one)
	in       map[qualifyKey]int // answers kept, by judge and case
	byJudge  map[string]int
	answers  int
	dirty    bool
	lastLine time.Time

	snaps    chan *ui.Qualify // one slot, the newest wins; nil headless
	progress io.Writer        // headless progress lines; nil in the grid
}

func newQualifyWatch(cfg *config.Config, runID string, tests []config.JudgeTest, judges []config.Judge,
	opts qualify.Options, minAcc float64, started time.Time) *qualifyWatch {
	w := &qualifyWatch{judges: judges, opts: opts, k: max(cfg.Scoring.Samples, 1), minAcc: minAcc,
		in: map[qualifyKey]int{}, byJudge: map[string]int{}, lastLine: started}
	for _, t := range tests {
		w.cases = append(w.cases, qualify.Case{ID: t.ID, Expect: t.Expect})
	}
	w.shape = ui.Qualify{Name: cfg.Name, Run: runID, Samples: w.k, Total: len(judges) * len(tests) * w.k, Started: started}
	for _, j := range judges {
		w.shape.Judges = append(w.shape.Judges, j.Name)
	}
	if w.jury() {
		w.shape.Judges = append(w.shape.Judges, scoring.JuryName)
	}
	return w
}

// jury reports whether the jury of the judges is qualified too.
func (w *qualifyWatch) jury() bool { return w.opts.Jury != nil && len(w.judges) >= 2 }

// Answer takes one settled request: kept, its answer counts.
func (w *qualifyWatch) Answer(c qualify.Call, kept bool) {
	if !kept {
		return
	}
	w.calls = append(w.calls, c)
	w.in[qualifyKey{c.Judge, c.Case}]++
	w.byJudge[c.Judge]++
	w.answers++
	w.dirty = true
	if w.progress != nil && w.byJudge[c.Judge] == w.k*len(w.cases) {
		rep := qualify.Figures(w.cases, w.calls, w.opts)
		for _, q := range rep.Judges {
			if q.Judge == c.Judge {
				fmt.Fprintf(w.progress, "pitwall: judge %s: all %d answers in, accuracy %s, κ %.2f, J-ERR %s (%d/%d answers in all)\n",
					q.Judge, q.Verdicts, pct(q.Accuracy), q.Kappa.Kappa, pct(q.ErrorRate), w.answers, w.shape.Total)
			}
		}
	}
}

// Tick publishes what came in since the last tick, and headless says how
// far it got now and then.
func (w *qualifyWatch) Tick(now time.Time) {
	if w.snaps != nil && w.dirty {
		w.publish(w.snapshot(now, false, ""))
	}
	if w.progress != nil && now.Sub(w.lastLine) >= qualifyProgressEvery && w.answers < w.shape.Total {
		w.lastLine = now
		fmt.Fprintf(w.progress, "pitwall: %d/%d answers in, %s\n", w.answers, w.shape.Total, now.Sub(w.shape.Started).Round(time.Second))
	}
}

// publish puts s in the one-slot channel, replacing a snapshot not yet
// taken: the grid draws the newest, and a grid that is gone blocks nothing.
func (w *qualifyWatch) publish(s *ui.Qualify) {
	w.dirty = false
	select {
	case <-w.snaps:
	default:
	}
	w.snaps <- s
}

// snapshot is the qualification as it stands: a cell is decided once all
// its answers are in (the jury's once every judge's are), and the figures
// count the answers in so far; the jury's count the cases it decided.
func (w *qualifyWatch) snapshot(now time.Time, final bool, msg string) *ui.Qualify {
	s := w.shape
	s.Answers, s.Final, s.Message = w.answers, final, msg
	if final {
		s.Ended = now
	}
	rep := qualify.Figures(w.cases, w.calls, w.opts)
	at := map[string]int{}
	for i, q := range rep.Judges {
		at[q.Judge] = i
	}
	var decided []qualify.Case
	s.Rows = make([]ui.QualifyRow, len(w.cases))
	for i, c := range w.cases {
		row := ui.QualifyRow{Case: c.ID, Expect: c.Expect, Cells: make([]ui.QualifyCell, len(s.Judges))}
		all := true
		for ji, name := range s.Judges {
			cell := ui.QualifyCell{Answers: w.in[qualifyKey{name, c.ID}], Of: w.k}
			if name == scoring.JuryName && w.jury() {
				cell.Answers, cell.Of = 0, w.k*len(w.judges)
				for _, j := range w.judges {
					cell.Answers += w.in[qualifyKey{j.Name, c.ID}]
				}
			}
			if p, ok := at[name]; ok && cell.Answers >= cell.Of {
				rc := rep.Rows[i].Cells[p]
				cell.Verdict, cell.Correct = rc.Verdict, rc.Correct
			}
			if name != scoring.JuryName && cell.Answers < cell.Of {
				all = false
			}
			row.Cells[ji] = cell
		}
		if all {
			decided = append(decided, c)
		}
		s.Rows[i] = row
	}
	jury := rep
	if w.jury() && len(decided) < len(w.cases) {
		jury = qualify.Figures(decided, w.calls, w.opts)
	}
	for _, name := range s.Judges {
		f := ui.QualifyFigures{Judge: name}
		src := rep
		if name == scoring.JuryName {
			src = jury
		} else {
			for _, j := range w.judges {
				if j.Name == name {
					f.Model = j.Model
				}
			}
		}
		for _, q := range src.Judges {
			if q.Judge != name {
				continue
			}
			f.Verdicts, f.Correct, f.Accuracy, f.Kappa = q.Verdicts, q.Correct, q.Accuracy, q.Kappa.Kappa
			f.Consistency, f.ConsistencyCases, f.ErrorRate = q.Consistency, q.ConsistencyCases, q.ErrorRate
			f.Below = w.minAcc > 0 && q.Verdicts > 0 && q.Accuracy < w.minAcc-1e-9
		}
		s.Figures = append(s.Figures, f)
	}
	return &s
}

// runPublishing is q.Run with w's snapshots, the final one last.
func runPublishing(ctx context.Context, q *qualify.Qualification, w *qualifyWatch, jobs []*qualify.Job) ([]qualify.Call, error) {
	calls, err := q.Run(ctx, jobs)
	msg := ""
	switch {
	case err != nil:
		msg = fmt.Sprintf("the ledger %s cannot be written: %v", q.Led.Path(), err)
	case len(calls) < len(jobs):
		msg = "stopped: the figures count the answers that came back"
	}
	w.publish(w.snapshot(time.Now(), true, msg))
	return calls, err
}

// qualifyEnd is how a qualification ended, beside its answers.
type qualifyEnd struct {
	interrupted bool  // ctrl+c, SIGINT or SIGTERM: exit 130
	stopped     bool  // quit from the grid before every answer was in: exit 1
	uiErr       error // the grid failed: the qualification stopped (exit 2)
}

// qualifyLive runs q under the live grid, following it through w, until
// the user quits, and returns its answers as q.Run does. Quitting while answers are due
// stops the qualification (the grid asks first); what came back counts.
func qualifyLive(q *qualify.Qualification, w *qualifyWatch, jobs []*qualify.Job, opts ui.Options) ([]qualify.Call, qualifyEnd, error) {
	var end qualifyEnd
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	uiCtx, uiCancel := context.WithCancel(context.Background())
	defer uiCancel()
	sigterm := make(chan os.Signal, 1)
	signal.Notify(sigterm, syscall.SIGTERM)
	defer signal.Stop(sigterm)

	w.snaps = make(chan *ui.Qualify, 1)
	w.publish(w.snapshot(time.Now(), false, ""))
	type result struct {
		calls []qualify.Call
		err   error
	}
	ran := make(chan result, 1)
	go func() {
		calls, err := runPublishing(ctx, q, w, jobs)
		ran <- result{calls, err}
	}()
	quit := make(chan error, 1)
	go func() {
		_, err := ui.RunQualifyTUI(uiCtx, w.snaps, opts)
		quit <- err
	}()
	var uiErr error
	for waiting := true; waiting; {
		select {
		case <-sigterm:
			end.interrupted = true
			uiCancel()
		case uiErr = <-quit:
			waiting = false
		}
	}
	select {
	case <-sigterm: // came as the grid ended (it quits on SIGTERM too)
		end.interrupted = true
	default:
	}
	switch {
	case errors.Is(uiErr, ui.ErrInterrupted):
		end.interrupted = true
	case uiErr != nil && !end.interrupted:
		end.uiErr = uiErr
	}
	cancel() // the grid is gone: what is still due is not waited for
	r := <-ran
	if r.err == nil && len(r.calls) < len(jobs) && !end.interrupted {
		end.stopped = true
	}
	return r.calls, end, r.err
}
