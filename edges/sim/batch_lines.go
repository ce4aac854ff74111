package sim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
)

// A batch's requests: read from its input file as validation reads them,
// and run one by one through the chat handler.

// batchLine is one request of a batch's input.
type batchLine struct {
	CustomID string          `json:"custom_id"`
	Method   string          `json:"method"`
	URL      string          `json:"url"`
	Body     json.RawMessage `json:"body"`
}

// parseBatchInput reads a batch's JSONL as validation does, and says what
// is wrong with it (at most ten lines' worth).
func parseBatchInput(data []byte, endpoint string) ([]batchLine, []batchErr) {
	var lines []batchLine
	var bad []batchErr
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxBatchFileBytes)
	n := 0
	for sc.Scan() && len(bad) < 10 {
		n++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var l batchLine
		fail := func(code, msg string) {
			bad = append(bad, batchErr{Code: code, Message: msg, Param: jsonNull, Line: n})
		}
		switch err := json.Unmarshal(raw, &l); {
		case err != nil:
			fail("invalid_json_line", "This line is not parseable as valid JSON.")
		case l.CustomID == "":
			fail("missing_required_parameter", "Missing required parameter: 'custom_id'.")
		case seen[l.CustomID]:
			fail("duplicate_custom_id", fmt.Sprintf("The custom_id %q is used more than once.", l.CustomID))
		case l.Method != http.MethodPost:
			fail("invalid_method", fmt.Sprintf("Invalid method %q: batch requests are POST.", l.Method))
		case l.URL != endpoint:
			fail("mismatched_endpoint", fmt.Sprintf("The url %q does not match the batch's endpoint %q.", l.URL, endpoint))
		case len(l.Body) == 0 || l.Body[0] != '{':
			fail("missing_required_parameter", "Missing required parameter: 'body' (an object).")
		default:
			seen[l.CustomID] = true
			lines = append(lines, l)
		}
	}
	switch {
	case sc.Err() != nil:
		bad = append(bad, batchErr{Code: "invalid_file", Message: sc.Err().Error(), Param: jsonNull, Line: jsonNull})
	case len(lines) == 0 && len(bad) == 0:
		bad = append(bad, batchErr{Code: "empty_file", Message: "The input file holds no requests.", Param: jsonNull, Line: jsonNull})
	case len(lines) > maxBatchRequests:
		bad = append(bad, batchErr{Code: "too_many_requests", Message: fmt.Sprintf("A batch takes at most %d requests.", maxBatchRequests), Param: jsonNull, Line: jsonNull})
	}
	return lines, bad
}

// lineResult is how one request of a batch ended: ran is false for one the
// batch never got to.
type lineResult struct {
	ran    bool
	status int
	body   []byte
}

// runLines runs a batch's requests, as many at once as the server has
// slots, until ctx ends; the counts move as they finish.
func (s *Server) runLines(ctx context.Context, st *batchStore, b *simBatch, lines []batchLine) []lineResult {
	results := make([]lineResult, len(lines))
	sem := make(chan struct{}, s.cfg.Slots)
	var wg sync.WaitGroup
	for i, l := range lines {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			r := s.runLine(ctx, l.Body)
			results[i] = r
			if !r.ran {
				return
			}
			st.mu.Lock()
			if r.status/100 == 2 {
				b.Completed++
			} else {
				b.Failed++
			}
			st.mu.Unlock()
		}()
	}
	wg.Wait()
	return results
}

// runLine runs one request through the chat handler of the server's
// current life, as a client's request would run. A request the batch's end
// cut off did not run.
func (s *Server) runLine(ctx context.Context, body []byte) lineResult {
	s.mu.Lock()
	g, up := s.gen, s.up
	s.mu.Unlock()
	if !up {
		status, b := errorReply(s.cfg.Spec.Backend, apiError{kind: errUnavailable, message: "the server is down"})
		return lineResult{ran: true, status: status, body: b}
	}
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(g.ctx, cancel)() // a crash ends it, as it ends a connection
	req, err := http.NewRequestWithContext(lctx, http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		status, b := errorReply(s.cfg.Spec.Backend, apiError{kind: errBadRequest, message: err.Error()})
		return lineResult{ran: true, status: status, body: b}
	}
	req.Header.Set("Content-Type", "application/json")
	w := &lineWriter{h: http.Header{}}
	aborted := s.serveLine(g, w, req)
	switch {
	case !aborted && w.code != 0:
		if w.code/100 == 2 && !json.Valid(w.buf.Bytes()) {
			status, b := errorReply(s.cfg.Spec.Backend, apiError{kind: errServer, message: "the model's answer was malformed (simulated)"})
			return lineResult{ran: true, status: status, body: b}
		}
		return lineResult{ran: true, status: w.code, body: w.buf.Bytes()}
	case ctx.Err() != nil:
		return lineResult{}
	case g.ctx.Err() != nil:
		status, b := errorReply(s.cfg.Spec.Backend, apiError{kind: errUnavailable, message: "the server went down while running the request (simulated)"})
		return lineResult{ran: true, status: status, body: b}
	}
	status, b := errorReply(s.cfg.Spec.Backend, apiError{kind: errServer, message: "the request was dropped (simulated)"})
	return lineResult{ran: true, status: status, body: b}
}

// serveLine calls the chat handler and reports whether it aborted (a
// dropped connection, a crash: http.ErrAbortHandler).
func (s *Server) serveLine(g *generation, w http.ResponseWriter, r *http.Request) (aborted bool) {
	defer func() {
		if p := recover(); p != nil {
			if err, ok := p.(error); !ok || !errors.Is(err, http.ErrAbortHandler) {
				panic(p)
			}
			aborted = true
		}
	}()
	s.handleChat(g, w, r)
	return false
}

// lineWriter takes what the chat handler writes for one batched request.
type lineWriter struct {
	h    http.Header
	code int
	buf  bytes.Buffer
}

func (w *lineWriter) Header() http.Header { return w.h }

func (w *lineWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.buf.Write(p)
}

// Flush is there for handlers that flush; nothing waits on it.
func (w *lineWriter) Flush() {}
