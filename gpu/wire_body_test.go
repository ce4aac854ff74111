package gpu

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"pitwall/gpu/chat"

	openai "github.com/sashabaranov/go-openai"
)

// goOpenAIBody is the body go-openai sent for r before pitwall encoded it
// itself: its json.Marshal, with "temperature" put after the opening brace
// when one was asked for (go-openai drops 0).
func goOpenAIBody(t *testing.T, r openai.ChatCompletionRequest, temp *float64) []byte {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if temp == nil {
		return b
	}
	field := `"temperature":` + strconv.FormatFloat(*temp, 'g', -1, 64)
	if len(b) > 2 {
		field += ","
	}
	return append([]byte("{"+field), b[1:]...)
}

// Texts of every escape encoding/json makes (HTML characters, control
// characters, invalid UTF-8, U+2028, the warning sign's selector): the
// quoting itself is chat's, fuzzed there; here they only need to appear
// in every field.
var awkwardTexts = []string{
	"", "plain", `quote " and \ backslash`, "<b>&amp;</b>", "tab\tnew\nline\rcarriage",
	"\x00\x01\x08\x0c\x1f\x7f", "bad \xff\xfe utf-8 \xc3", "sep \u2028 and \u2029", "⚠️ ✓ ❌ 日本語",
}

// randText is two of awkwardTexts, end to end.
func randText(rng *rand.Rand) string {
	return awkwardTexts[rng.IntN(len(awkwardTexts))] + awkwardTexts[rng.IntN(len(awkwardTexts))]
}

// randRequest is a chat request with every field toOpenAI translates set
// or left out at random.
func randRequest(rng *rand.Rand) chat.Request {
	models := []string{"m", "qwen3:0.6b", "o3-mini", "gpt-5", "o1", "llama <3> & co"}
	r := chat.Request{Model: models[rng.IntN(len(models))]}
	for range rng.IntN(4) {
		m := chat.Message{Role: []string{"system", "user", "assistant", "tool"}[rng.IntN(4)], Content: randText(rng)}
		if rng.IntN(4) == 0 {
			m.Name = randText(rng)
		}
		if rng.IntN(4) == 0 {
			m.ToolCallID = randText(rng)
		}
		for range rng.IntN(3) {
			m.ToolCalls = append(m.ToolCalls, chat.ToolCall{ID: randText(rng), Name: randText(rng), Arguments: randText(rng)})
		}
		r.Messages = append(r.Messages, m)
	}
	for range rng.IntN(3) {
		tool := chat.Tool{Function: chat.FunctionDef{Name: randText(rng), Description: randText(rng)}}
		if rng.IntN(2) == 0 {
			tool.Type = "function"
		}
		if rng.IntN(2) == 0 {
			tool.Function.Parameters = map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "string", "description": randText(rng)}}}
		}
		r.Tools = append(r.Tools, tool)
	}
	switch rng.IntN(4) {
	case 1:
		r.ToolChoice = "auto"
	case 2:
		r.ToolChoice = map[string]any{"type": "function", "function": map[string]any{"name": randText(rng)}}
	}
	switch rng.IntN(5) {
	case 1:
		r.ResponseFormat = &chat.ResponseFormat{Type: "json_object"}
	case 2:
		r.ResponseFormat = &chat.ResponseFormat{Type: "json_schema", Name: randText(rng), Strict: rng.IntN(2) == 0,
			Schema: map[string]any{"type": "object", "required": []any{"pass"}}}
	case 3:
		r.ResponseFormat = &chat.ResponseFormat{Type: "text"}
	}
	if rng.IntN(2) == 0 {
		temp := []float64{0, 0.7, 1, 1e-7, 2}[rng.IntN(5)]
		r.Temperature = &temp
	}
	if rng.IntN(2) == 0 {
		seed := rng.IntN(1<<40) - 1<<39
		r.Seed = &seed
	}
	if rng.IntN(2) == 0 {
		r.MaxTokens = rng.IntN(100000)
	}
	return r
}

// The body pitwall writes is, byte for byte, the one go-openai wrote with
// temperature put on the wire: every field toOpenAI sets, in every shape.
func TestChatBodyIsGoOpenAIs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 5000 {
		r := randRequest(rng)
		oreq, err := toOpenAI(r)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		got, err := appendChatBody(nil, &oreq, r.Temperature)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if want := goOpenAIBody(t, oreq, r.Temperature); !bytes.Equal(got, want) {
			t.Fatalf("request %d (%+v):\n got %s\nwant %s", i, r, got, want)
		}
		if !json.Valid(got) {
			t.Fatalf("request %d: not JSON: %s", i, got)
		}
		// toOpenAI sets no field appendChatBody leaves to go-openai.
		rest := oreq
		rest.Model, rest.Messages, rest.Stream, rest.StreamOptions = "", nil, false, nil
		//lint:ignore SA1019 the field appendChatBody writes for local servers
		rest.MaxTokens = 0
		rest.MaxCompletionTokens, rest.Seed, rest.Tools, rest.ToolChoice, rest.ResponseFormat = 0, nil, nil, nil, nil
		if v := reflect.ValueOf(rest); !v.IsZero() {
			t.Fatalf("request %d: toOpenAI set a field appendChatBody does not write: %+v", i, rest)
		}
	}
}

