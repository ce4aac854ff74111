package sim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// start starts a server for a test and closes it at the end.
func start(t testing.TB, cfg Config) *Server {
	t.Helper()
	s, err := Start(cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// instant is a config with no delays for model names.
func instant(models ...string) Config {
	return Config{Name: "t", Models: models, Instant: true, Seed: 1}
}

// body builds a chat request body.
func body(model, user string, extra map[string]any) []byte {
	req := map[string]any{
		"model":    model,
		"messages": []map[string]any{{"role": "user", "content": user}},
	}
	for k, v := range extra {
		req[k] = v
	}
	b, _ := json.Marshal(req)
	return b
}

// client is a plain HTTP client whose connections the test owns.
func client(t testing.TB) *http.Client {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// post sends a chat request and returns the status, headers and body.
func post(t testing.TB, c *http.Client, s *Server, b []byte) (int, http.Header, []byte) {
	t.Helper()
	resp, err := c.Post(s.URL()+"/chat/completions", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp.StatusCode, resp.Header, out
}

// get fetches a path on the server's host.
func get(t testing.TB, c *http.Client, s *Server, path string) (int, []byte) {
	t.Helper()
	resp, err := c.Get("http://" + s.Addr() + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return resp.StatusCode, out
}

// sse is a stream read line by line by a raw client.
type sse struct {
	data []string // payloads of data: lines, [DONE] included
	done bool     // saw data: [DONE]
	err  error    // what ended the read, nil at a clean EOF
	bad  []string // lines that are neither data:, blank, nor comments
}

// readSSE reads an event stream with a bufio line reader, checking that
// every event is one data: line followed by a blank line.
func readSSE(r io.Reader) sse {
	var out sse
	br := bufio.NewReader(r)
	expectBlank := false
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if err != io.EOF || line != "" {
				out.err = err
			}
			return out
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case expectBlank:
			if line != "" {
				out.bad = append(out.bad, "no blank line after an event: "+line)
			}
			expectBlank = false
		case strings.HasPrefix(line, "data: "):
			p := strings.TrimPrefix(line, "data: ")
			out.data = append(out.data, p)
			if p == "[DONE]" {
				out.done = true
			}
			expectBlank = true
		case line == "" || strings.HasPrefix(line, ":"):
		default:
			out.bad = append(out.bad, line)
		}
	}
}

// streamChat posts a streaming request and reads its events.
func streamChat(t testing.TB, c *http.Client, s *Server, b []byte) (*http.Response, sse) {
	t.Helper()
	resp, err := c.Post(s.URL()+"/chat/completions", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	return resp, readSSE(resp.Body)
}

// wireChunk is a chunk as a raw client decodes it.
type wireChunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role      string  `json:"role"`
			Content   *string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage   *usage          `json:"usage"`
	Timings json.RawMessage `json:"timings"`
}

// assembled is a streamed reply put back together.
type assembled struct {
	chunks  []wireChunk
	role    string
	content string
	calls   map[int]*struct{ id, name, args string }
	finish  string
	usage   *usage
}

func assemble(t testing.TB, ev sse) assembled {
	t.Helper()
	a := assembled{calls: map[int]*struct{ id, name, args string }{}}
	for _, d := range ev.data {
		if d == "[DONE]" {
			continue
		}
		var c wireChunk
		if err := json.Unmarshal([]byte(d), &c); err != nil {
			t.Fatalf("chunk is not JSON: %q: %v", d, err)
		}
		a.chunks = append(a.chunks, c)
		if c.Usage != nil {
			a.usage = c.Usage
		}
		for _, ch := range c.Choices {
			if ch.Delta.Role != "" {
				a.role = ch.Delta.Role
			}
			if ch.Delta.Content != nil {
				a.content += *ch.Delta.Content
			}
			for _, tc := range ch.Delta.ToolCalls {
				call := a.calls[tc.Index]
				if call == nil {
					call = &struct{ id, name, args string }{}
					a.calls[tc.Index] = call
				}
				if tc.ID != "" {
					call.id = tc.ID
				}
				call.name += tc.Function.Name
				call.args += tc.Function.Arguments
			}
			if ch.FinishReason != nil {
				a.finish = *ch.FinishReason
			}
		}
	}
	return a
}

// completionBody is a non-streaming reply as a raw client decodes it.
type completionBody struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Role      string  `json:"role"`
			Content   *string `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage   usage           `json:"usage"`
	Timings json.RawMessage `json:"timings"`
}

// complete posts a non-streaming request and decodes the reply.
func complete(t testing.TB, c *http.Client, s *Server, b []byte) completionBody {
	t.Helper()
	status, _, out := post(t, c, s, b)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, out)
	}
	var cb completionBody
	if err := json.Unmarshal(out, &cb); err != nil {
		t.Fatalf("reply is not JSON: %s: %v", out, err)
	}
	if len(cb.Choices) != 1 {
		t.Fatalf("want 1 choice, got %d: %s", len(cb.Choices), out)
	}
	return cb
}

// content is a reply's text, "" when null.
func (cb completionBody) content() string {
	if p := cb.Choices[0].Message.Content; p != nil {
		return *p
	}
	return ""
}

// waitState waits for a condition on the server's state, for at most a
// generous deadline that only a broken server reaches.
func waitState(t testing.TB, s *Server, what string, cond func(State) bool) State {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := s.WaitState(ctx, cond)
	if err != nil {
		t.Fatalf("waiting for %s: %v; state %+v", what, err, st)
	}
	return st
}

// errorBody is an OpenAI error body; code may be a string, a number or null.
type errorBody struct {
	Error struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	} `json:"error"`
}

func decodeError(t testing.TB, b []byte) errorBody {
	t.Helper()
	var e errorBody
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("error body is not JSON: %s: %v", b, err)
	}
	if e.Error.Message == "" || e.Error.Type == "" || e.Error.Code == nil {
		t.Fatalf("error body lacks message, type or code: %s", b)
	}
	return e
}

const time2m = 2 * time.Minute

// hold sends a chat request in the background; the function it returns
// cancels the request and waits for its goroutine (calling it again is a
// no-op). The test must call it.
func hold(t testing.TB, c *http.Client, s *Server, b []byte) (release func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = postCtx(ctx, c, s, b) // the request ends by cancellation; its error says nothing
	}()
	return func() {
		cancel()
		<-done
	}
}

// postCtx sends a chat request that ends with ctx, reading whatever comes;
// for requests a test leaves hanging in the server.
func postCtx(ctx context.Context, c *http.Client, s *Server, b []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/chat/completions", bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

func contains(b []byte, s string) bool { return strings.Contains(string(b), s) }

func contextWithTimeout() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 20*time.Second)
}
