package batchapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"pitwall/gpu/chat"
	"pitwall/gpu/client"
)

// This file holds the calls; lines.go the JSONL going in and out.

// Client speaks the Batch API to one server over the Batch API calls of its
// client.Client (the same go-openai client and transport as its chat
// requests, so replies are capped and errors classified and scrubbed the
// same way): the JSONL going in and out, finding a batch again, waiting for
// one. It is safe for concurrent use.
type Client struct {
	c *client.Client
}

// New returns the Batch API client of the server c talks to.
func New(c *client.Client) *Client { return &Client{c: c} }

// Server returns the name of the server the client talks to.
func (c *Client) Server() string { return c.c.Server() }

// BatchesOffered asks whether the server has a Batch API (GET /v1/batches):
// a 404, 405 or 501 says it has none; any other failure is an error.
func (c *Client) BatchesOffered(ctx context.Context) (bool, error) {
	_, _, err := c.c.ListBatches(ctx, "", 1)
	if err == nil {
		return true, nil
	}
	var e *chat.Error
	if !errors.As(err, &e) {
		return false, err
	}
	switch e.Status {
	case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusNotImplemented:
		return false, nil
	}
	return false, e
}

// CreateBatch uploads lines as a JSONL file (purpose batch) and creates a
// batch of chat completions from it, with the given completion window (""
// = client.DefaultBatchWindow) and metadata. Nothing runs before the batch
// exists: an error after the upload leaves only an unused file.
func (c *Client) CreateBatch(ctx context.Context, lines []client.BatchLine, window string, meta map[string]string) (client.Batch, error) {
	data, err := encodeBatch(lines)
	if err != nil {
		return client.Batch{}, &chat.Error{Class: chat.ClassHTTP4xx, Server: c.Server(),
			Message: "request not sent: " + err.Error(), Err: err}
	}
	if window == "" {
		window = client.DefaultBatchWindow
	}
	return c.c.CreateBatch(ctx, data, window, meta)
}

// Batch retrieves a batch by id.
func (c *Client) Batch(ctx context.Context, id string) (client.Batch, error) {
	return c.c.RetrieveBatch(ctx, id)
}

// CancelBatch asks the provider to cancel a batch; it answers cancelling,
// and cancelled once the requests running have ended.
func (c *Client) CancelBatch(ctx context.Context, id string) (client.Batch, error) {
	return c.c.CancelBatch(ctx, id)
}

// maxBatchPages bounds FindBatches: a hundred batches a page.
const maxBatchPages = 20

// FindBatches lists the batches created since the given time whose
// metadata holds every pair of meta, newest first. The provider lists an
// organisation's batches newest first, so the listing stops at the first
// one older than since (or after maxBatchPages pages).
func (c *Client) FindBatches(ctx context.Context, meta map[string]string, since time.Time) ([]client.Batch, error) {
	var after string
	var out []client.Batch
	for range maxBatchPages {
		page, more, err := c.c.ListBatches(ctx, after, 100)
		if err != nil {
			return out, err
		}
		for _, b := range page {
			if b.CreatedAt.Before(since) {
				return out, nil
			}
			if metaHolds(b.Metadata, meta) {
				out = append(out, b)
			}
		}
		if !more || len(page) == 0 {
			return out, nil
		}
		after = page[len(page)-1].ID
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
func (c *Client) WaitBatch(ctx context.Context, id string, poll client.BatchPoll, seen func(client.Batch)) (client.Batch, error) {
	poll = withDefaults(poll)
	wait := poll.Min
	var last client.Batch
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
			return last, c.c.Classify(ctx, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, poll.Max)
	}
}

func withDefaults(p client.BatchPoll) client.BatchPoll {
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
func (c *Client) BatchResults(ctx context.Context, b client.Batch) ([]client.BatchResult, error) {
	var out []client.BatchResult
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
func (c *Client) BatchInput(ctx context.Context, b client.Batch) ([]string, error) {
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

// readFile downloads a file and hands each non-blank line to fn, numbered
// from 1.
func (c *Client) readFile(ctx context.Context, id string, fn func(int, []byte) error) error {
	return c.c.ReadFile(ctx, id, func(r io.Reader) error { return eachLine(r, c.c.MaxReplyBytes(), fn) })
}
