package ledger

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

// inOneBatch queues fs and commits them as one batch: the writer's
// goroutine cannot commit any of them alone while the lock is held.
func inOneBatch(l *Ledger, fs ...func()) {
	w := l.wr
	// The queued calls take w.mu themselves; hold the writer busy instead,
	// so that none of them commits before the last is queued.
	w.mu.Lock()
	for w.busy {
		w.cond.Wait()
	}
	w.busy = true
	w.mu.Unlock()
	for _, f := range fs {
		f()
	}
	w.mu.Lock()
	w.busy = false
	w.urgent = true
	w.await(w.seq)
	w.mu.Unlock()
}

// TestAStartFoldedIntoItsFinishLeavesTheRowAsTwoWritesWould writes the
// same lives twice, each start and finish in a commit of its own and then
// all in one batch, where foldStarts joins them, and compares whole rows.
func TestAStartFoldedIntoItsFinishLeavesTheRowAsTwoWritesWould(t *testing.T) {
	t.Parallel()
	at := ms("2026-11-27T10:00:00.5Z")
	end := func(r *Request, server string, started time.Time) *Request {
		e := *r
		e.Status, e.Output, e.PromptTokens, e.CompletionTokens = StatusCompleted, "an answer", 40, 30
		e.Latency, e.EndedAt, e.Server, e.StartedAt = 900*time.Millisecond, at.Add(time.Second), server, started
		return &e
	}
	type step struct {
		start  string // a start on this server
		finish func(r *Request) *Request
		cancel bool // a write off the hot path that closes the run's open requests
	}
	cases := []struct {
		name   string
		cancel bool // CancelOpen before the steps, in a commit of its own
		refuse bool // the finish fails (a trigger refuses it), so the batch is retried write by write
		closed bool // a start comes after its request was closed: folded, its Ack hears nil
		steps  []step
	}{
		{name: "the finish names no server or start", steps: []step{
			{start: "gpu0"}, {finish: func(r *Request) *Request { return end(r, "", time.Time{}) }}}},
		{name: "the finish names its own", steps: []step{
			{start: "gpu0"}, {finish: func(r *Request) *Request { return end(r, "gpu1", at.Add(-time.Second)) }}}},
		{name: "two starts before the finish", steps: []step{
			{start: "gpu0"}, {start: "gpu1"}, {finish: func(r *Request) *Request { return end(r, "", time.Time{}) }}}},
		{name: "a finish, a start, a finish", closed: true, steps: []step{
			{finish: func(r *Request) *Request { return end(r, "", time.Time{}) }}, {start: "gpu0"},
			{finish: func(r *Request) *Request { return end(r, "", time.Time{}) }}}},
		{name: "a request cancelled before its start", cancel: true, closed: true, steps: []step{
			{start: "gpu0"}, {finish: func(r *Request) *Request { return end(r, "", time.Time{}) }}}},
		{name: "a write that closes the request between them", steps: []step{
			{start: "gpu0"}, {cancel: true}, {finish: func(r *Request) *Request { return end(r, "", time.Time{}) }}}},
		{name: "a finish that fails by itself", refuse: true, steps: []step{
			{start: "gpu0"}, {finish: func(r *Request) *Request { return end(r, "", time.Time{}) }}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.refuse && testPG != nil {
				t.Skip("the refusing trigger is written for SQLite")
			}
			var rows [2]Request
			var heard [2][]bool // whether each write's Ack heard nil
			for pass, batched := range []bool{false, true} {
				l := openTest(t)
				r := &Request{RunID: "r", Purpose: PurposeInference, Model: "m", Test: "t", QueuedAt: at.Add(-2 * time.Second)}
				if err := l.InsertRequests([]*Request{r}); err != nil {
					t.Fatal(err)
				}
				if tc.cancel {
					if _, err := l.CancelOpen("r", at.Add(-time.Second)); err != nil {
						t.Fatal(err)
					}
				}
				if tc.refuse {
					if _, err := l.w.Exec(`CREATE TRIGGER refuse_completed BEFORE UPDATE ON requests
						WHEN NEW.status = 'completed' BEGIN SELECT RAISE(ABORT, 'refused'); END`); err != nil {
						t.Fatal(err)
					}
				}
				var a acks
				var calls []func()
				for _, s := range tc.steps {
					switch {
					case s.finish != nil:
						calls = append(calls, func() { l.QueueFinish(s.finish(r), a.ack) })
					case s.cancel:
						cancel := runOp{"r", func(b *batch) error {
							_, err := b.tx.Exec(`UPDATE requests SET status = 'canceled', ended_ms = ?
								WHERE run_id = ? AND status IN ('queued', 'submitted', 'running')`, msOrNull(at), "r")
							return err
						}}
						calls = append(calls, func() { l.wr.later(cancel, "", a.ack) })
					default:
						calls = append(calls, func() { l.QueueStart(r.ID, s.start, at, a.ack) })
					}
				}
				if batched {
					inOneBatch(l, calls...)
				} else {
					for _, f := range calls {
						f()
						if err := l.Flush(); err != nil && !errors.Is(err, ErrNotOpen) && !tc.refuse {
							t.Fatal(err)
						}
					}
				}
				_ = l.Flush()
				got, err := l.Requests("r")
				if err != nil || len(got) != 1 {
					t.Fatalf("Requests: %d rows, %v", len(got), err)
				}
				rows[pass] = got[0]
				if len(a.errs) != len(tc.steps) {
					t.Errorf("%d acks for %d writes", len(a.errs), len(tc.steps))
				}
				for _, err := range a.errs {
					heard[pass] = append(heard[pass], err == nil)
				}
			}
			// The one documented difference: a folded start on a request
			// closed before it hears nil, not ErrNotOpen.
			if !tc.closed && !reflect.DeepEqual(heard[0], heard[1]) {
				t.Errorf("acks heard nil: %v a commit each, %v in one batch", heard[0], heard[1])
			}
			if !reflect.DeepEqual(rows[0], rows[1]) {
				t.Errorf("a commit each:\n%+v\none batch:\n%+v", rows[0], rows[1])
			}
		})
	}
}

func TestFoldStartsJoinsAStartToTheNextFinishOfItsRequest(t *testing.T) {
	at := time.Unix(100, 0)
	qs := []queued{
		{op: startOp{id: 1, server: "a", at: at}},
		{op: startOp{id: 2, server: "b", at: at}},
		{op: finishOp{r: Request{ID: 1, Status: StatusCompleted}}},
		{op: startOp{id: 3, server: "c", at: at}}, // no finish in the batch
		{op: finishOp{r: Request{ID: 1, Status: StatusCompleted}}},
	}
	foldStarts(qs)
	if s := qs[0].op.(startOp); !s.folded {
		t.Error("the start of 1 was not folded into its finish")
	}
	if f := qs[2].op.(finishOp); f.start == nil || f.start.server != "a" {
		t.Errorf("the first finish of 1 carries start %+v, want the start on a", f.start)
	}
	if f := qs[4].op.(finishOp); f.start != nil {
		t.Errorf("the second finish of 1 carries start %+v, want none", f.start)
	}
	for _, i := range []int{1, 3} {
		if s := qs[i].op.(startOp); s.folded {
			t.Errorf("the start of %d, whose request does not finish in the batch, was folded", s.id)
		}
	}
}
