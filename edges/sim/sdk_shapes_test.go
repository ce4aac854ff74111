package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"pitwall/gpu/simspec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The official OpenAI SDKs (Python and Node) send more than pitwall's
// client does: their own headers, n, stream_options, a tool_choice object,
// parallel_tool_calls, a json_schema response format, max_completion_tokens,
// user and logprobs. These tests send what they send, over real HTTP, and
// read every field of the answers as the SDKs' types do. The headers and
// bodies were captured from openai 7.57.0 for Node (scripts/sim-openai-sdk
// runs that SDK itself against pitwall sim); the Python SDK's differ in the
// X-Stainless values and in sending a model id's slashes unescaped.

// sdkClient is what one SDK adds to every request.
type sdkClient struct {
	name    string
	headers map[string]string
	escape  func(id string) string // how it puts a model id in a path
}

var sdkClients = []sdkClient{
	{"node", map[string]string{
		"Accept": "application/json", "User-Agent": "OpenAI/JS 7.57.0", "X-Stainless-Retry-Count": "0",
		"X-Stainless-Lang": "js", "X-Stainless-Package-Version": "7.57.0", "X-Stainless-OS": "Linux",
		"X-Stainless-Arch": "x64", "X-Stainless-Runtime": "node", "X-Stainless-Runtime-Version": "v20.20.2",
		"Authorization": "Bearer sk-sim", "Accept-Language": "*", "Sec-Fetch-Mode": "cors",
	}, func(id string) string { return strings.ReplaceAll(id, "/", "%2F") }},
	{"python", map[string]string{
		"Accept": "application/json", "User-Agent": "OpenAI/Python 1.109.1", "X-Stainless-Lang": "python",
		"X-Stainless-Package-Version": "1.109.1", "X-Stainless-OS": "Linux", "X-Stainless-Arch": "x64",
		"X-Stainless-Runtime": "CPython", "X-Stainless-Runtime-Version": "3.12.3", "X-Stainless-Async": "false",
		"X-Stainless-Retry-Count": "0", "X-Stainless-Read-Timeout": "600", "Authorization": "Bearer sk-sim",
	}, func(id string) string { return id }},
}

