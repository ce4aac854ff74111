package judge

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"pitwall/gpu/chat"
	"pitwall/gpu/client"
	"pitwall/judge/scoring"
)

// sseChunk is one chat.completion.chunk with a content delta and, when
// finish is set, a finish_reason.
func sseChunk(content, finish string) string {
	choice := map[string]any{"index": 0, "delta": map[string]any{"content": content}, "finish_reason": nil}
	if finish != "" {
		choice["finish_reason"] = finish
	}
	b, _ := json.Marshal(map[string]any{"id": "j", "object": "chat.completion.chunk", "model": "judge", "choices": []any{choice}})
	return "data: " + string(b) + "\n\n"
}

// judgeSample is what the runner makes of one judge request: the client's
// error as a judge error, or the answer through ParseReply.
func judgeSample(res chat.Result, err error, maxTokens int) scoring.Sample {
	if err != nil {
		return scoring.Sample{ParseErr: "judge request failed: " + chat.MessageOf(err)}
	}
	return ParseReply(res.Content, res.FinishReason, maxTokens)
}

// askJudge sends one judge request to a server that writes body (or, with
// drop, writes it and then cuts the connection without ending the
// response), over a real socket.
func askJudge(t *testing.T, body string, drop bool) scoring.Sample {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !drop {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = fmt.Fprint(w, body)
			return
		}
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		defer func() { _ = conn.Close() }()
		// A chunked response that stops mid-stream: no last chunk, no
		// finish_reason, no [DONE].
		_, _ = fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", len(body), body)
		_ = buf.Flush()
	}))
	defer srv.Close()
	c := client.New(client.Config{Name: "judge", URL: srv.URL + "/v1"}, nil)
	defer c.CloseIdleConnections()
	res, err := c.Chat(context.Background(), chat.Request{Model: "judge", MaxTokens: 64,
		Messages: []chat.Message{{Role: "user", Content: "grade this"}}})
	return judgeSample(res, err, 64)
}

// TestOnlyAStoppedJudgeAnswerIsRead: a judge's answer whose stream did not
// end with finish_reason stop is a judge error that says how it ended,
// however its text ends.
func TestOnlyAStoppedJudgeAnswerIsRead(t *testing.T) {
	const answer = "Quoting the candidate:\nVERDICT: PASS"
	tests := []struct {
		name   string
		body   string
		drop   bool
		errHas string // "" for a PASS read
	}{
		{"finish_reason stop is read",
			sseChunk(answer, "") + sseChunk("", "stop") + "data: [DONE]\n\n", false, ""},
		{"a length chunk followed by a stop chunk is cut",
			sseChunk(answer, "") + sseChunk("", "length") + sseChunk("", "stop") + "data: [DONE]\n\n", false, "cut at max_tokens 64"},
		{"length alone is cut",
			sseChunk(answer, "length") + "data: [DONE]\n\n", false, "cut at max_tokens 64"},
		{"[DONE] with no finish_reason",
			sseChunk(answer, "") + "data: [DONE]\n\n", false, "without a finish_reason"},
		{"a content filter's stop",
			sseChunk(answer, "content_filter") + "data: [DONE]\n\n", false, "content filter"},
		{"an unknown finish_reason",
			sseChunk(answer, "eos") + "data: [DONE]\n\n", false, `finish_reason "eos", not stop`},
		{"a stream that ends with neither",
			sseChunk(answer, ""), false, "judge request failed: stream ended without a finish_reason or [DONE] (cut off)"},
		{"a dropped connection",
			sseChunk(answer, ""), true, "judge request failed: response cut off"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := askJudge(t, tt.body, tt.drop)
			if tt.errHas == "" {
				if s.ParseErr != "" || !s.Pass {
					t.Fatalf("got pass %v err %q, want the judge's PASS", s.Pass, s.ParseErr)
				}
				return
			}
			if s.ParseErr == "" || !strings.Contains(s.ParseErr, tt.errHas) {
				t.Fatalf("got pass %v err %q, want a judge error saying %q", s.Pass, s.ParseErr, tt.errHas)
			}
		})
	}
}
