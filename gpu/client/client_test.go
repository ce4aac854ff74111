package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"pitwall/gpu/chat"
	"pitwall/internal/oaitest"
)

func valuePtr[T any](v T) *T { return &v }

// sentRequest is what the fake server received.
type sentRequest struct {
	body []byte
	auth string
}

func TestChatPutsRequestOnTheWireAsAsked(t *testing.T) {
	weather := chat.Tool{Type: "function", Function: chat.FunctionDef{
		Name: "get_weather", Description: "Weather for a city",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{
			// A tool parameter named like the sampling field: must be left alone.
			"temperature": map[string]any{"type": "string"},
		}},
	}}
	schema := map[string]any{"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string"}}}
	base := func(r chat.Request) chat.Request {
		r.Model = "qwen3-8b"
		r.Messages = []chat.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Hi"}}
		return r
	}
	tests := []struct {
		name   string
		key    string
		req    chat.Request
		want   map[string]any // top-level fields that must arrive with these values
		absent []string       // top-level fields that must not arrive
	}{
		{
			name:   "temperature 0 is sent although go-openai would drop it",
			req:    base(chat.Request{Temperature: valuePtr(0.0)}),
			want:   map[string]any{"temperature": 0.0, "stream": true, "stream_options": map[string]any{"include_usage": true}},
			absent: []string{"seed", "max_tokens", "tools", "tool_choice", "response_format"},
		},
		{
			name:   "no temperature is sent when none is asked for",
			req:    base(chat.Request{}),
			absent: []string{"temperature"},
		},
		{
			name: "temperature, seed and max_tokens arrive exactly",
			req:  base(chat.Request{Temperature: valuePtr(0.7), Seed: valuePtr(42), MaxTokens: 64}),
			want: map[string]any{"temperature": 0.7, "seed": 42.0, "max_tokens": 64.0},
		},
		{
			name: "tools and a string tool_choice arrive as sent",
			req:  base(chat.Request{Tools: []chat.Tool{weather}, ToolChoice: "required", Temperature: valuePtr(0.0)}),
			want: map[string]any{
				"tool_choice": "required",
				"tools": []any{map[string]any{"type": "function", "function": map[string]any{
					"name": "get_weather", "description": "Weather for a city",
					"parameters": map[string]any{"type": "object", "properties": map[string]any{
						"temperature": map[string]any{"type": "string"}}},
				}}},
				"temperature": 0.0,
			},
		},
		{
			name: "a tool_choice naming a function arrives as an object",
			req: base(chat.Request{Tools: []chat.Tool{weather},
				ToolChoice: map[string]any{"type": "function", "function": map[string]any{"name": "get_weather"}}}),
			want: map[string]any{"tool_choice": map[string]any{"type": "function", "function": map[string]any{"name": "get_weather"}}},
		},
		{
			name: "json_object response_format",
			req:  base(chat.Request{ResponseFormat: &chat.ResponseFormat{Type: "json_object"}}),
			want: map[string]any{"response_format": map[string]any{"type": "json_object"}},
		},
		{
			name: "json_schema response_format carries the schema",
			req:  base(chat.Request{ResponseFormat: &chat.ResponseFormat{Type: "json_schema", Name: "answer", Schema: schema, Strict: true}}),
			want: map[string]any{"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{
				"name": "answer", "schema": schema, "strict": true}}},
		},
	}
	for _, tt := range tests {
		for _, key := range []string{"", "sk-test"} {
			t.Run(tt.name+"/key="+key, func(t *testing.T) {
				got := make(chan sentRequest, 1)
				srv := oaitest.Server(t, func(w http.ResponseWriter, r *http.Request) {
					b, _ := io.ReadAll(r.Body)
					got <- sentRequest{body: b, auth: r.Header.Get("Authorization")}
					oaitest.Reply(w, "qwen3-8b", "Hello")
				})
				c := New(Config{Name: "gpu0", URL: srv.URL + "/v1", APIKey: key}, nil)
				defer c.CloseIdleConnections()
				if _, err := c.Chat(context.Background(), tt.req); err != nil {
					t.Fatalf("Chat: %v", err)
				}
				s := <-got
				var body map[string]any
				if err := json.Unmarshal(s.body, &body); err != nil {
					t.Fatalf("request body is not JSON: %v\n%s", err, s.body)
				}
				for k, v := range tt.want {
					if !reflect.DeepEqual(body[k], jsonShape(t, v)) {
						t.Errorf("%s = %#v, want %#v\nbody: %s", k, body[k], v, s.body)
					}
				}
				for _, k := range tt.absent {
					if _, ok := body[k]; ok {
						t.Errorf("%s sent, want it absent\nbody: %s", k, s.body)
					}
				}
				if body["model"] != "qwen3-8b" || len(body["messages"].([]any)) != 2 {
					t.Errorf("model or messages wrong: %s", s.body)
				}
				if tt.req.Temperature != nil && *tt.req.Temperature == 0 && !bytes.Contains(s.body, []byte(`"temperature":0`)) {
					t.Errorf(`body lacks "temperature":0: %s`, s.body)
				}
				wantAuth := ""
				if key != "" {
					wantAuth = "Bearer " + key
				}
				if s.auth != wantAuth {
					t.Errorf("Authorization = %q, want %q", s.auth, wantAuth)
				}
			})
		}
	}
}

