package gpu

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"pitwall/gpu/chat"

	openai "github.com/sashabaranov/go-openai"
)

// The Batch API: a provider runs many chat requests within a completion
// window, at a lower price, and answers them in files. A Client speaks it
// through the same go-openai client and transport as its chat requests, so
// its errors are classified and scrubbed the same way. This file holds the
// calls; batch_lines.go the JSONL going in and out.

// BatchStatus is where a batch stands, as the provider names it.
type BatchStatus string

const (
	BatchValidating BatchStatus = "validating"
	BatchInProgress BatchStatus = "in_progress"
	BatchFinalizing BatchStatus = "finalizing"
	BatchCompleted  BatchStatus = "completed"
	BatchFailed     BatchStatus = "failed"
	BatchExpired    BatchStatus = "expired"
	BatchCancelling BatchStatus = "cancelling"
	BatchCancelled  BatchStatus = "cancelled"
)

// Ended reports whether the batch will change no more: completed, or
// failed, expired or cancelled (each of which may have answered some of its
// requests before it ended).
func (s BatchStatus) Ended() bool {
	switch s {
	case BatchCompleted, BatchFailed, BatchExpired, BatchCancelled:
		return true
	}
	return false
}

// DefaultBatchWindow is the completion window asked for: the only one
// OpenAI offers.
const DefaultBatchWindow = "24h"

// Batch is a provider's batch as last seen.
type Batch struct {
	ID           string
	Status       BatchStatus
	InputFileID  string
	OutputFileID string // "" until there is one
	ErrorFileID  string
	Window       string
	Total        int // requests in it
	Completed    int
	Failed       int
	Metadata     map[string]string
	CreatedAt    time.Time
	// Errors says why a failed batch failed (its input refused, say),
	// credentials masked.
	Errors []string
}

// BatchLine is one request of a batch. CustomID names it in the results; it
// must be unique within the batch.
type BatchLine struct {
	CustomID string
	Request  chat.Request
}

// BatchResult is the answer to one request of a batch: a result, or the
// request's own failure (Err, a *chat.Error classed by the status the
// provider gave it).
type BatchResult struct {
	CustomID string
	Result   chat.Result
	Err      error
}

// BatchPoll paces WaitBatch: the first look after Min, each next one twice
// as late up to Max while nothing changes, back to Min when the status
// moves. Failures is how many looks in a row may fail transiently before
// WaitBatch gives up (default 5).
type BatchPoll struct {
	Min, Max time.Duration
	Failures int
}

// BatchClient returns the client of server when its kind may offer a Batch
// API: a hosted API (openai), the simulator, or a server whose kind is not
// known yet. Local servers (LM Studio, Ollama, llama.cpp, vLLM) have none.
// Whether it really does is BatchesOffered's to say.
func (f *Fleet) BatchClient(server string) (*Client, bool) {
	s := f.byName[server] // fixed by NewFleet
	if s == nil {
		return nil, false
	}
	f.mu.Lock()
	kind := s.kind
	f.mu.Unlock()
	switch kind {
	case chat.KindOpenAI, chat.KindSim, "":
		return s.client, true
	}
	return nil, false
}

// BatchesOffered asks whether the server has a Batch API (GET /v1/batches):
// a 404, 405 or 501 says it has none; any other failure is an error.
func (c *Client) BatchesOffered(ctx context.Context) (bool, error) {
	limit := 1
	cl := c.call()
	_, err := c.api.ListBatch(withCall(ctx, cl), nil, &limit)
	if err == nil {
		return true, nil
	}
	e := c.fail(ctx, chat.Request{}, err, cl)
	switch e.Status {
	case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusNotImplemented:
		return false, nil
	}
	return false, e
}

