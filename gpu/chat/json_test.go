package chat

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// Texts that encoding/json escapes in every way it can: HTML characters,
// control characters, invalid UTF-8, the two line separators JavaScript
// reads as line ends, and the warning sign with its variation selector.
var jsonTexts = []string{
	"", "plain", `quote " and \ backslash`, "<b>&amp;</b>", "tab\tnew\nline\rcarriage",
	"\x00\x01\x08\x0c\x1f\x7f", "bad \xff\xfe utf-8 \xc3", "sep \u2028 and \u2029", "⚠️ ✓ ❌ 日本語",
	"emoji 🧪 and a lone \xed\xa0\x80 surrogate", `{"json":"inside"}`, "ends in backslash \\",
}

func FuzzJSONStringIsEncodingJSONs(f *testing.F) {
	for _, s := range jsonTexts {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendJSONString([]byte("x"), s); !bytes.Equal(got[1:], want) || got[0] != 'x' {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}

// MessagesJSON is json.Marshal's text for every shape of message list:
// none (nil and empty), names, tool calls with and without ids, tool call
// ids, and texts of every escape.
func TestMessagesJSONIsEncodingJSONs(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	text := func() string {
		if rng.IntN(3) == 0 {
			return jsonTexts[rng.IntN(len(jsonTexts))]
		}
		b := make([]byte, rng.IntN(30))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return string(b)
	}
	for i := range 5000 {
		var ms []Message
		switch n := rng.IntN(5); {
		case n == 1:
			ms = []Message{}
		case n > 1:
			for range n {
				m := Message{Role: text(), Content: text()}
				if rng.IntN(3) == 0 {
					m.Name = text()
				}
				if rng.IntN(3) == 0 {
					m.ToolCallID = text()
				}
				for range rng.IntN(3) {
					tc := ToolCall{Name: text(), Arguments: text()}
					if rng.IntN(2) == 0 {
						tc.ID = text()
					}
					m.ToolCalls = append(m.ToolCalls, tc)
				}
				if rng.IntN(5) == 0 {
					m.ToolCalls = []ToolCall{} // empty, not nil: left out as well
				}
				ms = append(ms, m)
			}
		}
		want, err := json.Marshal(ms)
		if err != nil {
			t.Fatal(err)
		}
		if got := MessagesJSON(ms); got != string(want) {
			t.Fatalf("list %d (%#v):\n got %s\nwant %s", i, ms, got, want)
		}
	}
}