// jsonShape gives v the shape encoding/json decodes it to.
func jsonShape(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestChatAssemblesTheStream(t *testing.T) {
	const model = "qwen3-8b-q4"
	tests := []struct {
		name   string
		events []string
		done   bool
		want   chat.Result
	}{
		{
			name: "content, reasoning_content and usage",
			events: []string{
				oaitest.Delta(model, `{"role":"assistant","content":""}`),
				oaitest.Delta(model, `{"reasoning_content":"Think "}`),
				oaitest.Delta(model, `{"reasoning_content":"hard."}`),
				oaitest.Content(model, "The answer "), oaitest.Content(model, "is 4."),
				oaitest.Finish(model, "stop"), oaitest.Usage(model, 21, 7),
			},
			done: true,
			want: chat.Result{Model: model, Content: "The answer is 4.", Reasoning: "Think hard.", FinishReason: "stop",
				PromptTokens: 21, CompletionTokens: 7},
		},
		{
			name: "the reasoning field some servers use instead",
			events: []string{
				oaitest.Delta(model, `{"reasoning":"Hmm."}`), oaitest.Content(model, "Yes."), oaitest.Finish(model, "stop"), oaitest.Usage(model, 5, 2),
			},
			done: true,
			want: chat.Result{Model: model, Content: "Yes.", Reasoning: "Hmm.", FinishReason: "stop", PromptTokens: 5, CompletionTokens: 2},
		},
		{
			name: "two tool calls interleaved by index",
			events: []string{
				oaitest.Delta(model, `{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}]}`),
				oaitest.Delta(model, `{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"get_time","arguments":"{\"tz\":"}}]}`),
				oaitest.Delta(model, `{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}`),
				oaitest.Delta(model, `{"tool_calls":[{"index":0,"function":{"arguments":"\"Oslo\"}"}}]}`),
				oaitest.Delta(model, `{"tool_calls":[{"index":1,"function":{"arguments":"\"UTC\"}"}}]}`),
				oaitest.Finish(model, "tool_calls"), oaitest.Usage(model, 40, 12),
			},
			done: true,
			want: chat.Result{Model: model, FinishReason: "tool_calls", PromptTokens: 40, CompletionTokens: 12,
				ToolCalls: []chat.ToolCall{
					{ID: "call_a", Name: "get_weather", Arguments: `{"city":"Oslo"}`},
					{ID: "call_b", Name: "get_time", Arguments: `{"tz":"UTC"}`},
				}},
		},
		{
			name: "tool call deltas without index continue the call their id names",
			events: []string{
				oaitest.Delta(model, `{"tool_calls":[{"id":"call_a","type":"function","function":{"name":"lookup","arguments":"{\"q\":"}}]}`),
				oaitest.Delta(model, `{"tool_calls":[{"function":{"arguments":"\"go\"}"}}]}`),
				oaitest.Finish(model, "tool_calls"),
			},
			done: true,
			want: chat.Result{Model: model, FinishReason: "tool_calls", CompletionTokens: 2,
				ToolCalls: []chat.ToolCall{{ID: "call_a", Name: "lookup", Arguments: `{"q":"go"}`}}},
		},
		{
			name:   "no usage: completion tokens are estimated from the chunks",
			events: []string{oaitest.Content(model, "a"), oaitest.Content(model, "b"), oaitest.Content(model, "c"), oaitest.Finish(model, "length")},
			done:   true,
			want:   chat.Result{Model: model, Content: "abc", FinishReason: "length", CompletionTokens: 3},
		},
		{
			name:   "a length chunk is not undone by a later stop: the answer was cut",
			events: []string{oaitest.Content(model, "VERDICT: PASS"), oaitest.Finish(model, "length"), oaitest.Finish(model, "stop")},
			done:   true,
			want:   chat.Result{Model: model, Content: "VERDICT: PASS", FinishReason: "length", CompletionTokens: 1},
		},
		{
			name:   "finish_reason without [DONE] is a whole answer",
			events: []string{oaitest.Content(model, "ok"), oaitest.Finish(model, "stop")},
			want:   chat.Result{Model: model, Content: "ok", FinishReason: "stop", CompletionTokens: 1},
		},
		{
			name:   "[DONE] without finish_reason is a whole answer",
			events: []string{oaitest.Content(model, "ok")},
			done:   true,
			want:   chat.Result{Model: model, Content: "ok", CompletionTokens: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := oaitest.Server(t, func(w http.ResponseWriter, r *http.Request) { oaitest.Stream(w, tt.done, tt.events...) })
			c := New(Config{Name: "gpu0", URL: srv.URL + "/v1"}, nil)
			defer c.CloseIdleConnections()
			got, err := c.Chat(context.Background(), chat.Request{Model: "qwen3-8b", Messages: []chat.Message{{Role: "user", Content: "2+2?"}}})
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			if got.TTFT <= 0 || got.Latency < got.TTFT {
				t.Errorf("TTFT %v, latency %v: want 0 < TTFT <= latency", got.TTFT, got.Latency)
			}
			tt.want.Server = "gpu0"
			got.TTFT, got.Latency, got.TokensPerSec = 0, 0, 0
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestModelsListsWhatTheServerOffers(t *testing.T) {
	srv := oaitest.Server(t, nil, "qwen3-8b", "gemma-3-12b")
	c := New(Config{Name: "gpu0", URL: srv.URL + "/v1/"}, nil)
	defer c.CloseIdleConnections()
	got, err := c.Models(context.Background())
	if err != nil {
		t.Fatalf("Models: %v", err)
	}
	if want := []string{"qwen3-8b", "gemma-3-12b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Models = %v, want %v", got, want)
	}
}

func TestTokensPerSec(t *testing.T) {
	tests := []struct {
		name   string
		tokens int
		decode time.Duration
		want   float64
	}{
		{"tokens after the first over the decode time", 101, 2 * time.Second, 50},
		{"one token: nothing decoded after it", 1, time.Second, 0},
		{"a decode too short to measure", 10, 49 * time.Millisecond, 0},
		{"no tokens", 0, time.Second, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tokensPerSec(tt.tokens, tt.decode); got != tt.want {
				t.Errorf("tokensPerSec = %v, want %v", got, tt.want)
			}
		})
	}
}

// paced streams n content chunks, gap apart after a prefill pause, then a
// usage chunk saying n completion tokens; n = 1 with tokens > 1 is a reply
// whose every token came in one chunk.
func paced(prefill, gap time.Duration, chunks, tokens int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		oaitest.Decode(r)
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		time.Sleep(prefill)
		for i := range chunks {
			if i > 0 {
				time.Sleep(gap)
			}
			fmt.Fprintf(w, "data: %s\n\n", oaitest.Content("m", "tok "))
			fl.Flush()
		}
		fmt.Fprintf(w, "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[],"+
			"\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\ndata: [DONE]\n\n", tokens, tokens+5)
	}
}

// tokens/s is decode throughput as measured: a reply that came in one
// chunk has none (its latency is its prefill), one whose chunks were spread
// has the tokens after the first over the time after the first token.
func TestTokensPerSecIsMeasuredOnlyOverADecode(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name             string
		handler          http.HandlerFunc
		wantLo, wantHigh float64
	}{
		{"all tokens in one chunk after a long prefill", paced(300*time.Millisecond, 0, 1, 40), 0, 0},
		{"chunks spread over a decode", paced(300*time.Millisecond, 20*time.Millisecond, 11, 11), 10 / 0.4, 10 / 0.19},
		{"two chunks too close together", paced(100*time.Millisecond, time.Millisecond, 2, 30), 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			c := New(Config{Name: "gpu0", URL: srv.URL + "/v1"}, nil)
			defer c.CloseIdleConnections()
			res, err := c.Chat(context.Background(), hiRequest("m"))
			if err != nil {
				t.Fatal(err)
			}
			if res.TokensPerSec < tt.wantLo || res.TokensPerSec > tt.wantHigh {
				t.Errorf("tokens/s %.1f (latency %v, TTFT %v, %d tokens); want between %.1f and %.1f",
					res.TokensPerSec, res.Latency, res.TTFT, res.CompletionTokens, tt.wantLo, tt.wantHigh)
			}
		})
	}
}