// CreateBatch uploads lines as a JSONL file (purpose batch) and creates a
// batch of chat completions from it, with the given completion window (""
// = DefaultBatchWindow) and metadata. Nothing runs before the batch exists:
// an error after the upload leaves only an unused file.
func (c *Client) CreateBatch(ctx context.Context, lines []BatchLine, window string, meta map[string]string) (Batch, error) {
	data, err := encodeBatch(lines)
	if err != nil {
		return Batch{}, c.refuse(chat.Request{}, err)
	}
	if window == "" {
		window = DefaultBatchWindow
	}
	cl := c.call()
	f, err := c.api.CreateFileBytes(withCall(ctx, cl), openai.FileBytesRequest{
		Name: "pitwall-batch.jsonl", Bytes: data, Purpose: openai.PurposeBatch})
	if err != nil {
		return Batch{}, c.batchFail(ctx, "uploading the batch input", err, cl)
	}
	md := make(map[string]any, len(meta))
	for k, v := range meta {
		md[k] = v
	}
	cl = c.call()
	b, err := c.api.CreateBatch(withCall(ctx, cl), openai.CreateBatchRequest{InputFileID: f.ID,
		Endpoint: openai.BatchEndpointChatCompletions, CompletionWindow: window, Metadata: md})
	if err != nil {
		return Batch{}, c.batchFail(ctx, "creating the batch of file "+f.ID, err, cl)
	}
	return c.fromOpenAI(b.Batch), nil
}

// Batch retrieves a batch by id.
func (c *Client) Batch(ctx context.Context, id string) (Batch, error) {
	cl := c.call()
	b, err := c.api.RetrieveBatch(withCall(ctx, cl), id)
	if err != nil {
		return Batch{}, c.batchFail(ctx, "batch "+id, err, cl)
	}
	return c.fromOpenAI(b.Batch), nil
}

// CancelBatch asks the provider to cancel a batch; it answers cancelling,
// and cancelled once the requests running have ended.
func (c *Client) CancelBatch(ctx context.Context, id string) (Batch, error) {
	cl := c.call()
	b, err := c.api.CancelBatch(withCall(ctx, cl), id)
	if err != nil {
		return Batch{}, c.batchFail(ctx, "cancelling batch "+id, err, cl)
	}
	return c.fromOpenAI(b.Batch), nil
}

// maxBatchPages bounds FindBatches: a hundred batches a page.
const maxBatchPages = 20

// FindBatches lists the batches created since the given time whose
// metadata holds every pair of meta, newest first. The provider lists an
// organisation's batches newest first, so the listing stops at the first
// one older than since (or after maxBatchPages pages).
func (c *Client) FindBatches(ctx context.Context, meta map[string]string, since time.Time) ([]Batch, error) {
	limit := 100
	var after *string
	var out []Batch
	for range maxBatchPages {
		cl := c.call()
		page, err := c.api.ListBatch(withCall(ctx, cl), after, &limit)
		if err != nil {
			return out, c.batchFail(ctx, "listing batches", err, cl)
		}
		for _, ob := range page.Data {
			b := c.fromOpenAI(ob)
			if b.CreatedAt.Before(since) {
				return out, nil
			}
			if metaHolds(b.Metadata, meta) {
				out = append(out, b)
			}
		}
		if !page.HasMore || len(page.Data) == 0 {
			return out, nil
		}
		last := page.Data[len(page.Data)-1].ID
		after = &last
	}
	return out, nil
}