// do sends one request as the SDK would and returns the status and body.
func (sc sdkClient) do(t *testing.T, c *http.Client, method, url string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range sc.headers {
		req.Header.Set(k, v)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

var (
	completionID = regexp.MustCompile(`^chatcmpl-[0-9a-f]{16}$`)
	openaiCallID = regexp.MustCompile(`^call_[A-Za-z0-9]{24}$`)
	fingerprint  = regexp.MustCompile(`^fp_[0-9a-f]{10}$`)
)

// sdkCase is one request body an SDK sends, and the answer it expects.
type sdkCase struct {
	name    string
	body    map[string]any
	choices int
	finish  string
	check   func(t *testing.T, content *string, calls []any) // one choice's message
}

func sdkCases() []sdkCase {
	messages := []any{
		map[string]any{"role": "developer", "content": "You are terse."},
		map[string]any{"role": "user", "content": "What's the weather in Oslo?"},
	}
	with := func(extra map[string]any) map[string]any {
		b := map[string]any{"model": "gpt-4o-mini", "messages": messages, "user": "user-1", "logprobs": false}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	text := func(t *testing.T, content *string, calls []any) {
		if content == nil || *content == "" || calls != nil {
			t.Errorf("content %v, tool_calls %v: want text only", content, calls)
		}
	}
	return []sdkCase{
		{"text", with(map[string]any{"max_completion_tokens": 512, "temperature": 0.2, "seed": 7}), 1, "stop", text},
		{"text cut by max_completion_tokens", with(map[string]any{"max_completion_tokens": 3}), 1, "length",
			func(t *testing.T, content *string, calls []any) {
				if text(t, content, calls); content != nil && countTokens(*content) != 3 {
					t.Errorf("content %q is not 3 tokens", *content)
				}
			}},
		{"forced tool", with(map[string]any{"tools": []any{timeTool(), weatherTool()}, "parallel_tool_calls": false,
			"tool_choice": forceTool("get_weather")}), 1, "tool_calls",
			func(t *testing.T, content *string, calls []any) {
				if content != nil || len(calls) != 1 {
					t.Fatalf("content %v, tool_calls %v: want one call and null content", content, calls)
				}
				call, _ := calls[0].(map[string]any)
				fn, _ := call["function"].(map[string]any)
				var args map[string]any
				if id, _ := call["id"].(string); !openaiCallID.MatchString(id) || call["type"] != "function" || fn["name"] != "get_weather" {
					t.Errorf("tool call %v", call)
				}
				if a, _ := fn["arguments"].(string); json.Unmarshal([]byte(a), &args) != nil || args["city"] != "Oslo" {
					t.Errorf("arguments %v", fn["arguments"])
				}
				if _, ok := call["index"]; ok {
					t.Errorf("a whole message's tool call carries an index: %v", call)
				}
			}},
		{"n", with(map[string]any{"n": 2, "max_completion_tokens": 512}), 2, "stop", text},
		{"json_schema", with(map[string]any{"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{
			"name": "weather", "strict": true, "schema": map[string]any{"type": "object", "additionalProperties": false,
				"properties": map[string]any{"city": map[string]any{"type": "string"}, "celsius": map[string]any{"type": "number"}},
				"required":   []any{"city", "celsius"}}}}}), 1, "stop",
			func(t *testing.T, content *string, calls []any) {
				var obj map[string]any
				if content == nil || json.Unmarshal([]byte(*content), &obj) != nil {
					t.Fatalf("content %v is not a JSON object", content)
				}
				if _, ok := obj["city"].(string); !ok {
					t.Errorf("content %s lacks the required city", *content)
				}
				if _, ok := obj["celsius"].(float64); !ok {
					t.Errorf("content %s lacks the required celsius", *content)
				}
			}},
	}
}

func sdkServer(t *testing.T) *Server {
	cfg := instant("gpt-4o-mini", "lmstudio-community/qwen3-8b", "qwen3:8b")
	cfg.Catalog = map[string]simspec.Model{"gpt-4o-mini": {Skill: 1}}
	cfg.Answers = map[string]Answer{"What's the weather in Oslo?": {Category: "tools", ToolName: "get_weather",
		ToolArgs: map[string]any{"city": "Oslo"}, Content: "It is 4 degrees and raining in Oslo."}}
	return start(t, cfg)
}

func TestOpenAISDKRetrieveModel(t *testing.T) {
	s := sdkServer(t)
	c := client(t)
	for _, sc := range sdkClients {
		for _, id := range []string{"gpt-4o-mini", "lmstudio-community/qwen3-8b", "qwen3:8b"} {
			status, out := sc.do(t, c, http.MethodGet, s.URL()+"/models/"+sc.escape(id), nil)
			var m map[string]any
			if err := json.Unmarshal(out, &m); err != nil || status != 200 {
				t.Fatalf("%s retrieve %s: %d %s", sc.name, id, status, out)
			}
			if m["id"] != id || m["object"] != "model" || m["owned_by"] != "system" || m["created"] == nil || len(m) != 4 {
				t.Errorf("%s retrieve %s: %s", sc.name, id, out)
			}
		}
		status, out := sc.do(t, c, http.MethodGet, s.URL()+"/models/"+sc.escape("nope/nope:1b"), nil)
		var e struct {
			Error map[string]any `json:"error"`
		}
		if err := json.Unmarshal(out, &e); err != nil || status != 404 {
			t.Fatalf("%s retrieve of an unknown model: %d %s", sc.name, status, out)
		}
		if e.Error["type"] != "invalid_request_error" || e.Error["code"] != "model_not_found" || e.Error["message"] == "" ||
			len(e.Error) != 4 || e.Error["param"] != nil {
			t.Errorf("%s retrieve of an unknown model: %s", sc.name, out)
		}
	}
}

func TestOpenAISDKCompletionShapes(t *testing.T) {
	s := sdkServer(t)
	c := client(t)
	for _, sc := range sdkClients {
		for _, tc := range sdkCases() {
			t.Run(sc.name+"/"+tc.name, func(t *testing.T) {
				t0 := time.Now().Unix()
				status, out := sc.do(t, c, http.MethodPost, s.URL()+"/chat/completions", tc.body)
				if status != 200 {
					t.Fatalf("status %d: %s", status, out)
				}
				var r map[string]any
				if err := json.Unmarshal(out, &r); err != nil {
					t.Fatal(err)
				}
				checkHeader(t, r, "chat.completion", t0)
				if r["service_tier"] != "default" {
					t.Errorf("service_tier %v", r["service_tier"])
				}
				checkUsage(t, r["usage"])
				choices, _ := r["choices"].([]any)
				if len(choices) != tc.choices {
					t.Fatalf("%d choices, want %d: %s", len(choices), tc.choices, out)
				}
				for i, ch := range choices {
					ch, _ := ch.(map[string]any)
					msg, _ := ch["message"].(map[string]any)
					if ch["index"] != float64(i) || ch["finish_reason"] != tc.finish || msg["role"] != "assistant" {
						t.Errorf("choice %d: index %v, finish_reason %v, role %v", i, ch["index"], ch["finish_reason"], msg["role"])
					}
					if v, ok := ch["logprobs"]; !ok || v != nil {
						t.Errorf("choice %d: logprobs %v, want null as OpenAI sends for logprobs false", i, v)
					}
					if v, ok := msg["refusal"]; !ok || v != nil {
						t.Errorf("choice %d: refusal %v, want null", i, v)
					}
					content, isNull := msg["content"], false
					if _, ok := msg["content"]; !ok {
						t.Errorf("choice %d: no content key; OpenAI sends null beside tool calls", i)
					}
					var cp *string
					if s, ok := content.(string); ok {
						cp = &s
					} else {
						isNull = content == nil
					}
					if cp == nil && !isNull {
						t.Errorf("choice %d: content %v", i, content)
					}
					calls, _ := msg["tool_calls"].([]any)
					tc.check(t, cp, calls)
				}
			})
		}
	}
}

func TestOpenAISDKStreamShapes(t *testing.T) {
	s := sdkServer(t)
	c := client(t)
	for _, sc := range sdkClients {
		for _, tc := range sdkCases() {
			for _, usage := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/%s/include_usage=%v", sc.name, tc.name, usage), func(t *testing.T) {
					whole, _ := json.Marshal(tc.body)
					_, out := sc.do(t, c, http.MethodPost, s.URL()+"/chat/completions", tc.body)
					var want completionBody
					if err := json.Unmarshal(out, &want); err != nil {
						t.Fatalf("non-streamed reply to %s: %s", whole, out)
					}
					b := map[string]any{"stream": true}
					for k, v := range tc.body {
						b[k] = v
					}
					if usage {
						b["stream_options"] = map[string]any{"include_usage": true}
					}
					t0 := time.Now().Unix()
					status, raw := sc.do(t, c, http.MethodPost, s.URL()+"/chat/completions", b)
					ev := readSSE(bytes.NewReader(raw))
					if status != 200 || ev.err != nil || len(ev.bad) > 0 || !ev.done || ev.data[len(ev.data)-1] != "[DONE]" {
						t.Fatalf("status %d, stream %+v", status, ev)
					}
					checkStream(t, ev.data[:len(ev.data)-1], usage, t0, want)
				})
			}
		}
	}
}

