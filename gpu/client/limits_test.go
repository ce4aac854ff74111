package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"pitwall/gpu/chat"
	"pitwall/internal/oaitest"
)

func hiRequest(model string) chat.Request {
	return chat.Request{Model: model, Messages: []chat.Message{{Role: "user", Content: "hi"}}}
}

// endlessSSE streams content chunks of word until the client goes away.
func endlessSSE(word string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		oaitest.Decode(r)
		w.Header().Set("Content-Type", "text/event-stream")
		event := []byte("data: " + oaitest.Content("m", word) + "\n\n")
		for r.Context().Err() == nil {
			if _, err := w.Write(event); err != nil {
				return
			}
		}
	}
}

// bigBody writes n bytes made of unit, then head/tail around it, as one
// response with the given content type.
func bigBody(contentType, prefix string, n int, unit, suffix string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		oaitest.Decode(r)
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write([]byte(prefix))
		block := []byte(strings.Repeat(unit, 64<<10/len(unit)))
		for sent := 0; sent < n && r.Context().Err() == nil; sent += len(block) {
			if _, err := w.Write(block); err != nil {
				return
			}
		}
		_, _ = w.Write([]byte(suffix))
	}
}

func TestReplyPastTheCapEndsTooLargeKeepingWhatCameBefore(t *testing.T) {
	const capBytes = 256 << 10
	const fifty = 50 << 20
	for _, tt := range []struct {
		name        string
		handler     http.HandlerFunc
		wantContent bool // whole chunks arrived before the cap: their text is kept
	}{
		{"an endless stream", endlessSSE("tok "), true},
		{"a 50 MB reply in many chunks",
			bigBody("text/event-stream", "", fifty, "data: "+oaitest.Content("m", strings.Repeat("x", 200))+"\n\n", "data: [DONE]\n\n"), true},
		{"a 50 MB reply in one chunk",
			bigBody("text/event-stream", `data: {"model":"m","choices":[{"index":0,"delta":{"content":"`, fifty, "y", `"}}]}`+"\n\n"), false},
		{"50 MB of lines that are not data (go-openai buffers them)",
			bigBody("text/event-stream", "data: "+oaitest.Content("m", "first ")+"\n\n", fifty, "event: ping\n", ""), true},
		{"50 MB of comments before anything", bigBody("text/event-stream", "", fifty, ": keep-alive\n", ""), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := oaitest.Server(t, tt.handler)
			c := New(Config{Name: "s", URL: srv.URL + "/v1", MaxReplyBytes: capBytes}, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := c.Chat(ctx, hiRequest("m"))
			if got := chat.ClassOf(err); got != chat.ClassTooLarge {
				t.Fatalf("class = %q (%v), want too_large", got, err)
			}
			if chat.ClassOf(err).Transient() {
				t.Error("too_large is transient: a retry would fetch the same flood")
			}
			if !strings.Contains(err.Error(), "256 KiB") {
				t.Errorf("the error does not say the cap: %v", err)
			}
			if n := len(res.Content) + len(res.Reasoning); n > capBytes {
				t.Errorf("kept %d bytes of text, more than the %d-byte cap", n, capBytes)
			}
			if tt.wantContent && res.Content == "" {
				t.Error("what arrived before the cap was not kept")
			}
		})
	}
}

func TestModelsListPastTheCapEndsTooLarge(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", bigBody("application/json", `{"object":"list","data":[`, 50<<20, `{"id":"m","object":"model"},`, `{"id":"z"}]}`))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c := New(Config{Name: "s", URL: srv.URL + "/v1", MaxReplyBytes: 1 << 20}, nil)
	_, err := c.Models(context.Background())
	if got := chat.ClassOf(err); got != chat.ClassTooLarge {
		t.Fatalf("class = %q (%v), want too_large", got, err)
	}
}

