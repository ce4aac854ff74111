package cli

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"pitwall/edges/importrun"
	"pitwall/judge/scoring"
	"pitwall/runner"
	"pitwall/runner/history"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
	"pitwall/ui"
)

// The cells `rejudge --only` picks.
const (
	onlyAll    = "all"    // every completed cell
	onlyFailed = "failed" // completed cells whose verdict in view is FAIL
	onlyWarn   = "warn"   // completed cells whose verdict in view is WARN
)

func cmdRejudge(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("rejudge", "pitwall rejudge RUN|last [--config CONFIG] [--judge NAME|jury] [--samples N] [--only failed|warn|all] [--headless] [flags]",
		"Judges the completed cells of a run in the ledger again, with fresh samples and without any\n"+
			"inference request. The new verdicts stand beside the other judges' in the ledger; a judge's\n"+
			"own earlier verdicts are replaced. Headless, one line per new verdict goes to stderr and the\n"+
			"grid and summary, with the re-judging judge in view, to stdout; the exit code is `run`'s under\n"+
			"that judge. In the grid, J switches the judge in view as in `show`. A run imported from another\n"+
			"tool (`pitwall import`) has no judge and no server of its own: --config names a config whose\n"+
			"[[servers]], [sim], [run] and [[scoring.judges]] judge it (its battery and models are not used),\n"+
			"and those judges become the run's.", stderr)
	var cf commonFlags
	cf.register(fs, continueFlags...)
	db := ledgerFlag(fs)
	judgeName := fs.String("judge", "", "the judge that judges again, or \"jury\" for all of them (default: the run's judge in view)")
	samples := new(int)
	fs.Var(atLeastOne{samples, "votes per judge per cell"}, "samples", "`N` votes per judge per cell (default: the run's)")
	only := fs.String("only", onlyAll, "which completed cells: failed (verdict in view FAIL), warn (WARN) or all")
	judgeCfg := fs.String("config", "", "a config whose servers and judges judge the run (needed for an imported run)")
	yes := fs.Bool("yes", false, "send to hosted judges without asking (the estimate is printed all the same)")
	id, code, ok := oneRun(fs, args, "rejudge", stderr)
	if !ok {
		return code
	}
	switch *only {
	case onlyAll, onlyFailed, onlyWarn:
	default:
		return failf(stderr, fmt.Errorf("--only %q: give failed, warn or all", *only))
	}
	cfg, row, err := runConfig(*db, id, cf.overrides(fs))
	if err != nil {
		return failf(stderr, err)
	}
	if row.Status == ledger.RunRunning {
		// Its own process judges it; two writers of one run's verdicts
		// would each overwrite the other.
		return failf(stderr, fmt.Errorf("run %s is still running: re-judge it once it has ended", row.ID))
	}
	if *judgeCfg != "" {
		if cfg, err = judgingConfig(cfg, *judgeCfg, *db, cf.overrides(fs)); err != nil {
			return failf(stderr, err)
		}
	} else if _, imported := importrun.Imported(row); imported {
		return failf(stderr, fmt.Errorf("run %s was imported from another tool and has no judge or server of its own: "+
			"give --config CONFIG, a config with your [[scoring.judges]] and the [[servers]] they run on", row.ID))
	}
	adopt, err := adoptJudges(&row, cfg)
	if err != nil {
		return failf(stderr, err)
	}
	plan, err := history.Plan(row)
	if err != nil {
		return failf(stderr, err)
	}
	names, err := plan.Expand(*judgeName)
	if err != nil {
		return failf(stderr, fmt.Errorf("--judge %q: %w; run %s has %s", *judgeName, err, row.ID, judgeChoices(plan)))
	}
	k := max(plan.Samples, 1)
	if *samples > 0 {
		k = *samples
	}
	view := *judgeName
	if view == "" {
		view = plan.InView
	}
	a, err := openAppFor(cfg, row.ID, forJudging, stderr)
	if err != nil {
		return failf(stderr, err)
	}
	defer a.Close()
	if adopt {
		// Before Reopen, which reads the run's plan back from the ledger.
		if err := a.led.SetScoring(row.ID, row.ScoringMode, row.ScoringJSON); err != nil {
			return failf(stderr, err)
		}
	}
	run, err := runner.Reopen(cfg, row.ID, runner.Options{Fleet: a.fleet, Ledger: a.led, Logger: a.log, JudgeSamples: *samples})
	if err != nil {
		return failf(stderr, fmt.Errorf("reopening run %s: %w", row.ID, err))
	}
	defer run.Close() // before the app's Close: the run writes to its ledger

	req := rejudgeRequest{judge: *judgeName, view: view, only: *only, names: names, samples: k,
		headless: cf.headless, ascii: cf.ascii, strict: cfg.Run.Strict, yes: *yes}
	return req.run(a, run, stdin, stdout, stderr)
}

