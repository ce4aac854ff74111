package runner

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"testing"
	"time"

	"pitwall/gpu"
	"pitwall/gpu/chat"
	"pitwall/gpu/simspec"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

// ledgerFirst is a fleet that, whenever a job reaches it and again just
// before the job's request goes out, reads the ledger and records every
// job for which no request row of its purpose, model and messages exists.
type ledgerFirst struct {
	Dispatcher
	led *ledger.Ledger
	id  string

	mu      sync.Mutex
	handed  map[string]int // jobs handed over so far, by requestKey
	jobs    int
	missing []string
}

func requestKey(purpose, model, input string) string {
	return purpose + "\x00" + model + "\x00" + input
}

func (f *ledgerFirst) SubmitAll(ctx context.Context, jobs []*gpu.Job) {
	for _, j := range jobs {
		k := requestKey(string(j.Purpose), j.Request.Model, chat.MessagesJSON(j.Request.Messages))
		f.mu.Lock()
		f.handed[k]++
		f.jobs++
		n := f.handed[k]
		f.mu.Unlock()
		f.check("handed to the fleet", k, n)
		send := j.BeforeSend
		j.BeforeSend = func(ctx context.Context) error {
			f.check("sent", k, n)
			if send != nil {
				return send(ctx)
			}
			return nil
		}
	}
	f.Dispatcher.SubmitAll(ctx, jobs)
}

// check records the nth job of key as missing from the ledger when it has
// fewer than n rows of that key (identical requests, a repeat's or a
// retry's, each have a row of their own).
func (f *ledgerFirst) check(when, key string, n int) {
	rows, err := f.led.Requests(f.id)
	have := 0
	for _, q := range rows {
		if requestKey(q.Purpose, q.Model, q.Input) == key {
			have++
		}
	}
	if err != nil || have < n {
		f.mu.Lock()
		f.missing = append(f.missing, fmt.Sprintf("%s with %d of its %d rows in the ledger (%v)", when, have, n, err))
		f.mu.Unlock()
	}
}

// TestEveryRequestIsInTheLedgerBeforeItIsSent holds README's promise:
// every inference request (first tries, retries) and every judge request
// has its ledger row committed before the fleet is handed it. It fails
// when submitInference's InsertRequests is moved after the fleet's
// SubmitAll, and when submitJudging sends its requests before written
// records them.
func TestEveryRequestIsInTheLedgerBeforeItIsSent(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, simFleet+`
[[scoring.judges]]
name = "j"
model = "judge"
server = "gpu0"
`)
	cfg.Run.Repeat, cfg.Run.Retries = 2, 3
	h := newHarness(t, cfg, true)
	// Every other request fails at first: retries are sent too.
	h.sims.Server("gpu0").SetFaults(specFaultsHalf500())
	f := &ledgerFirst{Dispatcher: h.fleet, led: h.led, id: ledger.NewRunID(time.Now()), handed: map[string]int{}}
	run, err := New(cfg, Options{RunID: f.id, Fleet: f, Ledger: h.led, Interval: 5 * time.Millisecond,
		Backoff: func(int) time.Duration { return time.Millisecond }})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b := run.Wait(ctx)
	if !b.Final {
		t.Fatalf("the run did not finish: %+v", b.Counts)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range f.missing {
		t.Errorf("a request was %s", m)
	}
	cells := b.Counts.Cells()
	if f.jobs <= cells+b.Counts.Judged {
		t.Errorf("%d jobs handed over for %d cells and %d verdicts: the test needs retries and judge requests", f.jobs, cells, b.Counts.Judged)
	}
}

// TestResumeTakesAnAnswerFromItsRequestWhenTheCellRowWasLost holds the
// promise that an answer is never paid for twice: a process that died after
// a request completed but before its cell row was written leaves the answer
// in the request's row, and resume takes it from there, sending nothing. It
// fails when Resume ignores the completed requests of cells with no
// finished row (engine.resume's lookup in done).
func TestResumeTakesAnAnswerFromItsRequestWhenTheCellRowWasLost(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, simFleet)
	h := newHarness(t, cfg, true)
	first := h.finish(t)
	h.run.Close()
	var lost *state.Cell
	for _, row := range first.Rows {
		for _, c := range row.Cells {
			if c.Status == state.Completed && lost == nil {
				lost = c
			}
		}
	}
	if lost == nil {
		t.Fatalf("no completed cell: %+v", first.Counts)
	}
	key := ledger.CellKey{Model: lost.Model, Test: lost.Test, Repeat: lost.Repeat}
	answer, ok := completedAnswer(t, h.led, h.run.ID(), key)
	if !ok {
		t.Fatalf("no completed request for %v", key)
	}

	db, err := sql.Open("sqlite", "file:"+cfg.DB+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	res, err := db.Exec(`DELETE FROM cells WHERE run_id = ? AND model = ? AND test = ? AND repeat = ?`,
		h.run.ID(), key.Model, key.Test, key.Repeat)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("deleted %d cell rows, want 1", n)
	}
	rowsBefore := len(inferenceRows(t, h.led, h.run.ID()))
	sentBefore := h.sims.Server("gpu0").Stats().Requests

	run, err := Resume(cfg, h.run.ID(), Again{Cancelled: true}, Options{Fleet: h.fleet, Ledger: h.led,
		Interval: 5 * time.Millisecond, Backoff: func(int) time.Duration { return time.Millisecond }})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := run.Wait(ctx)
	if !b.Final || b.Status != state.RunCompleted {
		t.Fatalf("the resumed run ended %s %+v", b.Status, b.Counts)
	}
	if sent := h.sims.Server("gpu0").Stats().Requests - sentBefore; sent != 0 {
		t.Errorf("the resumed run sent %d requests, want 0: the lost cell's answer is in the ledger", sent)
	}
	if rows := len(inferenceRows(t, h.led, run.ID())); rows != rowsBefore {
		t.Errorf("%d inference requests in the ledger after the resume, %d before: want none new", rows, rowsBefore)
	}
	cells, err := h.led.Cells(run.ID())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range cells {
		if c.Model == key.Model && c.Test == key.Test && c.Repeat == key.Repeat {
			found = true
			if c.Status != string(state.Completed) || c.Output != answer {
				t.Errorf("the lost cell came back %s %q, want completed %q (its request's answer)", c.Status, c.Output, answer)
			}
		}
	}
	if !found {
		t.Errorf("the resume wrote no row for the lost cell %v", key)
	}
}

func inferenceRows(t *testing.T, led *ledger.Ledger, id string) []ledger.Request {
	t.Helper()
	reqs, err := led.Requests(id)
	if err != nil {
		t.Fatal(err)
	}
	var out []ledger.Request
	for _, q := range reqs {
		if q.Purpose == ledger.PurposeInference {
			out = append(out, q)
		}
	}
	return out
}

// completedAnswer is the output of the cell's last completed inference
// request.
func completedAnswer(t *testing.T, led *ledger.Ledger, id string, k ledger.CellKey) (string, bool) {
	t.Helper()
	out, ok := "", false
	for _, q := range inferenceRows(t, led, id) {
		if q.Status == ledger.StatusCompleted && q.Cell() == k {
			out, ok = q.Output, true
		}
	}
	return out, ok
}

func specFaultsHalf500() simspec.Faults { return simspec.Faults{ErrorRate: 0.5} }
