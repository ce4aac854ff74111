package gpu

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// Chunks as servers send them: OpenAI, vLLM (reasoning_content), Ollama and
// LM Studio (reasoning), llama.cpp (timings), a usage chunk, and some the
// fast path must leave to encoding/json.
var chunkSeeds = []string{
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"qwen3-8b","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"qwen3-8b","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"Paris"},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"x","model":"m","choices":[{"index":0,"delta":{"reasoning_content":"Let me think"},"finish_reason":null}]}`,
	`{"id":"x","model":"m","choices":[{"index":0,"delta":{"reasoning":"hmm","content":null},"finish_reason":null}]}`,
	`{"choices":[{"finish_reason":"stop","index":0,"delta":{}}],"created":1,"id":"c","model":"llama","object":"chat.completion.chunk","timings":{"prompt_n":12,"predicted_per_second":41.5}}`,
	`{"id":"x","model":"m","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":48,"total_tokens":60}}`,
	`{"id":"x","model":"m","choices":[{"index":0,"delta":{"content":"a \"quoted\" word\n"},"finish_reason":null}]}`,
	`{"id":"x","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"get","arguments":"{\"c"}}]},"finish_reason":null}]}`,
	`{"id":"x","MODEL":"m","Choices":[{"index":0,"delta":{"Content":"x"}}]}`,
	`{"model":"m","choices":[{"index":1,"delta":{"content":"second"}},{"index":0,"delta":{"content":"first"}}]}`,
	`{"model":"m","choices":null,"usage":null}`,
	`{"model":"ü","choices":[{"index":0,"delta":{"content":"naïve ☃"},"finish_reason":"length"}]}`,
	` {"model" : "m" , "choices" : [ { "index" : 0 , "delta" : { "content" : "x" } } ] } `,
	`{"model":"m","choices":[{"index":0.5}]}`,
	`{"model":"m","choices":[{"index":0,"delta":{"content":1}}]}`,
	`{"model":"m"} trailing`,
	`[]`,
	`{"choices":[{"index":0,"delta":{"content":"a"}}],"choices":[{"finish_reason":"stop"}]}`,
}

func FuzzDecodeChunk(f *testing.F) {
	for _, s := range chunkSeeds {
		f.Add([]byte(s))
	}
	// A key given twice: the last one is the value, whichever way each is read.
	f.Add([]byte(`{"choices":[{"index":0,"delta":{"content":"a","content":"b\n"}}]}`))
	f.Add([]byte(`{"choices":[{"index":0,"delta":{"content":"b\n","content":"a"}}]}`))
	f.Add([]byte(`{"choices":[{"index":0,"delta":{"content":"a","content":null}}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var fast streamChunk
		if !decodeChunk(raw, &fast) {
			return
		}
		var slow streamChunk
		if err := json.Unmarshal(raw, &slow); err != nil {
			t.Fatalf("the fast path took a chunk encoding/json refuses (%v): %q", err, raw)
		}
		if len(fast.Choices) == 0 && len(slow.Choices) == 0 {
			fast.Choices, slow.Choices = nil, nil
		}
		for i := range fast.Choices { // content as bytes is Content
			if d := &fast.Choices[i].Delta; d.content != nil {
				d.Content, d.content = string(d.content), nil
			}
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q:\nfast %+v\nslow %+v", raw, fast, slow)
		}
	})
}

// The chunks every token brings take the fast path; those it is not sure of
// do not.
func TestDecodeChunkTakesTheCommonShape(t *testing.T) {
	for i, s := range chunkSeeds {
		var ch streamChunk
		got := decodeChunk([]byte(s), &ch)
		want := i < 7 || i == 9 || i == 10 || i == 11 || i == 12
		if got != want {
			t.Errorf("seed %d: fast path %v, want %v: %s", i, got, want, s)
		}
	}
}

func BenchmarkDecodeChunk(b *testing.B) {
	raw := []byte(chunkSeeds[1])
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		var ch streamChunk
		for b.Loop() {
			ch = streamChunk{Choices: ch.Choices[:0]}
			if !decodeChunk(raw, &ch) {
				b.Fatal("not taken")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var ch streamChunk
			if err := json.Unmarshal(raw, &ch); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The fast path's checks of values it skips accept what encoding/json
// accepts, and nothing else.
func FuzzSkippedValuesAreJSONs(f *testing.F) {
	for _, s := range []string{"0", "-0", "01", "1.", "1.5", "-1.5e10", "1e", "1E+2", "+1", "--1", "1.2.3", "",
		`abc`, `a\"b`, `a\u00e9`, `\u12`, `\u12G4`, `\x`, "tab\there", `\/\b\f\n\r\t`, `\`, "é", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := validNumber([]byte(s)), json.Valid([]byte(s)) && strings.Trim(s, "+-.eE0123456789") == "" && s != ""; got != want {
			t.Errorf("validNumber(%q) = %v, encoding/json says %v", s, got, want)
		}
		if strings.ContainsRune(s, '"') {
			return // a quote ends the string before its end
		}
		if got, want := validString([]byte(s)), json.Valid([]byte(`"`+s+`"`)); got != want {
			t.Errorf("validString(%q) = %v, encoding/json says %v", s, got, want)
		}
	})
}