// rejudgeRequest is what `rejudge` was asked.
type rejudgeRequest struct {
	judge                   string   // --judge: a judge, the jury, or "" for the one in view
	view                    string   // whose verdicts the output and the exit code count
	only                    string   // onlyAll, onlyFailed or onlyWarn
	names                   []string // the judges that judge again
	samples                 int      // per judge per cell
	headless, ascii, strict bool
	yes                     bool // --yes: no question before hosted judges' calls
}

// run re-judges the cells of the reopened run that --only picks and shows
// it to the end, live or headless; it returns the exit code.
func (q rejudgeRequest) run(a *app, run *runner.Run, stdin io.Reader, stdout, stderr io.Writer) int {
	// Reopen has published the run as the ledger holds it: what --only
	// picks from, and what the new verdicts replace.
	before := <-run.Snapshots()
	refs := pickCells(before, q.only)
	opts := uiOptions(a, q.ascii, func(b *state.BatteryRun) int { return state.ExitCode(b, q.strict) })
	if len(refs) == 0 {
		fmt.Fprintf(stderr, "pitwall: no completed cell of run %s matches --only %s: nothing to re-judge\n", before.ID, q.only)
		last := inView(before, q.view)
		fmt.Fprint(stdout, ui.Summary(last, q.view, opts))
		return state.ExitCode(last, q.strict)
	}
	if ok, err := q.confirm(a, before.ID, refs, stdin, stderr); err != nil {
		return failf(stderr, err)
	} else if !ok {
		fmt.Fprintln(stderr, "pitwall: not confirmed: nothing was re-judged")
		return exitInterrupted
	}
	// Identical judge inputs share one call, so it may be fewer.
	fmt.Fprintf(stderr, "pitwall: re-judging %d cell(s) of run %s with %s: up to %d judge call(s), no inference\n",
		len(refs), before.ID, q.view, len(refs)*len(q.names)*q.samples)
	if err := run.Rejudge(refs, q.judge); err != nil {
		return failf(stderr, err)
	}
	if !q.headless && isTerminal(stdout) && isTerminal(stdin) {
		s := &session{run: run, app: a, strict: q.strict}
		opts.ExitCode = s.exitCode
		return s.live(opts, stdout, stderr)
	}
	w := &rejudgeWatch{run: run, app: a, view: q.view, refs: refs, before: judgmentsOf(before, refs, q.names)}
	last := w.plain(before, opts, stdout, stderr)
	if w.interrupted.Load() {
		return exitInterrupted
	}
	return state.ExitCode(last, q.strict)
}

// confirm prints what re-judging refs with hosted judges should cost and,
// on a terminal without --yes, asks before it is spent (confirmSpend).
func (q rejudgeRequest) confirm(a *app, runID string, refs []state.CellRef, stdin io.Reader, stderr io.Writer) (bool, error) {
	reqs, err := a.led.Requests(runID)
	if err != nil {
		return false, err
	}
	models := map[string]string{}
	for _, n := range q.names {
		if j, ok := a.cfg.Judge(n); ok {
			models[n] = j.Model
		}
	}
	es := estimateRejudge(a.cfg, reqs, refs, q.names, q.samples)
	return confirmSpend(es, models, isTerminal(stdin) && isTerminal(stderr), q.yes, stdin, stderr), nil
}

// judgeChoices says which judges a plan offers, for an error message.
func judgeChoices(p scoring.Plan) string {
	if c := p.Choices(); len(c) > 0 {
		return "judges " + strings.Join(c, ", ")
	}
	return "no judge (checks only)"
}

// pickCells names the completed cells of b that --only picks.
func pickCells(b *state.BatteryRun, only string) []state.CellRef {
	var refs []state.CellRef
	for _, row := range b.Rows {
		for i := range row.Cells {
			c := row.Cells[i]
			if c.Status != state.Completed {
				continue
			}
			j := c.Judgment(b.Plan.InView)
			done := j != nil && j.Status == state.JudgmentDone
			if only == onlyAll || only == onlyFailed && done && j.Verdict == scoring.Fail ||
				only == onlyWarn && done && j.Verdict == scoring.Warn {
				refs = append(refs, state.CellRef{Test: c.Test, Model: c.Model, Repeat: c.Repeat})
			}
		}
	}
	return refs
}

// verdictOf names one judge's judgment of one cell.
type verdictOf struct {
	cell  state.CellRef
	judge string
}

// judgmentsOf is what the judges held on the cells before the re-judge: a
// new verdict is one that is not this pointer.
func judgmentsOf(b *state.BatteryRun, refs []state.CellRef, judges []string) map[verdictOf]*state.Judgment {
	out := make(map[verdictOf]*state.Judgment, len(refs)*len(judges))
	for _, c := range cellsOf(b, refs) {
		for _, j := range judges {
			out[verdictOf{state.CellRef{Test: c.Test, Model: c.Model, Repeat: c.Repeat}, j}] = c.Judgment(j)
		}
	}
	return out
}