func TestAnEndlessErrorBodyIsCutAndKeepsItsStatus(t *testing.T) {
	srv := oaitest.Server(t, func(w http.ResponseWriter, r *http.Request) {
		oaitest.Decode(r)
		w.WriteHeader(http.StatusInternalServerError)
		block := []byte(strings.Repeat("internal error ", 4096))
		for r.Context().Err() == nil {
			if _, err := w.Write(block); err != nil {
				return
			}
		}
	})
	c := New(Config{Name: "s", URL: srv.URL + "/v1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := c.Chat(ctx, hiRequest("m"))
	var e *chat.Error
	if !errors.As(err, &e) || e.Class != chat.ClassHTTP5xx || e.Status != 500 {
		t.Fatalf("got %v, want http_5xx with status 500", err)
	}
	if len(e.Message) > maxErrMessage+len("…") {
		t.Errorf("message of %d bytes, want it clipped to %d", len(e.Message), maxErrMessage)
	}
}

func TestANonStreamAnswerIsAnHTTPErrorThatQuotesIt(t *testing.T) {
	html := "<!DOCTYPE html>\n<html><head><title>Sign in to the proxy</title></head><body>" + strings.Repeat("<p>lorem</p>", 100) + "</body></html>"
	for _, tt := range []struct {
		name      string
		handler   http.HandlerFunc
		wantClass chat.ErrorClass
		wantIn    []string
	}{
		{"an HTML page", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, html)
		}, chat.ClassHTTP4xx, []string{"200", `"text/html; charset=utf-8"`, "<!DOCTYPE html> <html><head><title>Sign in"}},
		{"a 50 MB HTML page is not read whole", bigBody("text/html", "<html>", 50<<20, "<p>lorem</p>", "</html>"),
			chat.ClassHTTP4xx, []string{"text/html", "<html><p>lorem"}},
		{"plain text", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "Ollama is running")
		}, chat.ClassHTTP4xx, []string{`"text/plain"`, `"Ollama is running"`}},
		{"a JSON document, not a stream", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"id":"x","object":"chat.completion","choices":[]}`)
		}, chat.ClassHTTP4xx, []string{"application/json", "chat.completion"}},
		{"no Content-Type at all", func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Content-Type"] = nil
			fmt.Fprint(w, "hello")
		}, chat.ClassHTTP4xx, []string{"no Content-Type", `"hello"`}},
		// Still what they were: a stream that carried nothing may be a
		// hiccup, so these stay malformed (transient).
		{"an empty body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
		}, chat.ClassMalformed, []string{"empty response"}},
		{"a stream of comments only", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, ": ping\n\n: ping\n\n")
		}, chat.ClassMalformed, []string{"empty response"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var hits atomic.Int32
			srv := oaitest.Server(t, func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				oaitest.Decode(r)
				tt.handler(w, r)
			})
			c := New(Config{Name: "s", URL: srv.URL + "/v1"}, nil)
			_, err := c.Chat(context.Background(), hiRequest("m"))
			var e *chat.Error
			if !errors.As(err, &e) || e.Class != tt.wantClass {
				t.Fatalf("got %v, want class %s", err, tt.wantClass)
			}
			if tt.wantClass == chat.ClassHTTP4xx && (e.Class.Transient() || e.Status != 200) {
				t.Errorf("transient %v, status %d: want a non-transient error naming status 200", e.Class.Transient(), e.Status)
			}
			for _, want := range tt.wantIn {
				if !strings.Contains(e.Error(), want) {
					t.Errorf("error %q does not quote %q", e.Error(), want)
				}
			}
			if len(e.Message) > maxErrMessage+len(`…`)+200 {
				t.Errorf("message of %d bytes quotes too much", len(e.Message))
			}
			if hits.Load() != 1 {
				t.Errorf("the server was asked %d times, want once", hits.Load())
			}
		})
	}
}

func TestStallsAndSlowFirstBytesEndAsTimeouts(t *testing.T) {
	const limit = 150 * time.Millisecond
	for _, tt := range []struct {
		name        string
		cfg         Config
		handler     http.HandlerFunc
		wantClass   chat.ErrorClass
		wantMessage string
		wantContent string
	}{
		{"a stream that stops after its first token",
			Config{StallTimeout: limit},
			func(w http.ResponseWriter, r *http.Request) {
				oaitest.Stream(w, false, oaitest.Content("m", "Hel"))
				oaitest.Hang(r)
			}, chat.ClassTimeout, "stalled: nothing for 150ms", "Hel"},
		{"a server that never answers, with a first-byte limit",
			Config{FirstByteTimeout: limit},
			func(w http.ResponseWriter, r *http.Request) { oaitest.Hang(r) },
			chat.ClassTimeout, "no reply within 150ms", ""},
		{"headers, then nothing, with a first-byte limit",
			Config{FirstByteTimeout: limit},
			func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				w.(http.Flusher).Flush()
				oaitest.Hang(r)
			}, chat.ClassTimeout, "no reply within 150ms", ""},
		{"a long prefill is not a stall: the limit starts with the first token",
			Config{StallTimeout: limit},
			func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				w.(http.Flusher).Flush()
				time.Sleep(4 * limit)
				for _, e := range []string{oaitest.Content("m", "late but whole"), oaitest.Finish("m", "stop"), "[DONE]"} {
					fmt.Fprintf(w, "data: %s\n\n", e)
				}
			}, "", "", "late but whole"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := oaitest.Server(t, tt.handler)
			tt.cfg.Name, tt.cfg.URL = "s", srv.URL+"/v1"
			c := New(tt.cfg, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := c.Chat(ctx, hiRequest("m"))
			if got := chat.ClassOf(err); got != tt.wantClass {
				t.Fatalf("class = %q (%v), want %q", got, err, tt.wantClass)
			}
			if err != nil && !strings.Contains(err.Error(), tt.wantMessage) {
				t.Errorf("error %q does not say %q", err, tt.wantMessage)
			}
			if res.Content != tt.wantContent {
				t.Errorf("content = %q, want %q", res.Content, tt.wantContent)
			}
		})
	}
	oaitest.NoLeakedGoroutines(t)
}

func TestTheCallersCancelIsNotATimeout(t *testing.T) {
	sent := make(chan struct{})
	srv := oaitest.Server(t, func(w http.ResponseWriter, r *http.Request) {
		oaitest.Stream(w, false, oaitest.Content("m", "Hel"))
		close(sent)
		oaitest.Hang(r)
	})
	c := New(Config{Name: "s", URL: srv.URL + "/v1", StallTimeout: time.Hour, FirstByteTimeout: time.Hour}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-sent; cancel() }()
	_, err := c.Chat(ctx, hiRequest("m"))
	if got := chat.ClassOf(err); got != chat.ClassCanceled {
		t.Fatalf("class = %q (%v), want cancelled", got, err)
	}
}