func TestDoneWatcherSeesTheMarkAcrossReads(t *testing.T) {
	stream := "data: {\"x\":1}\n\ndata: [DONE]\n\n"
	for split := range len(stream) {
		for _, rest := range []int{1, 3, 64} {
			c := &callInfo{}
			w := &replyBody{ReadCloser: io.NopCloser(&pieceReader{s: stream, first: split, size: rest}), c: c, ok: true, limit: 1 << 20}
			if _, err := io.ReadAll(w); err != nil {
				t.Fatal(err)
			}
			if !c.done {
				t.Fatalf("[DONE] not seen with a first read of %d bytes, then %d", split, rest)
			}
		}
	}
	c := &callInfo{}
	w := &replyBody{ReadCloser: io.NopCloser(&pieceReader{s: "data: [DON", first: 3, size: 2}), c: c, ok: true, limit: 1 << 20}
	_, _ = io.ReadAll(w)
	if c.done {
		t.Error("a cut mark counted as [DONE]")
	}
}

// pieceReader reads s in reads of first bytes, then size bytes.
type pieceReader struct {
	s           string
	first, size int
	n           int
}

func (p *pieceReader) Read(b []byte) (int, error) {
	if p.s == "" {
		return 0, io.EOF
	}
	k := p.size
	if p.n == 0 && p.first > 0 {
		k = p.first
	}
	p.n++
	k = min(k, len(p.s), len(b))
	copy(b, p.s[:k])
	p.s = p.s[k:]
	return k, nil
}
