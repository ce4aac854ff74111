package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"pitwall/gpu/chat"
	"pitwall/internal/oaitest"

	openai "github.com/sashabaranov/go-openai"
)

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
		oaitest.Reply(w, "m1", "Hello")
	}))
	defer srv.Close()
	seed := 3
	req := chat.Request{Model: "m1", Seed: &seed, MaxTokens: 9, Messages: []chat.Message{{Role: "user", Content: "hi <you> & \u2028"}}}
	for _, key := range []string{"", "sk-test"} {
		for _, base := range []string{srv.URL + "/v1", srv.URL + "/v1/", srv.URL + "/v1?api-version=1"} {
			got = nil
			c := New(Config{Name: "s", URL: base, APIKey: key}, nil)
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
		c := New(Config{Name: "s", URL: srv.URL + "/v1"}, nil)
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
// body). A 3xx that names a Location is not followed either: a chat's
// body is not sent again, even on its own host
// (TestARedirectOfAChatOnTheSameHostIsNotFollowed, redirect_test.go).
func TestAThreeHundredReplyIsAnError(t *testing.T) {
	for _, status := range []int{300, 302, 304} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
		}))
		c := New(Config{Name: "s", URL: srv.URL + "/v1"}, nil)
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
}

// A model named as one of OpenAI's retired completion models is sent (a
// local server may call its model anything), where go-openai refused it
// unsent; go-openai's reasoning-model checks still refuse what they
// refused, before anything is sent.
func TestChatChecksTheRequestAsGoOpenAIDidButForModelNames(t *testing.T) {
	srv, seen := oaitest.RecordingServer(t)
	c := New(Config{Name: "s", URL: srv.URL + "/v1"}, nil)
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