// checkHeader checks the fields every completion and chunk carries.
func checkHeader(t *testing.T, r map[string]any, object string, t0 int64) {
	t.Helper()
	id, _ := r["id"].(string)
	created, _ := r["created"].(float64)
	fp, _ := r["system_fingerprint"].(string)
	if !completionID.MatchString(id) || r["object"] != object || r["model"] != "gpt-4o-mini" || !fingerprint.MatchString(fp) {
		t.Errorf("header: id %v, object %v, model %v, system_fingerprint %v", r["id"], r["object"], r["model"], r["system_fingerprint"])
	}
	if int64(created) < t0 || int64(created) > time.Now().Unix() {
		t.Errorf("created %v is not now", r["created"])
	}
}

func checkUsage(t *testing.T, v any) {
	t.Helper()
	u, _ := v.(map[string]any)
	p, _ := u["prompt_tokens"].(float64)
	c, _ := u["completion_tokens"].(float64)
	if p <= 0 || c <= 0 || u["total_tokens"] != p+c {
		t.Errorf("usage %v", v)
	}
}

// checkStream reads a stream's chunks field by field and puts it back
// together, to be the non-streamed reply to the same request.
func checkStream(t *testing.T, data []string, includeUsage bool, t0 int64, want completionBody) {
	t.Helper()
	type call struct {
		id, name, args string
		deltas         int
	}
	content := map[int]*string{}
	calls := map[int]map[int]*call{}
	finish := map[int]string{}
	var firstID, firstFP any
	for i, d := range data {
		var r map[string]any
		if err := json.Unmarshal([]byte(d), &r); err != nil {
			t.Fatalf("chunk %d is not JSON: %s", i, d)
		}
		checkHeader(t, r, "chat.completion.chunk", t0)
		if i == 0 {
			firstID, firstFP = r["id"], r["system_fingerprint"]
		} else if r["id"] != firstID || r["system_fingerprint"] != firstFP {
			t.Errorf("chunk %d: id %v, fingerprint %v differ from the first chunk's", i, r["id"], r["system_fingerprint"])
		}
		u, hasUsage := r["usage"]
		choices, _ := r["choices"].([]any)
		last := i == len(data)-1
		switch {
		case includeUsage && last:
			if len(choices) != 0 {
				t.Errorf("the usage chunk has choices %v, want []", choices)
			}
			checkUsage(t, u)
			if u.(map[string]any)["completion_tokens"] != float64(want.Usage.CompletionTokens) {
				t.Errorf("streamed usage %v, non-streamed %+v", u, want.Usage)
			}
			continue
		case includeUsage && (!hasUsage || u != nil):
			t.Errorf("chunk %d: usage %v (present %v); OpenAI sends usage: null on every chunk but the last", i, u, hasUsage)
		case !includeUsage && hasUsage:
			t.Errorf("chunk %d carries usage %v without include_usage", i, u)
		}
		if len(choices) != 1 {
			t.Fatalf("chunk %d has %d choices, want 1", i, len(choices))
		}
		ch, _ := choices[0].(map[string]any)
		idx := int(ch["index"].(float64))
		delta, _ := ch["delta"].(map[string]any)
		if _, done := finish[idx]; done {
			t.Errorf("chunk %d for choice %d after its finish_reason", i, idx)
		}
		if f, _ := ch["finish_reason"].(string); f != "" {
			finish[idx] = f
			if len(delta) != 0 {
				t.Errorf("the finishing chunk carries delta %v", delta)
			}
		}
		if role, ok := delta["role"]; ok {
			if role != "assistant" || content[idx] != nil || delta["content"] != "" {
				t.Errorf("choice %d: role delta %v", idx, delta)
			}
			if r, ok := delta["refusal"]; !ok || r != nil {
				t.Errorf("choice %d: first delta lacks refusal: null: %v", idx, delta)
			}
			empty := ""
			content[idx] = &empty
			continue
		}
		if content[idx] == nil {
			t.Fatalf("choice %d: a delta before its role delta", idx)
		}
		if s, ok := delta["content"].(string); ok {
			*content[idx] += s
		}
		tcs, _ := delta["tool_calls"].([]any)
		for _, tc := range tcs {
			tc, _ := tc.(map[string]any)
			k, ok := tc["index"].(float64)
			if !ok {
				t.Fatalf("a streamed tool call delta without index: %v", tc)
			}
			fn, _ := tc["function"].(map[string]any)
			if calls[idx] == nil {
				calls[idx] = map[int]*call{}
			}
			c := calls[idx][int(k)]
			if c == nil {
				c = &call{}
				calls[idx][int(k)] = c
				id, _ := tc["id"].(string)
				if !openaiCallID.MatchString(id) || tc["type"] != "function" || fn["name"] == nil || fn["arguments"] != "" {
					t.Errorf("a tool call's first delta %v, want id, type, name and empty arguments", tc)
				}
				c.id, _ = tc["id"].(string)
				c.name, _ = fn["name"].(string)
			} else if tc["id"] != nil || tc["type"] != nil || fn["name"] != nil {
				t.Errorf("a later tool call delta repeats id, type or name: %v", tc)
			}
			a, _ := fn["arguments"].(string)
			c.args += a
			c.deltas++
		}
	}
	if len(finish) != len(want.Choices) {
		t.Fatalf("%d choices finished, want %d", len(finish), len(want.Choices))
	}
	for i, wc := range want.Choices {
		if finish[i] != wc.FinishReason {
			t.Errorf("choice %d finished %q, non-streamed %q", i, finish[i], wc.FinishReason)
		}
		if got, w := *content[i], wc.Message.Content; (w == nil && got != "") || (w != nil && got != *w) {
			t.Errorf("choice %d streamed %q, non-streamed %v", i, got, w)
		}
		if len(calls[i]) != len(wc.Message.ToolCalls) {
			t.Errorf("choice %d streamed %d calls, non-streamed %d", i, len(calls[i]), len(wc.Message.ToolCalls))
			continue
		}
		for k, w := range wc.Message.ToolCalls {
			if c := calls[i][k]; c.id != w.ID || c.name != w.Function.Name || c.args != w.Function.Arguments || c.deltas < 2 {
				t.Errorf("choice %d call %d streamed %+v, non-streamed %+v", i, k, *c, w)
			}
		}
	}
}
