package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"pitwall/gpu/chat"
	"pitwall/internal/oaitest"
)

// oaiHijack takes the raw connection from the server and hands it to do.
func oaiHijack(do func(c net.Conn)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		do(c)
	}
}

const oaiSSEHead = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"

// oaiSSEChunk frames one SSE event as an HTTP/1.1 chunk.
func oaiSSEChunk(event string) string {
	data := "data: " + event + "\n\n"
	return fmt.Sprintf("%x\r\n%s\r\n", len(data), data)
}

func TestChatClassifiesFailures(t *testing.T) {
	const m = "qwen3-8b"
	tests := []struct {
		name    string
		handler http.HandlerFunc
		url     func(t *testing.T) string // instead of the fake server's
		timeout time.Duration
		want    chat.Error // Class, Status, RetryAfter compared; Message must be contained
		content string     // what the chat.Result holds of a reply cut short, when deterministic
	}{
		{
			name: "400 with an OpenAI error body",
			handler: oaitest.Error(400, "application/json",
				`{"error":{"message":"max_tokens is too large","type":"invalid_request_error","param":"max_tokens","code":"invalid_value"}}`),
			want: chat.Error{Class: chat.ClassHTTP4xx, Status: 400, Message: "max_tokens is too large"},
		},
		{
			name:    "404 with Ollama's body",
			handler: oaitest.Error(404, "application/json", `{"error":"model \"x\" not found, try pulling it first"}`),
			want:    chat.Error{Class: chat.ClassHTTP4xx, Status: 404, Message: `model "x" not found, try pulling it first`},
		},
		{
			name: "404 with vLLM's body and an integer code",
			handler: oaitest.Error(404, "application/json",
				`{"error":{"message":"The model `+"`x`"+` does not exist.","type":"NotFoundError","param":null,"code":404}}`),
			want: chat.Error{Class: chat.ClassHTTP4xx, Status: 404, Message: "The model `x` does not exist."},
		},
		{
			name: "404 with older vLLM's top-level body",
			handler: oaitest.Error(404, "application/json",
				`{"object":"error","message":"The model `+"`x`"+` does not exist.","type":"NotFoundError","param":null,"code":404}`),
			want: chat.Error{Class: chat.ClassHTTP4xx, Status: 404, Message: "The model `x` does not exist."},
		},
		{
			name: "404 with LM Studio's model_not_found",
			handler: oaitest.Error(404, "application/json",
				`{"error":{"message":"Model not found: x","type":"invalid_request_error","code":"model_not_found"}}`),
			want: chat.Error{Class: chat.ClassHTTP4xx, Status: 404, Message: "Model not found: x"},
		},
		{
			name: "429 with Retry-After in seconds",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "7")
				oaitest.Error(429, "application/json", `{"error":{"message":"slow down","type":"rate_limit_error"}}`)(w, r)
			},
			want: chat.Error{Class: chat.ClassRateLimit, Status: 429, Message: "slow down", RetryAfter: 7 * time.Second},
		},
		{
			name:    "500",
			handler: oaitest.Error(500, "application/json", `{"error":{"message":"CUDA error: out of memory","type":"server_error"}}`),
			want:    chat.Error{Class: chat.ClassHTTP5xx, Status: 500, Message: "CUDA error: out of memory"},
		},
		{
			name:    "500 whose error has a type but no message",
			handler: oaitest.Error(500, "application/json", `{"error":{"type":"overloaded_error"}}`),
			want:    chat.Error{Class: chat.ClassHTTP5xx, Status: 500, Message: "overloaded_error"},
		},
		{
			name:    "502 in plain text",
			handler: oaitest.Error(502, "text/plain", "Bad Gateway\n"),
			want:    chat.Error{Class: chat.ClassHTTP5xx, Status: 502, Message: "Bad Gateway"},
		},
		{
			name:    "503 while llama.cpp loads its model",
			handler: oaitest.Error(503, "application/json", `{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`),
			want:    chat.Error{Class: chat.ClassUnavailable, Status: 503, Message: "Loading model"},
		},
		{
			name: "connection refused",
			url:  oaitest.ClosedURL,
			want: chat.Error{Class: chat.ClassUnavailable, Message: "refused"},
		},
		{
			name:    "connection closed before any response",
			handler: oaiHijack(func(c net.Conn) { c.Close() }),
			want:    chat.Error{Class: chat.ClassUnavailable},
		},
		{
			name: "connection reset mid-stream",
			handler: oaiHijack(func(c net.Conn) {
				fmt.Fprint(c, oaiSSEHead+oaiSSEChunk(oaitest.Content(m, "Hel")))
				_ = c.(*net.TCPConn).SetLinger(0) // close with RST
				c.Close()
			}),
			want: chat.Error{Class: chat.ClassUnavailable, Message: "reset"},
		},
		{
			name: "chunked body cut mid-stream",
			handler: oaiHijack(func(c net.Conn) {
				fmt.Fprint(c, oaiSSEHead+oaiSSEChunk(oaitest.Content(m, "Hel")))
				c.Close()
			}),
			want: chat.Error{Class: chat.ClassCut, Message: "cut"},
		},
		{
			name: "stream ends without [DONE] or finish_reason",
			handler: func(w http.ResponseWriter, r *http.Request) {
				oaitest.Stream(w, false, oaitest.Content(m, "Hel"), oaitest.Content(m, "lo"))
			},
			want:    chat.Error{Class: chat.ClassCut, Message: "without a finish_reason"},
			content: "Hello",
		},
		{
			name: "a chunk that is not JSON",
			handler: func(w http.ResponseWriter, r *http.Request) {
				oaitest.Stream(w, true, oaitest.Content(m, "Hel"), `{"choices":[{"delta":{"content":"lo"`)
			},
			want: chat.Error{Class: chat.ClassMalformed, Message: "invalid JSON"},
		},
		{
			name:    "an empty 200 body",
			handler: oaitest.Error(200, "text/event-stream", ""),
			want:    chat.Error{Class: chat.ClassMalformed, Message: "empty"},
		},
		{
			name: "an error event inside the stream",
			handler: func(w http.ResponseWriter, r *http.Request) {
				oaitest.Stream(w, false, oaitest.Content(m, "Hel"), `{"error":{"message":"KV cache full","type":"server_error","code":500}}`)
			},
			want: chat.Error{Class: chat.ClassHTTP5xx, Status: 500, Message: "KV cache full"},
		},
		{
			name:    "a hang that hits the timeout",
			handler: func(w http.ResponseWriter, r *http.Request) { oaitest.Hang(r) },
			timeout: 50 * time.Millisecond,
			want:    chat.Error{Class: chat.ClassTimeout},
		},
		{
			name: "a stream that stalls until the timeout",
			handler: func(w http.ResponseWriter, r *http.Request) {
				oaitest.Stream(w, false, oaitest.Content(m, "Hel"))
				oaitest.Hang(r)
			},
			timeout: 50 * time.Millisecond,
			want:    chat.Error{Class: chat.ClassTimeout},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var url string
			if tt.url != nil {
				url = tt.url(t)
			} else {
				url = oaitest.Server(t, tt.handler).URL + "/v1"
			}
			c := New(Config{Name: "gpu0", URL: url}, nil)
			defer c.CloseIdleConnections()
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			res, err := c.Chat(ctx, chat.Request{Model: m, Messages: []chat.Message{{Role: "user", Content: "Hi"}}})
			checkClassified(t, err, tt.want, m)
			if res.Server != "gpu0" {
				t.Errorf("Result.Server = %q, want gpu0", res.Server)
			}
			if tt.content != "" && res.Content != tt.content {
				t.Errorf("Result.Content = %q, want what arrived: %q", res.Content, tt.content)
			}
		})
	}
}

