package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"pitwall/gpu/chat"
)

// bodyTransport answers every request with 200 and body, as an event
// stream, without a network: go-openai's reader then reads exactly body.
type bodyTransport struct{ body string }

func (t bodyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(strings.NewReader(t.body)), Request: req}, nil
}

// readBoth reads body with go-openai's stream reader and with sseLines,
// and says what each read: the payloads, then how it ended.
func readBoth(t *testing.T, body string, limit uint) (theirs, ours []string) {
	t.Helper()
	oc := openai.DefaultConfig("")
	oc.BaseURL = "http://x/v1"
	oc.HTTPClient = &http.Client{Transport: bodyTransport{body}}
	oc.EmptyMessagesLimit = limit
	stream, err := openai.NewClientWithConfig(oc).CreateChatCompletionStream(context.Background(),
		openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}})
	if err != nil {
		t.Fatalf("go-openai: %v", err)
	}
	defer stream.Close()
	for {
		raw, err := stream.RecvRaw()
		if err != nil {
			theirs = append(theirs, "end: "+endOf(err))
			break
		}
		theirs = append(theirs, string(raw)) // nil: an empty payload ("data:"), or an unreadable error line
	}
	s := newSSELines(strings.NewReader(body), limit)
	for {
		raw, err := s.next()
		if err != nil {
			ours = append(ours, "end: "+endOf(err))
			break
		}
		ours = append(ours, string(raw))
	}
	return theirs, ours
}

func endOf(err error) string {
	var api *openai.APIError
	var ce *chat.Error
	switch {
	case errors.As(err, &ce) && ce.Class == chat.ClassMalformed:
		return "unreadable error line"
	case errors.Is(err, io.EOF):
		return "EOF"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "unexpected EOF"
	case errors.Is(err, openai.ErrTooManyEmptyStreamMessages):
		return "too many empty"
	case errors.As(err, &api):
		return fmt.Sprintf("api error %v %q", api.Code, api.Message)
	}
	return "other: " + err.Error()
}

var sseBodies = map[string]string{
	"plain":              "data: {\"a\":1}\n\ndata: {\"a\":2}\n\ndata: [DONE]\n\n",
	"no space, CRLF":     "data:{\"a\":1}\r\n\r\ndata:\t {\"a\":2}\r\n\r\ndata: [DONE]\r\n",
	"comments and event": ": keep-alive\n\nevent: message\ndata: {\"a\":1}\n\n: ping\ndata:  [DONE]  \n",
	"no [DONE]":          "data: {\"a\":1}\n\n",
	"last line cut":      "data: {\"a\":1}\n\ndata: {\"a\":2}",
	"empty":              "",
	"error mid-stream":   "data: {\"a\":1}\n\ndata: {\"error\":{\"message\":\"boom\",\"type\":\"server_error\",\"code\":500}}\n\n",
	"error body as text": "{\"error\": {\n  \"message\": \"model not loaded\",\n  \"code\": \"model_not_found\"\n}}\n",
	"html":               "<html>\n<body>login</body>\n</html>\n",
	"long line":          "data: {\"a\":\"" + strings.Repeat("x", 100<<10) + "\"}\n\ndata: [DONE]\n\n",
	"data inside text":   "data: {\"c\":\"data: [DONE]\"}\n\ndata: [DONE]\n",
	"many comments":      strings.Repeat(": k\n", 20) + "data: {\"a\":1}\n\n" + strings.Repeat(": k\n", 20) + "data: [DONE]\n",
}

// sseLines reads what go-openai's stream reader reads, line for line, and
// ends the same way.
func TestSSELinesReadAsGoOpenAIReads(t *testing.T) {
	for name, body := range sseBodies {
		for _, limit := range []uint{300, 5} {
			theirs, ours := readBoth(t, body, limit)
			if fmt.Sprint(theirs) != fmt.Sprint(ours) {
				t.Errorf("%s (limit %d):\ngo-openai %.300q\nsseLines  %.300q", name, limit, theirs, ours)
			}
		}
	}
}

// Where go-openai's reader would hand back nothing and no error (a line
// that starts like an error but is not one), sseLines fails the reply as
// malformed, quoting the line, even after a finish_reason: an error the
// server meant to send is never a clean end.
func TestSSELinesFailAtAnUnreadableErrorLine(t *testing.T) {
	for _, body := range []string{
		"data: {\"error\": oops\n\ndata: {\"a\":1}\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: {\"error\": \"overloaded\"}\n\n",
	} {
		s := newSSELines(strings.NewReader(body), 300)
		var err error
		for err == nil {
			_, err = s.next()
		}
		var ce *chat.Error
		if !errors.As(err, &ce) || ce.Class != chat.ClassMalformed || !strings.Contains(ce.Message, "error") {
			t.Errorf("%q ends %v; want a malformed reply quoting the line", body, err)
		}
	}
}

func FuzzSSELinesReadAsGoOpenAIReads(f *testing.F) {
	for _, body := range sseBodies {
		if len(body) < 4096 {
			f.Add(body)
		}
	}
	f.Fuzz(func(t *testing.T, body string) {
		theirs, ours := readBoth(t, body, 8)
		if len(ours) > 0 && ours[len(ours)-1] == "end: unreadable error line" {
			return // where go-openai gave nothing, or an end: TestSSELinesFailAtAnUnreadableErrorLine
		}
		if fmt.Sprint(theirs) != fmt.Sprint(ours) {
			t.Errorf("body %q:\ngo-openai %q\nsseLines  %q", body, theirs, ours)
		}
	})
}

// The payload is a slice of the reader's buffer: reading a stream costs no
// allocation per line.
func BenchmarkSSELines(b *testing.B) {
	var body bytes.Buffer
	for range 64 {
		body.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" token"},"finish_reason":null}]}` + "\n\n")
	}
	body.WriteString("data: [DONE]\n\n")
	raw := body.Bytes()
	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		s := newSSELines(bytes.NewReader(raw), 300)
		for {
			if _, err := s.next(); err != nil {
				break
			}
		}
	}
}