// A message with a field toOpenAI never sets (parts, a refusal, reasoning,
// a function call) is go-openai's to write, refusal of parts beside content
// included.
func TestChatBodyLeavesOtherMessagesToGoOpenAI(t *testing.T) {
	parts := []openai.ChatMessagePart{{Type: openai.ChatMessagePartTypeText, Text: "hi <there>"}}
	r := openai.ChatCompletionRequest{Model: "m", Stream: true, Messages: []openai.ChatCompletionMessage{
		{Role: "user", MultiContent: parts},
		{Role: "assistant", Content: "a", Refusal: "no", Name: "n", ReasoningContent: "hmm"},
		{Role: "assistant", FunctionCall: &openai.FunctionCall{Name: "f", Arguments: "{}"}, ToolCallID: "t"},
	}}
	got, err := appendChatBody(nil, &r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := goOpenAIBody(t, r, nil); !bytes.Equal(got, want) {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	r.Messages[0].Content = "both"
	if _, err := appendChatBody(nil, &r, nil); err == nil {
		t.Fatal("a message with content and parts both was encoded; go-openai refuses it")
	}
}

// Building a judge-sized request body: by hand against go-openai's
// json.Marshal and the copy that put temperature in front.
func BenchmarkChatBody(b *testing.B) {
	temp, seed := 0.0, 7
	r := chat.Request{Model: "judge", Temperature: &temp, Seed: &seed, MaxTokens: 512, Messages: []chat.Message{
		{Role: "system", Content: "You grade answers. Reply with JSON: {\"reason\": ..., \"pass\": true|false}."},
		{Role: "user", Content: string(bytes.Repeat([]byte("The question, the criteria and the reply to grade. "), 40))},
	}}
	oreq, err := toOpenAI(r)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("by-hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := appendChatBody(make([]byte, 0, chatBodySize(&oreq)), &oreq, &temp); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("go-openai", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			body, err := json.Marshal(oreq)
			if err != nil {
				b.Fatal(err)
			}
			out := make([]byte, 0, len(body)+16)
			out = append(append(append(out, '{'), `"temperature":0,`...), body[1:]...)
			_ = out
		}
	})
}

// What a server receives of a chat completion pitwall posts itself is
// what it received when go-openai posted it: method, path, query, every
// header, and the body (temperature aside, which go-openai drops at 0),
// with a key and without, on a base URL with a trailing slash and a query.
func TestChatIsPostedAsGoOpenAIPostedIt(t *testing.T) {
	type seen struct {
		method, path, query string
		header              http.Header
		body                []byte
	}
	var mu sync.Mutex
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), body})
		mu.Unlock()
		oaiReply(w, "m1", "Hello")
	}))
	defer srv.Close()
	seed := 3
	req := chat.Request{Model: "m1", Seed: &seed, MaxTokens: 9, Messages: []chat.Message{{Role: "user", Content: "hi <you> & \u2028"}}}
	for _, key := range []string{"", "sk-test"} {
		for _, base := range []string{srv.URL + "/v1", srv.URL + "/v1/", srv.URL + "/v1?api-version=1"} {
			got = nil
			c := NewClient(ServerConfig{Name: "s", URL: base, APIKey: key}, nil)
			if _, err := c.Chat(context.Background(), req); err != nil {
				t.Fatalf("%s: Chat: %v", base, err)
			}
			oreq, err := toOpenAI(req)
			if err != nil {
				t.Fatal(err)
			}
			stream, err := c.api.CreateChatCompletionStream(withCall(context.Background(), &callInfo{}), oreq)
			if err != nil {
				t.Fatalf("%s: go-openai: %v", base, err)
			}
			_, _ = io.Copy(io.Discard, &streamDrain{stream})
			_ = stream.Close()
			c.CloseIdleConnections()
			if len(got) != 2 {
				t.Fatalf("%s: the server saw %d requests, want 2", base, len(got))
			}
			ours, theirs := got[0], got[1]
			if !reflect.DeepEqual(ours, theirs) {
				t.Errorf("key %q, base %s:\npitwall   %s %s?%s %v\n%s\ngo-openai %s %s?%s %v\n%s", key, base,
					ours.method, ours.path, ours.query, ours.header, ours.body,
					theirs.method, theirs.path, theirs.query, theirs.header, theirs.body)
			}
		}
	}
}