func checkClassified(t *testing.T, err error, want chat.Error, model string) {
	t.Helper()
	var e *chat.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *chat.Error", err, err)
	}
	if e.Class != want.Class || e.Status != want.Status || e.RetryAfter != want.RetryAfter {
		t.Errorf("got class %s, status %d, retry after %v; want %s, %d, %v (%v)",
			e.Class, e.Status, e.RetryAfter, want.Class, want.Status, want.RetryAfter, e)
	}
	if !strings.Contains(e.Message, want.Message) {
		t.Errorf("message %q does not contain %q", e.Message, want.Message)
	}
	if e.Server != "gpu0" || e.Model != model {
		t.Errorf("error names server %q model %q, want gpu0 %q", e.Server, e.Model, model)
	}
}

func TestChatCancelledByTheCallerIsCancelledNotTimeout(t *testing.T) {
	arrived := make(chan struct{})
	srv := oaitest.Server(t, func(w http.ResponseWriter, r *http.Request) {
		oaitest.Stream(w, false, oaitest.Content("m", "Hel"))
		close(arrived)
		oaitest.Hang(r)
	})
	c := New(Config{Name: "gpu0", URL: srv.URL + "/v1"}, nil)
	defer c.CloseIdleConnections()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	_, err := c.Chat(ctx, chat.Request{Model: "m", Messages: []chat.Message{{Role: "user", Content: "Hi"}}})
	checkClassified(t, err, chat.Error{Class: chat.ClassCanceled, Message: "cancel"}, "m")
}

