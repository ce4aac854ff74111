package batchapi

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"pitwall/gpu"
	"pitwall/gpu/chat"

	openai "github.com/sashabaranov/go-openai"
)

// This file holds the calls; lines.go the JSONL going in and out.

// Client speaks the Batch API to one server, through the plumbing of its
// gpu.Client: the same go-openai client and transport as its chat
// requests, so replies are capped and errors classified and scrubbed the
// same way. It is safe for concurrent use.
type Client struct {
	c *gpu.Client
}

// New returns the Batch API client of the server c talks to.
func New(c *gpu.Client) *Client { return &Client{c: c} }

// Server returns the name of the server the client talks to.
func (c *Client) Server() string { return c.c.Server() }

// BatchesOffered asks whether the server has a Batch API (GET /v1/batches):
// a 404, 405 or 501 says it has none; any other failure is an error.
func (c *Client) BatchesOffered(ctx context.Context) (bool, error) {
	limit := 1
	k := c.c.Call(ctx, 0)
	_, err := c.c.OpenAI().ListBatch(k.Context(), nil, &limit)
	if err == nil {
		return true, nil
	}
	e := k.Fail(err)
	switch e.Status {
	case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusNotImplemented:
		return false, nil
	}
	return false, e
}

// CreateBatch uploads lines as a JSONL file (purpose batch) and creates a
// batch of chat completions from it, with the given completion window (""
// = gpu.DefaultBatchWindow) and metadata. Nothing runs before the batch
// exists: an error after the upload leaves only an unused file.
func (c *Client) CreateBatch(ctx context.Context, lines []gpu.BatchLine, window string, meta map[string]string) (gpu.Batch, error) {
	data, err := encodeBatch(lines)
	if err != nil {
		return gpu.Batch{}, &chat.Error{Class: chat.ClassHTTP4xx, Server: c.Server(),
			Message: "request not sent: " + err.Error(), Err: err}
	}
	if window == "" {
		window = gpu.DefaultBatchWindow
	}
	k := c.c.Call(ctx, 0)
	f, err := c.c.OpenAI().CreateFileBytes(k.Context(), openai.FileBytesRequest{
		Name: "pitwall-batch.jsonl", Bytes: data, Purpose: openai.PurposeBatch})
	if err != nil {
		return gpu.Batch{}, fail(k, "uploading the batch input", err)
	}
	md := make(map[string]any, len(meta))
	for k, v := range meta {
		md[k] = v
	}
	k = c.c.Call(ctx, 0)
	b, err := c.c.OpenAI().CreateBatch(k.Context(), openai.CreateBatchRequest{InputFileID: f.ID,
		Endpoint: openai.BatchEndpointChatCompletions, CompletionWindow: window, Metadata: md})
	if err != nil {
		return gpu.Batch{}, fail(k, "creating the batch of file "+f.ID, err)
	}
	return c.fromOpenAI(b.Batch), nil
}

// Batch retrieves a batch by id.
func (c *Client) Batch(ctx context.Context, id string) (gpu.Batch, error) {
	k := c.c.Call(ctx, 0)
	b, err := c.c.OpenAI().RetrieveBatch(k.Context(), id)
	if err != nil {
		return gpu.Batch{}, fail(k, "batch "+id, err)
	}
	return c.fromOpenAI(b.Batch), nil
}

// CancelBatch asks the provider to cancel a batch; it answers cancelling,
// and cancelled once the requests running have ended.
func (c *Client) CancelBatch(ctx context.Context, id string) (gpu.Batch, error) {
	k := c.c.Call(ctx, 0)
	b, err := c.c.OpenAI().CancelBatch(k.Context(), id)
	if err != nil {
		return gpu.Batch{}, fail(k, "cancelling batch "+id, err)
	}
	return c.fromOpenAI(b.Batch), nil
}

// maxBatchPages bounds FindBatches: a hundred batches a page.
const maxBatchPages = 20

// FindBatches lists the batches created since the given time whose
// metadata holds every pair of meta, newest first. The provider lists an
// organisation's batches newest first, so the listing stops at the first
// one older than since (or after maxBatchPages pages).
func (c *Client) FindBatches(ctx context.Context, meta map[string]string, since time.Time) ([]gpu.Batch, error) {
	limit := 100
	var after *string
	var out []gpu.Batch
	for range maxBatchPages {
		k := c.c.Call(ctx, 0)
		page, err := c.c.OpenAI().ListBatch(k.Context(), after, &limit)
		if err != nil {
			return out, fail(k, "listing batches", err)
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
func (c *Client) WaitBatch(ctx context.Context, id string, poll gpu.BatchPoll, seen func(gpu.Batch)) (gpu.Batch, error) {
	poll = withDefaults(poll)
	wait := poll.Min
	var last gpu.Batch
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
			return last, c.c.Call(ctx, 0).Fail(ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, poll.Max)
	}
}

func withDefaults(p gpu.BatchPoll) gpu.BatchPoll {
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
func (c *Client) BatchResults(ctx context.Context, b gpu.Batch) ([]gpu.BatchResult, error) {
	var out []gpu.BatchResult
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
func (c *Client) BatchInput(ctx context.Context, b gpu.Batch) ([]string, error) {
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
	k := c.c.Call(ctx, maxBatchFile)
	raw, err := c.c.OpenAI().GetFileContent(k.Context(), id)
	if err != nil {
		return fail(k, "downloading file "+id, err)
	}
	defer raw.Close()
	if err := eachLine(raw, c.c.MaxReplyBytes(), fn); err != nil {
		return fail(k, "reading file "+id, err)
	}
	return nil
}

// fail classifies a failed Batch API call and says what it was doing.
func fail(k gpu.Call, doing string, err error) *chat.Error {
	e := k.Fail(err)
	e.Message = doing + ": " + e.Message
	return e
}

func (c *Client) fromOpenAI(ob openai.Batch) gpu.Batch {
	b := gpu.Batch{ID: ob.ID, Status: gpu.BatchStatus(ob.Status), InputFileID: ob.InputFileID, Window: ob.CompletionWindow,
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
			b.Errors = append(b.Errors, c.c.Scrub(msg))
		}
	}
	return b
}
