package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"pitwall/gpu/simspec"
)

// A batch's states, as OpenAI names them.
const (
	statusValidating = "validating"
	statusInProgress = "in_progress"
	statusFinalizing = "finalizing"
	statusCompleted  = "completed"
	statusFailed     = "failed"
	statusExpired    = "expired"
	statusCancelling = "cancelling"
	statusCancelled  = "cancelled"
)

// The simulated time a batch spends on its bookkeeping, scaled like every
// other delay; its requests take the time the server gives them.
const (
	batchValidateTime = 5 * time.Second
	batchFinalizeTime = 5 * time.Second
	batchWindowTime   = 24 * time.Hour
)

// simBatch is one batch. The store's mutex guards its fields; input and
// cancel are set at creation and only read after.
type simBatch struct {
	ID           string
	InputFileID  string
	OutputFileID string
	ErrorFileID  string
	Endpoint     string
	Window       string
	Status       string
	Metadata     map[string]string
	Errors       []batchErr
	Total        int
	Completed    int
	Failed       int

	Created, InProgress, Expires, Finalizing, Done, Cancelling time.Time

	number int    // 1 for the server's first batch: the Batch* faults count these
	input  []byte // the input file's content
	cancel chan struct{}
}

type batchErr struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Param   any    `json:"param"`
	Line    any    `json:"line"`
}

// batchObject is a batch as the API shows it: times in Unix seconds, null
// until they happen.
type batchObject struct {
	ID               string            `json:"id"`
	Object           string            `json:"object"`
	Endpoint         string            `json:"endpoint"`
	Errors           any               `json:"errors"`
	InputFileID      string            `json:"input_file_id"`
	CompletionWindow string            `json:"completion_window"`
	Status           string            `json:"status"`
	OutputFileID     *string           `json:"output_file_id"`
	ErrorFileID      *string           `json:"error_file_id"`
	CreatedAt        int64             `json:"created_at"`
	InProgressAt     *int64            `json:"in_progress_at"`
	ExpiresAt        *int64            `json:"expires_at"`
	FinalizingAt     *int64            `json:"finalizing_at"`
	CompletedAt      *int64            `json:"completed_at"`
	FailedAt         *int64            `json:"failed_at"`
	ExpiredAt        *int64            `json:"expired_at"`
	CancellingAt     *int64            `json:"cancelling_at"`
	CancelledAt      *int64            `json:"cancelled_at"`
	RequestCounts    map[string]int    `json:"request_counts"`
	Metadata         map[string]string `json:"metadata"`
}

func unixOrNull(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	u := t.Unix()
	return &u
}

func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// wire renders the batch; the store's mutex is held.
func (b *simBatch) wire() batchObject {
	o := batchObject{ID: b.ID, Object: "batch", Endpoint: b.Endpoint, Errors: jsonNull, InputFileID: b.InputFileID,
		CompletionWindow: b.Window, Status: b.Status, OutputFileID: orNull(b.OutputFileID), ErrorFileID: orNull(b.ErrorFileID),
		CreatedAt: b.Created.Unix(), InProgressAt: unixOrNull(b.InProgress), ExpiresAt: unixOrNull(b.Expires),
		FinalizingAt: unixOrNull(b.Finalizing), CancellingAt: unixOrNull(b.Cancelling),
		RequestCounts: map[string]int{"total": b.Total, "completed": b.Completed, "failed": b.Failed},
		Metadata:      b.Metadata}
	switch b.Status {
	case statusCompleted:
		o.CompletedAt = unixOrNull(b.Done)
	case statusFailed:
		o.FailedAt = unixOrNull(b.Done)
	case statusExpired:
		o.ExpiredAt = unixOrNull(b.Done)
	case statusCancelled:
		o.CancelledAt = unixOrNull(b.Done)
	}
	if len(b.Errors) > 0 {
		o.Errors = map[string]any{"object": "list", "data": b.Errors}
	}
	return o
}

// startBatch runs b on a goroutine of the server's; false once the server
// is closed. It is called from a handler, whose own count keeps the
// server's wait group above zero.
func (s *Server) startBatch(st *batchStore, b *simBatch) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.wg.Add(1)
	go s.runBatch(st, b)
	return true
}

func (s *Server) currentFaults() simspec.Faults {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faults
}