// streamDrain reads a go-openai stream to its end.
type streamDrain struct{ s *openai.ChatCompletionStream }

func (d *streamDrain) Read(p []byte) (int, error) {
	if _, err := d.s.Recv(); err != nil {
		return 0, err
	}
	return 0, nil
}

// A reply that is not 2xx comes back as the error go-openai made of it: an
// *openai.APIError for OpenAI's shape (status and message), an
// *openai.RequestError holding the body for any other.
func TestChatErrorRepliesAreGoOpenAIs(t *testing.T) {
	for _, tt := range []struct {
		status int
		body   string
	}{
		{404, `{"error":{"message":"model \"m1\" not found","type":"invalid_request_error","code":"model_not_found"}}`},
		{400, `{"error":"model 'm1' not found"}`},
		{500, `Internal Server Error`},
		{429, `{"error":{"message":"slow down","code":429}}`},
		{503, ``},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(tt.status)
			fmt.Fprint(w, tt.body)
		}))
		c := NewClient(ServerConfig{Name: "s", URL: srv.URL + "/v1"}, nil)
		oreq, err := toOpenAI(hiRequest("m1"))
		if err != nil {
			t.Fatal(err)
		}
		resp, ours := c.postChat(context.Background(), &callInfo{}, &oreq, nil)
		if resp != nil {
			t.Fatalf("%d: a response came back with the error %v", tt.status, ours)
		}
		_, theirs := c.api.CreateChatCompletionStream(context.Background(), oreq)
		// Whole values (classify reads an APIError's type and code, a
		// RequestError's body), not their texts.
		if !reflect.DeepEqual(ours, theirs) {
			t.Errorf("%d %s:\npitwall   %T %#v\ngo-openai %T %#v", tt.status, tt.body, ours, ours, theirs, theirs)
		}
		c.CloseIdleConnections()
		srv.Close()
	}
}

// A 3xx the client did not follow (a 300, a 304, a redirect without a
// Location) is an error of its status, not a stream: there is no body to
// read (go-openai read it as one, and pitwall dereferenced the missing
// body). A 3xx that names a Location is followed, as before.
func TestAThreeHundredReplyIsAnError(t *testing.T) {
	for _, status := range []int{300, 302, 304} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
		}))
		c := NewClient(ServerConfig{Name: "s", URL: srv.URL + "/v1"}, nil)
		_, err := c.Chat(context.Background(), hiRequest("m1"))
		var ce *chat.Error
		if !errors.As(err, &ce) || ce.Status != status || ce.Class != chat.ClassHTTP4xx {
			t.Errorf("%d: error %#v, want a 4xx-class error of status %d", status, err, status)
		} else if !strings.Contains(ce.Message, "check the server's url") {
			t.Errorf("%d: message %q does not say what to change", status, ce.Message)
		}
		c.CloseIdleConnections()
		srv.Close()
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/chat/completions" {
			http.Redirect(w, r, "/v2/chat/completions", http.StatusTemporaryRedirect)
			return
		}
		oaiReply(w, "m1", "Hello")
	}))
	defer srv.Close()
	c := NewClient(ServerConfig{Name: "s", URL: srv.URL + "/v1"}, nil)
	defer c.CloseIdleConnections()
	if res, err := c.Chat(context.Background(), hiRequest("m1")); err != nil || res.Content != "Hello" {
		t.Errorf("a redirect with a Location: %q, %v; want it followed to Hello", res.Content, err)
	}
}

// A model named as one of OpenAI's retired completion models is sent (a
// local server may call its model anything), where go-openai refused it
// unsent; go-openai's reasoning-model checks still refuse what they
// refused, before anything is sent.
func TestChatChecksTheRequestAsGoOpenAIDidButForModelNames(t *testing.T) {
	srv, seen := recordingServer(t)
	c := NewClient(ServerConfig{Name: "s", URL: srv.URL + "/v1"}, nil)
	defer c.CloseIdleConnections()
	for _, model := range []string{"davinci", "text-davinci-003"} {
		if _, err := c.Chat(context.Background(), hiRequest(model)); err != nil {
			t.Errorf("%s: %v; want it sent", model, err)
		}
	}
	if n := len(seen()); n != 2 {
		t.Fatalf("the server saw %d requests, want 2", n)
	}
	req := hiRequest(openai.GPT6Astra)
	req.Tools = []chat.Tool{{Type: "function", Function: chat.FunctionDef{Name: "f"}}}
	_, err := c.Chat(context.Background(), req)
	if !errors.Is(err, openai.ErrReasoningToolsRequireResponses) || chat.ClassOf(err) != chat.ClassHTTP4xx {
		t.Errorf("%s with tools: %v; want go-openai's refusal, class 4xx", openai.GPT6Astra, err)
	}
	if n := len(seen()); n != 2 {
		t.Errorf("the server saw %d requests, want the refused one unsent", n)
	}
}
