// Package oaitest is what the tests of gpu and its client and probe share:
// a fake OpenAI-compatible server (just enough SSE to stand in for a real
// one, over real sockets), a goroutine-leak check, and planted credentials
// with the means to find them where they must not be. Only tests import it.
package oaitest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"pitwall/gpu/chat"
)

// Content renders one chat.completion.chunk with a content delta.
func Content(model, text string) string {
	return fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","model":%q,"choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}]}`, model, text)
}

func Delta(model, delta string) string {
	return fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","model":%q,"choices":[{"index":0,"delta":%s,"finish_reason":null}]}`, model, delta)
}

func Finish(model, reason string) string {
	return fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","model":%q,"choices":[{"index":0,"delta":{},"finish_reason":%q}]}`, model, reason)
}

func Usage(model string, prompt, completion int) string {
	return fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","model":%q,"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`,
		model, prompt, completion, prompt+completion)
}

// Stream writes SSE events, flushing each, and [DONE] when done is true.
func Stream(w http.ResponseWriter, done bool, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	for _, e := range events {
		fmt.Fprintf(w, "data: %s\n\n", e)
		if fl != nil {
			fl.Flush()
		}
	}
	if done {
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
}

// Reply streams a complete, well-formed answer of content for model.
func Reply(w http.ResponseWriter, model, content string) {
	Stream(w, true, Content(model, content), Finish(model, "stop"), Usage(model, 10, 3))
}

// Body is the part of a chat request the fakes look at.
type Body struct {
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
	Messages  []struct {
		Content string `json:"content"`
	} `json:"messages"`
}

// Decode reads the whole body, so that net/http notices when the client
// goes away (a handler may then wait on r.Context()).
func Decode(r *http.Request) Body {
	var b Body
	raw, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(raw, &b)
	return b
}

// Hang holds the request open until the client goes away. It reads the
// body first: until it has, net/http cannot notice the client leaving.
func Hang(r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	<-r.Context().Done()
}

// Models answers GET /v1/models with ids.
func Models(w http.ResponseWriter, ids ...string) {
	var data []string
	for _, id := range ids {
		data = append(data, fmt.Sprintf(`{"id":%q,"object":"model","owned_by":"test"}`, id))
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"object":"list","data":[%s]}`, strings.Join(data, ","))
}

// Server starts an httptest server whose /v1/chat/completions is chat
// and whose /v1/models lists models; it is closed when the test ends.
func Server(t testing.TB, chat http.HandlerFunc, models ...string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	if chat != nil {
		mux.HandleFunc("POST /v1/chat/completions", chat)
	}
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) { Models(w, models...) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// NoLeakedGoroutines fails the test if goroutines running the fleet's or
// the client's code are still alive once they have had a chance to end.
func NoLeakedGoroutines(t *testing.T) {
	t.Helper()
	var stacks string
	// A goroutine's end sends no event: poll, with room for a loaded machine.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		buf := make([]byte, 1<<20)
		stacks = string(buf[:runtime.Stack(buf, true)])
		if !ownGoroutines(stacks) {
			return
		}
		// Goroutines that have called wg.Done may still be unwinding: let them.
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("goroutines of the fleet are still running:\n%s", stacks)
}

func ownGoroutines(stacks string) bool {
	for _, g := range strings.Split(stacks, "\n\n") {
		for _, fn := range []string{"gpu.(*Fleet).", "client.(*Client).", "client.(*hookTransport)."} {
			if strings.Contains(g, fn) {
				return true
			}
		}
	}
	return false
}

// Error answers with status and body as the content type says.
func Error(status int, contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}
}

// ClosedURL is the URL of a listener that has been closed: nothing answers.
func ClosedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/v1"
}

// BenchStream is one streamed completion of about 50 chunks, as a local
// server would send it.
func BenchStream(model string) string {
	var b strings.Builder
	for i := range 48 {
		fmt.Fprintf(&b, "data: %s\n\n", Content(model, fmt.Sprintf("tok%d ", i)))
	}
	fmt.Fprintf(&b, "data: %s\n\n", Finish(model, "stop"))
	fmt.Fprintf(&b, "data: %s\n\n", Usage(model, 30, 48))
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

// Distinctive secrets, planted where a user might write them; none may
// come back in anything a caller can print or store.
const (
	PlantedPassword = "PW-Planted-7f3a"
	PlantedQueryKey = "QK-Planted-91bc"
	PlantedAPIKey   = "sk-Planted-API-key-4d2e"
	PlantedCode     = "CODE-Planted-azfn-22d1" // Azure Functions' ?code=
	PlantedPass     = "PASS-Planted-gw-6e0f"   // a gateway's ?pass=
)

var Planted = []string{PlantedPassword, PlantedQueryKey, PlantedAPIKey, PlantedCode, PlantedPass}

// SecretURL is base with a password and keys in its query written into it,
// beside the api-version that may be shown.
func SecretURL(t *testing.T, base string) string {
	t.Helper()
	return strings.Replace(base, "http://", "http://alice:"+PlantedPassword+"@", 1) +
		"?api-version=2024-10-21&key=" + PlantedQueryKey + "&code=" + PlantedCode + "&pass=" + PlantedPass
}

// Leaks lists the Planted secrets found in any of texts.
func Leaks(texts ...string) []string {
	var found []string
	for _, s := range Planted {
		for _, text := range texts {
			if strings.Contains(text, s) {
				found = append(found, fmt.Sprintf("%q in %q", s, text))
			}
		}
	}
	return found
}

// ErrorTexts is every text a caller can get out of err: its message, the
// classified error's fields and each error it wraps, down to the last.
func ErrorTexts(err error) []string {
	var out []string
	for e := err; e != nil; e = errors.Unwrap(e) {
		out = append(out, e.Error(), fmt.Sprintf("%+v", e))
	}
	var ce *chat.Error
	if errors.As(err, &ce) {
		out = append(out, ce.Message, chat.MessageOf(err))
	}
	return out
}

// Seen is what the recording server was asked.
type Seen struct {
	Method, Path, Query string
	Body                []byte
}

func (r Seen) String() string { return r.Method + " " + r.Path + "?" + r.Query }

// RecordingServer answers the endpoints pitwall calls just enough for each
// call to go on, and 404 for the backends' own endpoints (so that kind
// detection asks every one of them), recording each request as it arrived.
func RecordingServer(t *testing.T) (*httptest.Server, func() []Seen) {
	t.Helper()
	var mu sync.Mutex
	var seen []Seen
	batch := func(status string) string {
		return fmt.Sprintf(`{"id":"b1","object":"batch","endpoint":"/v1/chat/completions","input_file_id":"file-1","completion_window":"24h","status":%q,"created_at":1700000000}`, status)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, Seen{r.Method, r.URL.Path, r.URL.RawQuery, body})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.Method + " " + r.URL.Path {
		case "POST /v1/chat/completions":
			Reply(w, "m1", "Hello")
		case "GET /v1/models":
			Models(w, "m1")
		case "POST /v1/files":
			fmt.Fprint(w, `{"id":"file-1","object":"file","purpose":"batch","filename":"pitwall-batch.jsonl","bytes":3}`)
		case "POST /v1/batches":
			fmt.Fprint(w, batch("validating"))
		case "GET /v1/batches":
			fmt.Fprintf(w, `{"object":"list","data":[%s],"has_more":false}`, batch("completed"))
		case "GET /v1/batches/b1":
			fmt.Fprint(w, batch("in_progress"))
		case "POST /v1/batches/b1/cancel":
			fmt.Fprint(w, batch("cancelling"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func() []Seen {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}