// cellsOf finds refs' cells in b.
func cellsOf(b *state.BatteryRun, refs []state.CellRef) []*state.Cell {
	tests, models := map[string]int{}, map[string]int{}
	for i, t := range b.Tests {
		tests[t.ID] = i
	}
	for i, m := range b.Models {
		models[m] = i
	}
	out := make([]*state.Cell, 0, len(refs))
	for _, r := range refs {
		if c := b.Cell(tests[r.Test], models[r.Model], r.Repeat); c != nil {
			out = append(out, c)
		}
	}
	return out
}

// inView is b with judge in view: the summary and the exit code count its
// verdicts. b is not changed; its rows are shared.
func inView(b *state.BatteryRun, judge string) *state.BatteryRun {
	v := *b
	v.Plan = b.Plan.WithInView(judge)
	v.Counts = state.TallyRows(b.Rows, judge)
	return &v
}

// rejudgeWatch follows a reopened run's re-judge for the plain output.
type rejudgeWatch struct {
	run    *runner.Run
	app    *app
	view   string
	refs   []state.CellRef               // the cells re-judged
	before map[verdictOf]*state.Judgment // their judgments before
	// interrupted: a signal cancelled the re-judge (the earlier verdicts
	// come back) and the command exits 130.
	interrupted atomic.Bool
}

// over reports whether b shows the re-judge ended: nothing in flight, and
// every verdict asked for is a new one, or the re-judge was cancelled.
// A reopened run's snapshots are all final, and the one-slot channel may
// still hold one taken before the re-judge began: "nothing in flight"
// alone could end the output before it started.
func (w *rejudgeWatch) over(b *state.BatteryRun) bool {
	if b.JudgeInFlight > 0 {
		return false
	}
	if w.interrupted.Load() {
		return true
	}
	idx := make(map[state.CellRef]*state.Cell, len(w.refs))
	for _, c := range cellsOf(b, w.refs) {
		idx[state.CellRef{Test: c.Test, Model: c.Model, Repeat: c.Repeat}] = c
	}
	for k, old := range w.before {
		j := idx[k.cell].Judgment(k.judge)
		if j == nil || j == old || j.Status != state.JudgmentDone {
			return false
		}
	}
	return true
}

// plain prints a line per new verdict on stderr, then the grid and the
// summary with the re-judging judge in view, and returns the last snapshot
// so seen. The first interrupt cancels the re-judge; a second one, or a
// re-judge still going stopGrace later, closes the run at once.
func (w *rejudgeWatch) plain(first *state.BatteryRun, opts ui.Options, stdout, stderr io.Writer) *state.BatteryRun {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	gate := &gatedWriter{w: stderr}
	fwd := make(chan *state.BatteryRun) // unbuffered: a send returns once the plain output took it
	go w.forward(first, fwd, gate)
	printed := make(chan *state.BatteryRun, 1)
	go func() { printed <- ui.RunPlain(fwd, stdout, gate, opts) }()
	var grace <-chan time.Time
	interrupts := (<-chan os.Signal)(sigs)
	for {
		select {
		case last := <-printed:
			return last
		case <-interrupts:
			if !w.interrupted.Swap(true) {
				fmt.Fprintln(stderr, "pitwall: cancelling the re-judge… the earlier verdicts stay (interrupt again to quit at once)")
				w.run.Stop()
				grace = time.After(stopGrace)
				continue
			}
			interrupts, grace = nil, nil
			w.app.fleet.Close()
			w.run.Close()
		case <-grace:
			interrupts, grace = nil, nil
			w.app.fleet.Close()
			w.run.Close()
		}
	}
}

// forward hands the run's snapshots, with the re-judging judge in view, to
// the plain output, and marks them not final until the re-judge is over
// (the plain output ends at the first final one). The run as it was is
// sent twice with the gate shut: the plain output prints every cell of the
// first snapshot it sees, and the second send returns only once it has.
func (w *rejudgeWatch) forward(first *state.BatteryRun, out chan<- *state.BatteryRun, gate *gatedWriter) {
	defer close(out)
	was := inView(first, w.view)
	was.Final = false
	out <- was
	out <- was
	gate.open.Store(true)
	for b := range w.run.Snapshots() {
		v := inView(b, w.view)
		over := w.over(b)
		v.Final = v.Final && over
		out <- v
		if over {
			return
		}
	}
}

// gatedWriter drops what is written until it is opened.
type gatedWriter struct {
	w    io.Writer
	open atomic.Bool
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	if !g.open.Load() {
		return len(p), nil
	}
	return g.w.Write(p)
}