// runBatch takes a batch from validating to its end: it checks the input,
// runs every request through the chat handler (as many at once as the
// server has slots), and writes the output and error files. Close leaves
// it where it stands; a cancel ends it cancelled, an expiry expired, each
// with the answers it has.
func (s *Server) runBatch(st *batchStore, b *simBatch) {
	defer s.wg.Done()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		select {
		case <-s.closeCh:
		case <-b.cancel:
		case <-ctx.Done():
		}
		stop()
	}()
	if s.clock.sleep(ctx, batchValidateTime) != nil {
		s.endBatch(st, b, nil, nil)
		return
	}
	lines, bad := parseBatchInput(b.input, b.Endpoint)
	f := s.currentFaults()
	if b.number <= f.BatchFail {
		bad = []batchErr{{Code: "simulated_failure", Message: "The batch failed validation (simulated: faults.batch_fail).", Param: jsonNull, Line: jsonNull}}
	}
	if len(bad) > 0 {
		st.mu.Lock()
		b.Errors = bad
		if b.Status == statusValidating {
			b.Status, b.Done = statusFailed, time.Now()
		}
		st.mu.Unlock()
		return
	}
	expire := b.number > f.BatchFail && b.number <= f.BatchFail+f.BatchExpire

	st.mu.Lock()
	if b.Status == statusValidating {
		b.Status, b.InProgress, b.Total = statusInProgress, time.Now(), len(lines)
		b.Expires = b.Created.Add(batchWindowTime)
		if w := s.clock.wall(batchWindowTime); w > 0 {
			b.Expires = b.Created.Add(w)
		}
	}
	st.mu.Unlock()
	// run ends with the completion window (unless time is instant).
	run := ctx
	if w := s.clock.wall(batchWindowTime); w > 0 {
		var cancel context.CancelFunc
		run, cancel = context.WithDeadline(ctx, b.Created.Add(w))
		defer cancel()
	}
	for s.currentFaults().BatchHold && run.Err() == nil {
		// A test lifts the hold with SetFaults, which signals nothing:
		// look again shortly.
		t := time.NewTimer(2 * time.Millisecond)
		select {
		case <-run.Done():
		case <-t.C:
		}
		t.Stop()
	}
	todo := lines
	if expire {
		todo = lines[:len(lines)/2]
	}
	results := s.runLines(run, st, b, todo)
	if expire || run.Err() != nil && ctx.Err() == nil {
		s.endBatch(st, b, lines, results, withStatus(statusExpired))
		return
	}
	if ctx.Err() == nil {
		st.mu.Lock()
		if b.Status == statusInProgress {
			b.Status, b.Finalizing = statusFinalizing, time.Now()
		}
		st.mu.Unlock()
		_ = s.clock.sleep(ctx, batchFinalizeTime)
	}
	s.endBatch(st, b, lines, results)
}

type endOption func(*string)

func withStatus(status string) endOption { return func(s *string) { *s = status } }

// endBatch writes what a batch answered and gives it its end: completed,
// or the status asked for, or cancelled when it was cancelled meanwhile.
// When the server closed under it, it is left as it stands.
func (s *Server) endBatch(st *batchStore, b *simBatch, lines []batchLine, results []lineResult, opts ...endOption) {
	select {
	case <-s.closeCh:
		return
	default:
	}
	status := statusCompleted
	for _, o := range opts {
		o(&status)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if b.Status == statusCancelling {
		status = statusCancelled
	}
	notRun := batchErr{Code: "batch_expired", Message: "This request could not be executed before the completion window expired."}
	if status == statusCancelled {
		notRun = batchErr{Code: "batch_cancelled", Message: "This request was not executed because the batch was cancelled."}
	}
	var out, errs bytes.Buffer
	b.Completed, b.Failed = 0, 0
	for i, l := range lines {
		var r lineResult
		if i < len(results) {
			r = results[i]
		}
		line := resultOut{ID: s.newBatchID(st, "batch_req_"), CustomID: l.CustomID, Response: jsonNull, Error: jsonNull}
		switch {
		case !r.ran:
			line.Error = map[string]string{"code": notRun.Code, "message": notRun.Message}
		default:
			line.Response = lineResponse{StatusCode: r.status, RequestID: s.newBatchID(st, "req_"), Body: r.body}
		}
		enc, err := json.Marshal(line)
		if err != nil {
			continue // every part is JSON the server made
		}
		if r.ran && r.status/100 == 2 {
			out.Write(enc)
			out.WriteByte('\n')
			b.Completed++
		} else {
			errs.Write(enc)
			errs.WriteByte('\n')
			b.Failed++
		}
	}
	now := time.Now()
	for _, f := range []struct {
		buf  *bytes.Buffer
		id   *string
		name string
	}{{&out, &b.OutputFileID, "output"}, {&errs, &b.ErrorFileID, "error"}} {
		if f.buf.Len() == 0 {
			continue
		}
		sf := &simFile{ID: s.newBatchID(st, "file-"), Name: fmt.Sprintf("%s_%s.jsonl", b.ID, f.name),
			Purpose: "batch_output", Data: bytes.Clone(f.buf.Bytes()), Created: now.Unix()}
		st.files[sf.ID] = sf
		*f.id = sf.ID
	}
	b.Status, b.Done = status, now
}

type resultOut struct {
	ID       string `json:"id"`
	CustomID string `json:"custom_id"`
	Response any    `json:"response"`
	Error    any    `json:"error"`
}

type lineResponse struct {
	StatusCode int             `json:"status_code"`
	RequestID  string          `json:"request_id"`
	Body       json.RawMessage `json:"body"`
}