func TestModelsClassifiesFailures(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		url     func(t *testing.T) string
		want    chat.Error
	}{
		{"401 with an OpenAI body", oaitest.Error(401, "application/json",
			`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`),
			nil, chat.Error{Class: chat.ClassHTTP4xx, Status: 401, Message: "Incorrect API key"}},
		{"connection refused", nil, oaitest.ClosedURL, chat.Error{Class: chat.ClassUnavailable}},
		{"a body that is not JSON", oaitest.Error(200, "application/json", "<html>"), nil, chat.Error{Class: chat.ClassMalformed}},
		{"an empty 200 body", oaitest.Error(200, "application/json", ""), nil, chat.Error{Class: chat.ClassMalformed}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var url string
			if tt.url != nil {
				url = tt.url(t)
			} else {
				mux := http.NewServeMux()
				mux.HandleFunc("GET /v1/models", tt.handler)
				srv := httptest.NewServer(mux)
				t.Cleanup(srv.Close)
				url = srv.URL + "/v1"
			}
			c := New(Config{Name: "gpu0", URL: url}, nil)
			defer c.CloseIdleConnections()
			_, err := c.Models(context.Background())
			var e *chat.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not a *chat.Error", err)
			}
			if e.Class != tt.want.Class || e.Status != tt.want.Status || !strings.Contains(e.Message, tt.want.Message) {
				t.Errorf("got %s %d %q, want %s %d containing %q", e.Class, e.Status, e.Message, tt.want.Class, tt.want.Status, tt.want.Message)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		header string
		want   time.Duration
	}{
		{"7", 7 * time.Second},
		{" 1.5 ", 1500 * time.Millisecond},
		{"Sun, 01 Mar 2026 12:00:30 GMT", 30 * time.Second},
		{"Sun, 01 Mar 2026 11:59:00 GMT", 0}, // already past
		{"-3", 0},
		{"soon", 0},
		{"", 0},
	}
	for _, tt := range tests {
		if got := parseRetryAfter(tt.header, now); got != tt.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tt.header, got, tt.want)
		}
	}
}

func TestErrorBodyMessage(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"OpenAI object", `{"error":{"message":"bad","type":"invalid_request_error","code":"x"}}`, "bad"},
		{"integer code", `{"error":{"message":"gone","code":404}}`, "gone"},
		{"message as a list", `{"error":{"message":["a","b"]}}`, "a, b"},
		{"Ollama string", `{"error":"model \"x\" not found"}`, `model "x" not found`},
		{"top-level message", `{"object":"error","message":"nope","code":400}`, "nope"},
		{"FastAPI detail", `{"detail":"Not Found"}`, "Not Found"},
		{"plain text", "  upstream\n  connect error  ", "upstream connect error"},
		{"empty", "  ", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errorBodyMessage([]byte(tt.body)); got != tt.want {
				t.Errorf("errorBodyMessage = %q, want %q", got, tt.want)
			}
		})
	}
	long := strings.Repeat("é", maxErrMessage)
	if got := errorBodyMessage([]byte(long)); len(got) > maxErrMessage+len("…") || !strings.HasSuffix(got, "…") {
		t.Errorf("a long body is kept whole (%d bytes)", len(got))
	}
}