func metaHolds(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// WaitBatch polls a batch until it has ended, or ctx ends, and returns it
// as last seen. seen, when set, is called with the batch each time its
// status moves (on the caller's goroutine). Transient failures to look
// (timeouts, 429s, 5xx) are retried after the poll's wait, or a 429's
// Retry-After when longer; poll.Failures of them in a row, or any other
// failure, end the wait with that error. The batch itself goes on.
func (c *Client) WaitBatch(ctx context.Context, id string, poll BatchPoll, seen func(Batch)) (Batch, error) {
	poll = poll.withDefaults()
	wait := poll.Min
	var last Batch
	failures := 0
	for {
		b, err := c.Batch(ctx, id)
		switch {
		case err != nil && ctx.Err() != nil:
			return last, err
		case err != nil:
			failures++
			if !chat.ClassOf(err).Transient() || failures >= poll.Failures {
				return last, err
			}
			var ce *chat.Error
			if errors.As(err, &ce) && ce.RetryAfter > wait {
				wait = ce.RetryAfter
			}
		default:
			failures = 0
			if b.Status != last.Status {
				if seen != nil {
					seen(b)
				}
				wait = poll.Min
			}
			last = b
			if b.Status.Ended() {
				return b, nil
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			cl := &callInfo{}
			return last, c.fail(ctx, chat.Request{}, ctx.Err(), cl)
		case <-t.C:
		}
		wait = min(2*wait, poll.Max)
	}
}

func (p BatchPoll) withDefaults() BatchPoll {
	if p.Min <= 0 {
		p.Min = time.Second
	}
	if p.Max < p.Min {
		p.Max = max(p.Min, 30*time.Second)
	}
	if p.Failures <= 0 {
		p.Failures = 5
	}
	return p
}

// BatchResults downloads an ended batch's output and error files and
// returns the answer to each request they hold, output first. A request
// the batch never ran (an error line with code batch_expired or
// batch_cancelled) is left out, as is one with no line at all: the caller
// finds it missing and sends it again.
func (c *Client) BatchResults(ctx context.Context, b Batch) ([]BatchResult, error) {
	var out []BatchResult
	for _, id := range []string{b.OutputFileID, b.ErrorFileID} {
		if id == "" {
			continue
		}
		err := c.readFile(ctx, id, func(n int, line []byte) error {
			r, ok, err := c.decodeResult(line)
			if err != nil {
				return fmt.Errorf("line %d: %w", n, err)
			}
			if ok {
				out = append(out, r)
			}
			return nil
		})
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// BatchInput returns the custom ids of a batch's input file, in order:
// what a batch found again (after a restart) is answering.
func (c *Client) BatchInput(ctx context.Context, b Batch) ([]string, error) {
	var ids []string
	err := c.readFile(ctx, b.InputFileID, func(n int, line []byte) error {
		id, err := inputID(line)
		if err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		ids = append(ids, id)
		return nil
	})
	return ids, err
}

// maxBatchFile caps one downloaded file: OpenAI takes input files up to
// 200 MB, and the answers to them are about as large.
const maxBatchFile = 1 << 30

// readFile downloads a file and hands each non-blank line to fn, numbered
// from 1.
func (c *Client) readFile(ctx context.Context, id string, fn func(int, []byte) error) error {
	cl := &callInfo{maxReply: maxBatchFile}
	raw, err := c.api.GetFileContent(withCall(ctx, cl), id)
	if err != nil {
		return c.batchFail(ctx, "downloading file "+id, err, cl)
	}
	defer raw.Close()
	if err := eachLine(raw, c.cfg.MaxReplyBytes, fn); err != nil {
		return c.batchFail(ctx, "reading file "+id, err, cl)
	}
	return nil
}

// call is the callInfo of one Batch API request.
func (c *Client) call() *callInfo { return &callInfo{maxReply: c.cfg.MaxReplyBytes} }

// batchFail classifies a failed Batch API call and says what it was doing.
func (c *Client) batchFail(ctx context.Context, doing string, err error, cl *callInfo) *chat.Error {
	e := c.fail(ctx, chat.Request{}, err, cl)
	e.Message = doing + ": " + e.Message
	return e
}

func (c *Client) fromOpenAI(ob openai.Batch) Batch {
	b := Batch{ID: ob.ID, Status: BatchStatus(ob.Status), InputFileID: ob.InputFileID, Window: ob.CompletionWindow,
		Total: ob.RequestCounts.Total, Completed: ob.RequestCounts.Completed, Failed: ob.RequestCounts.Failed,
		CreatedAt: time.Unix(int64(ob.CreatedAt), 0)}
	if ob.OutputFileID != nil {
		b.OutputFileID = *ob.OutputFileID
	}
	if ob.ErrorFileID != nil {
		b.ErrorFileID = *ob.ErrorFileID
	}
	if len(ob.Metadata) > 0 {
		b.Metadata = make(map[string]string, len(ob.Metadata))
		for _, k := range slices.Sorted(maps.Keys(ob.Metadata)) {
			if s, ok := ob.Metadata[k].(string); ok {
				b.Metadata[k] = s
			}
		}
	}
	if ob.Errors != nil {
		for _, d := range ob.Errors.Data {
			msg := strings.TrimSpace(d.Code + ": " + d.Message)
			if d.Line != nil {
				msg = fmt.Sprintf("line %d: %s", *d.Line, msg)
			}
			b.Errors = append(b.Errors, c.scrub(msg))
		}
	}
	return b
}
