package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"pitwall/gpu/chat"

	openai "github.com/sashabaranov/go-openai"
)

// The Batch API's calls (files and batches), for edges/batchapi, which
// speaks the protocol over them. They go through the same go-openai client
// and hook transport as Chat's requests, so their replies are capped, and
// their errors classified and scrubbed, the same way: each error is a
// *chat.Error whose message starts with what the call was doing.

// MaxReplyBytes is the most bytes of one reply c reads (max_reply_bytes).
func (c *Client) MaxReplyBytes() int64 { return c.cfg.MaxReplyBytes }

// maxBatchFile caps one downloaded file: OpenAI takes input files up to
// 200 MB, and the answers to them are about as large.
const maxBatchFile = 1 << 30

// batchCall sends one Batch API request through go-openai, with a reply of
// up to maxReply bytes (0: MaxReplyBytes), and classifies its error.
func batchCall[T any](ctx context.Context, c *Client, maxReply int64, doing string, send func(context.Context, *openai.Client) (T, error)) (T, error) {
	if maxReply <= 0 {
		maxReply = c.cfg.MaxReplyBytes
	}
	info := &callInfo{maxReply: maxReply}
	cctx := withCall(ctx, info)
	v, err := send(cctx, c.api)
	if err != nil {
		e := c.fail(cctx, chat.Request{}, err, info)
		if doing != "" {
			e.Message = doing + ": " + e.Message
		}
		return v, e
	}
	return v, nil
}

// ListBatches lists one page of the organisation's batches, newest first,
// after the batch id after ("" for the first page); more says whether
// another page follows.
func (c *Client) ListBatches(ctx context.Context, after string, limit int) (page []Batch, more bool, err error) {
	var ap *string
	if after != "" {
		ap = &after
	}
	r, err := batchCall(ctx, c, 0, "listing batches", func(ctx context.Context, api *openai.Client) (openai.ListBatchResponse, error) {
		return api.ListBatch(ctx, ap, &limit)
	})
	if err != nil {
		return nil, false, err
	}
	for _, ob := range r.Data {
		page = append(page, c.fromOpenAI(ob))
	}
	return page, r.HasMore, nil
}

// CreateBatch uploads input, a JSONL file of chat completion requests, and
// creates a batch of it with the completion window and metadata given.
// Nothing runs before the batch exists: an error after the upload leaves
// only an unused file.
func (c *Client) CreateBatch(ctx context.Context, input []byte, window string, meta map[string]string) (Batch, error) {
	f, err := batchCall(ctx, c, 0, "uploading the batch input", func(ctx context.Context, api *openai.Client) (openai.File, error) {
		return api.CreateFileBytes(ctx, openai.FileBytesRequest{Name: "pitwall-batch.jsonl", Bytes: input, Purpose: openai.PurposeBatch})
	})
	if err != nil {
		return Batch{}, err
	}
	md := make(map[string]any, len(meta))
	for k, v := range meta {
		md[k] = v
	}
	b, err := batchCall(ctx, c, 0, "creating the batch of file "+f.ID, func(ctx context.Context, api *openai.Client) (openai.BatchResponse, error) {
		return api.CreateBatch(ctx, openai.CreateBatchRequest{InputFileID: f.ID,
			Endpoint: openai.BatchEndpointChatCompletions, CompletionWindow: window, Metadata: md})
	})
	if err != nil {
		return Batch{}, err
	}
	return c.fromOpenAI(b.Batch), nil
}

// RetrieveBatch looks a batch up by id.
func (c *Client) RetrieveBatch(ctx context.Context, id string) (Batch, error) {
	b, err := batchCall(ctx, c, 0, "batch "+id, func(ctx context.Context, api *openai.Client) (openai.BatchResponse, error) {
		return api.RetrieveBatch(ctx, id)
	})
	if err != nil {
		return Batch{}, err
	}
	return c.fromOpenAI(b.Batch), nil
}

// CancelBatch asks the provider to cancel a batch; it answers cancelling,
// and cancelled once the requests running have ended.
func (c *Client) CancelBatch(ctx context.Context, id string) (Batch, error) {
	b, err := batchCall(ctx, c, 0, "cancelling batch "+id, func(ctx context.Context, api *openai.Client) (openai.BatchResponse, error) {
		return api.CancelBatch(ctx, id)
	})
	if err != nil {
		return Batch{}, err
	}
	return c.fromOpenAI(b.Batch), nil
}

// ReadFile downloads a file (up to 1 GiB) and hands its body to read; an
// error of either is classified.
func (c *Client) ReadFile(ctx context.Context, id string, read func(io.Reader) error) error {
	info := &callInfo{maxReply: maxBatchFile}
	cctx := withCall(ctx, info)
	raw, err := c.api.GetFileContent(cctx, id)
	if err != nil {
		e := c.fail(cctx, chat.Request{}, err, info)
		e.Message = "downloading file " + id + ": " + e.Message
		return e
	}
	defer raw.Close()
	if err := read(raw); err != nil {
		e := c.fail(cctx, chat.Request{}, err, info)
		e.Message = "reading file " + id + ": " + e.Message
		return e
	}
	return nil
}

// Classify is err classified as one of c's requests' errors would be: for
// a wait between requests that ctx ended.
func (c *Client) Classify(ctx context.Context, err error) *chat.Error {
	return c.fail(ctx, chat.Request{}, err, &callInfo{})
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

// Scrub masks URL credentials and c's API key in s, as in every error of
// c's: for text a server wrote that reaches a screen or the ledger.
func (c *Client) Scrub(s string) string { return c.scrub(s) }

// StatusError is the error a non-2xx reply says (status, and its body in
// any of the shapes Chat reads) when it arrives other than as the reply to
// a request (a line of a batch's output file): classed by status, its
// message clipped and scrubbed.
func (c *Client) StatusError(status int, body []byte) *chat.Error {
	msg := errorBodyMessage(body)
	if msg == "" {
		msg = http.StatusText(status)
	}
	return &chat.Error{Class: statusClass(status), Status: status, Server: c.cfg.Name, Message: c.scrub(msg)}
}

// ReportedError is an error of the given class a server reported in words
// alone (a batch's error line: a code and a message), clipped and scrubbed
// as a reply's would be.
func (c *Client) ReportedError(class chat.ErrorClass, msg string) *chat.Error {
	return &chat.Error{Class: class, Server: c.cfg.Name, Message: c.scrub(clipMessage(msg))}
}

// ChatBody is the JSON body of req as one chat completion that is not
// streamed: what Chat sends, less the streaming, with the temperature
// written out. go-openai drops a temperature of 0 and the hook transport
// puts it back on requests it sends, but a body inside a file (a batch's
// input) goes past it.
func ChatBody(req chat.Request) (json.RawMessage, error) {
	o, err := toOpenAI(req)
	if err != nil {
		return nil, err
	}
	o.Stream, o.StreamOptions = false, nil
	b, err := json.Marshal(o)
	if err != nil || req.Temperature == nil {
		return b, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	m["temperature"] = json.RawMessage(strconv.FormatFloat(*req.Temperature, 'g', -1, 64))
	return json.Marshal(m)
}
