package gpu

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
)

// This file holds a fake OpenAI-compatible server for the client and fleet
// tests: just enough SSE to stand in for a real one, over real sockets.

// oaiContent renders one chat.completion.chunk with a content delta.
func oaiContent(model, text string) string {
	return fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","model":%q,"choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}]}`, model, text)
}

func oaiDelta(model, delta string) string {
	return fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","model":%q,"choices":[{"index":0,"delta":%s,"finish_reason":null}]}`, model, delta)
}

func oaiFinish(model, reason string) string {
	return fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","model":%q,"choices":[{"index":0,"delta":{},"finish_reason":%q}]}`, model, reason)
}

func oaiUsage(model string, prompt, completion int) string {
	return fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","model":%q,"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`,
		model, prompt, completion, prompt+completion)
}

// oaiStream writes SSE events, flushing each, and [DONE] when done is true.
func oaiStream(w http.ResponseWriter, done bool, events ...string) {
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

// oaiReply streams a complete, well-formed answer of content for model.
func oaiReply(w http.ResponseWriter, model, content string) {
	oaiStream(w, true, oaiContent(model, content), oaiFinish(model, "stop"), oaiUsage(model, 10, 3))
}

// oaiBody is the part of a chat request the fakes look at.
type oaiBody struct {
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
	Messages  []struct {
		Content string `json:"content"`
	} `json:"messages"`
}

// oaiDecode reads the whole body, so that net/http notices when the client
// goes away (a handler may then wait on r.Context()).
func oaiDecode(r *http.Request) oaiBody {
	var b oaiBody
	raw, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(raw, &b)
	return b
}

// oaiHang holds the request open until the client goes away. It reads the
// body first: until it has, net/http cannot notice the client leaving.
func oaiHang(r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	<-r.Context().Done()
}

// oaiModels answers GET /v1/models with ids.
func oaiModels(w http.ResponseWriter, ids ...string) {
	var data []string
	for _, id := range ids {
		data = append(data, fmt.Sprintf(`{"id":%q,"object":"model","owned_by":"test"}`, id))
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"object":"list","data":[%s]}`, strings.Join(data, ","))
}

// oaiServer starts an httptest server whose /v1/chat/completions is chat
// and whose /v1/models lists models; it is closed when the test ends.
func oaiServer(t testing.TB, chat http.HandlerFunc, models ...string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	if chat != nil {
		mux.HandleFunc("POST /v1/chat/completions", chat)
	}
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) { oaiModels(w, models...) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// noLeakedGoroutines fails the test if goroutines running the fleet's or
// the client's code are still alive once they have had a chance to end.
func noLeakedGoroutines(t *testing.T) {
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
		for _, fn := range []string{"gpu.(*Fleet).", "gpu.(*Client).", "gpu.(*hookTransport)."} {
			if strings.Contains(g, fn) {
				return true
			}
		}
	}
	return false
}
