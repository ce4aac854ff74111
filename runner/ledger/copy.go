package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
)

// CopyResult is what Copy did.
type CopyResult struct {
	Copied   []string // runs copied, oldest first
	Present  []string // runs the target already held, left as they are
	Running  []string // runs still running in the source, left for later
	Requests int      // request rows copied
}

// Copy copies every run of from that to does not hold (by id), with its
// requests, cells, verdicts and exit code, each run in one transaction of
// to's writer: a copy cut short leaves whole runs, and copying again adds
// only what is missing (a run already there is never touched). A run
// still running in from is left out: copy it once it has ended. Texts are
// stored in to once each, as any write stores them.
func Copy(from, to *Ledger) (CopyResult, error) {
	var res CopyResult
	if to.wr == nil {
		return res, to.wrap("copy into", ErrReadOnly)
	}
	runs, err := from.Runs(0)
	if err != nil {
		return res, err
	}
	for i := len(runs) - 1; i >= 0; i-- { // oldest first
		r := runs[i]
		if _, err := to.findExact(r.ID); err == nil {
			res.Present = append(res.Present, r.ID)
			continue
		} else if !errors.Is(err, ErrNotFound) {
			return res, err
		}
		if r.Status == RunRunning {
			res.Running = append(res.Running, r.ID)
			continue
		}
		n, err := copyRun(from, to, r)
		if err != nil {
			return res, err
		}
		res.Copied = append(res.Copied, r.ID)
		res.Requests += n
	}
	return res, nil
}

// findExact reads run id by its whole id, not a prefix.
func (l *Ledger) findExact(id string) (RunRow, error) {
	r, err := l.findRun(id)
	if err == nil && r.ID != id {
		return RunRow{}, l.wrap(fmt.Sprintf("run %q", id), ErrNotFound)
	}
	if errors.Is(err, ErrAmbiguous) {
		return RunRow{}, l.wrap(fmt.Sprintf("run %q", id), ErrNotFound)
	}
	return r, err
}

func copyRun(from, to *Ledger, r RunRow) (int, error) {
	reqs, err := from.Requests(r.ID)
	if err != nil {
		return 0, err
	}
	cells, err := from.Cells(r.ID)
	if err != nil {
		return 0, err
	}
	verdicts, err := from.Verdicts(r.ID)
	if err != nil {
		return 0, err
	}
	rs := make([]*Request, len(reqs))
	for i := range reqs {
		rs[i] = &reqs[i]
	}
	op := "copy run " + r.ID
	err = to.wr.do(funcOp(func(b *batch) error {
		if len(rs) > 0 {
			if err := (insertOp{rs}).apply(b); err != nil {
				return err
			}
		}
		for _, c := range cells {
			if err := (&cellOp{c}).apply(b); err != nil {
				return err
			}
		}
		for _, v := range verdicts {
			if err := (verdictOp{v}).apply(b); err != nil {
				return err
			}
		}
		// The run's row last: a run is in the target whole or not at all.
		if err := insertRun(b, r); err != nil {
			return to.wrap(op, err)
		}
		if _, err := b.tx.Exec(`UPDATE runs SET exit_code = ?, generation = ? WHERE id = ?`,
			exitArg(r.ExitCode), r.Generation, r.ID); err != nil {
			return to.wrap(op, err)
		}
		return nil
	}))
	return len(rs), err
}

func exitArg(code *int) any {
	if code == nil {
		return nil
	}
	return *code
}

// insertRun writes a run's row as given (CreateRun's insert).
func insertRun(b *batch, r RunRow) error {
	models, _ := json.Marshal(r.Models) // a []string always marshals
	tests, _ := json.Marshal(r.Tests)
	_, err := b.tx.Exec(`INSERT INTO runs (`+runColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		r.ID, r.Name, r.Status, r.ScoringMode, r.ConfigJSON, r.ScoringJSON,
		string(models), string(tests), r.Repeat, msOrNull(r.StartedAt), msOrNull(r.EndedAt), r.Message,
		r.Owner.PID, r.Owner.Host, msOrNull(r.Heartbeat), r.Owner.Start, r.Owner.User)
	return err
}
