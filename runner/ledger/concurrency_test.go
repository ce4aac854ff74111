package ledger

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// lifecycle writes one request from queued to completed, with its cell.
func lifecycle(l *Ledger, run string, worker, i int) error {
	r := Request{RunID: run, Purpose: PurposeInference, Model: fmt.Sprintf("m%d", worker), Test: fmt.Sprintf("t%d", i)}
	if _, err := l.InsertRequest(&r); err != nil {
		return err
	}
	if err := l.StartRequest(r.ID, "gpu0", time.Now()); err != nil {
		return err
	}
	r.Status, r.Output = StatusCompleted, outputFor(r.ID, 16)
	if err := l.FinishRequest(&r); err != nil {
		return err
	}
	return l.PutCell(CellRow{RunID: run, Model: r.Model, Test: r.Test, Status: "completed", Output: r.Output})
}

func TestConcurrentWritersAreSerialisedWithoutBusyErrors(t *testing.T) {
	t.Parallel()
	const workers, each = 16, 25
	tests := []struct {
		name     string
		ledgers  int // one process's ledger, or two opened on one file as two processes would
		wantRows int
	}{
		{"goroutines sharing one ledger", 1, workers * each},
		{"two ledgers on one file", 2, workers * each},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := testPath(t)
			var ls []*Ledger
			for range tt.ledgers {
				l, err := Open(path)
				if err != nil {
					t.Fatal(err)
				}
				defer l.Close()
				ls = append(ls, l)
			}
			var wg sync.WaitGroup
			errs := make(chan error, workers*each)
			for w := range workers {
				wg.Go(func() {
					l := ls[w%len(ls)]
					for i := range each {
						if err := lifecycle(l, "r1", w, i); err != nil {
							errs <- fmt.Errorf("worker %d, request %d: %w", w, i, err)
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			reqs, err := ls[0].Requests("r1")
			if err != nil {
				t.Fatal(err)
			}
			if len(reqs) != tt.wantRows {
				t.Fatalf("%d requests, want %d", len(reqs), tt.wantRows)
			}
			seen := map[int64]bool{}
			for _, r := range reqs {
				if seen[r.ID] {
					t.Errorf("id %d twice", r.ID)
				}
				seen[r.ID] = true
				if r.Status != StatusCompleted || r.Output != outputFor(r.ID, 16) {
					t.Errorf("request %d: status %q, output of %d bytes", r.ID, r.Status, len(r.Output))
				}
			}
			cells, err := ls[0].Cells("r1")
			if err != nil {
				t.Fatal(err)
			}
			if len(cells) != tt.wantRows {
				t.Errorf("%d cells, want %d", len(cells), tt.wantRows)
			}
		})
	}
}

func TestReadOnlyReaderSeesCommittedRowsWhileAWriterWrites(t *testing.T) {
	t.Parallel()
	const total = 200
	path := testPath(t)
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.CreateRun(RunRow{ID: "r1"}); err != nil {
		t.Fatal(err)
	}
	r, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	readerReady := make(chan struct{})
	writeErr := make(chan error, 1)
	go func() {
		<-readerReady
		for i := range total {
			if err := lifecycle(w, "r1", 0, i); err != nil {
				writeErr <- err
				return
			}
		}
		writeErr <- nil
	}()

	// Read until every request is seen completed: the reader must never fail
	// with SQLITE_BUSY, never see fewer rows than before, and never see a
	// completed row without its output (a torn update).
	seen, reads, writerDone := 0, 0, false
	for {
		reqs, err := r.Requests("r1")
		if err != nil {
			t.Fatalf("read %d: %v", reads, err)
		}
		if reads == 0 {
			close(readerReady)
		}
		reads++
		if len(reqs) < seen {
			t.Fatalf("read %d saw %d rows after %d", reads, len(reqs), seen)
		}
		seen = len(reqs)
		completed := 0
		for _, q := range reqs {
			if q.Status != StatusCompleted {
				continue
			}
			completed++
			if q.Output != outputFor(q.ID, 16) {
				t.Fatalf("completed request %d read with output %q", q.ID, q.Output)
			}
		}
		if completed == total {
			break
		}
		if writerDone {
			t.Fatalf("after the writer finished, the reader sees %d of %d completed", completed, total)
		}
		select {
		case err := <-writeErr:
			if err != nil {
				t.Fatalf("writer: %v", err)
			}
			writerDone = true // one more read must see everything
		default:
		}
	}
	if !writerDone {
		if err := <-writeErr; err != nil {
			t.Fatalf("writer: %v", err)
		}
	}
	cells, err := r.Cells("r1")
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != total {
		t.Errorf("reader sees %d cells, want %d", len(cells), total)
	}
}
