package judge

import (
	"pitwall/gpu/chat"
	"pitwall/judge/check"
	"strings"
	"testing"
	"time"
)

// judgeAnswer is a typical reasoning judge's answer: thinking, a few
// paragraphs of grading, a verdict and a score (about 2 KB).
var judgeAnswer = "<think>\n" + strings.Repeat("The user asked for the weather in Tokyo; the candidate called get_weather. ", 8) +
	"\n</think>\n\n" + strings.Repeat("1. The candidate called the right tool with city=Tokyo, as the criteria ask.\n", 12) +
	"REASON: correct tool and argument\nVERDICT: PASS\nSCORE: 0.95\n"

// BenchmarkParse measures reading one judge answer; next to the judge
// request itself (hundreds of milliseconds at least) it should be
// negligible, which µs/parse shows.
func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(judgeAnswer)))
	for b.Loop() {
		if s := Parse(judgeAnswer); s.ParseErr != "" || !s.Pass {
			b.Fatalf("bad parse: %+v", s)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/parse")
}

// BenchmarkParseNoVerdict is the slowest path: a long answer with many
// braces and no verdict, where the JSON fallback scans and gives up.
func BenchmarkParseNoVerdict(b *testing.B) {
	b.ReportAllocs()
	raw := strings.Repeat(`Consider {"step": 1, "ok": true} and {a, b}. `, 200)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if s := Parse(raw); s.ParseErr == "" {
			b.Fatal("found a verdict in none")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/parse")
}

// BenchmarkRunChecks runs a tool-calling test's usual checks, plus the
// semantic validation every reply gets; ns/check is the cost per check.
func BenchmarkRunChecks(b *testing.B) {
	b.ReportAllocs()
	checks := []check.Check{
		{Type: "tool-call", Name: "get_weather", Args: map[string]any{"city": "Tokyo"}},
		{Type: "not-tool-call", Name: "execute_code"},
		{Type: "not-contains", Value: "I cannot"},
		{Type: "regex", Value: `(?i)tokyo`},
		{Type: "json-schema", Schema: map[string]any{"type": "object", "required": []any{"city"},
			"properties": map[string]any{"city": map[string]any{"type": "string"}}}},
		{Type: "not-refusal"},
		{Type: "max-latency", Value: "30s"},
	}
	out := check.Output{
		Content:   `{"city": "Tokyo"}`,
		ToolCalls: []chat.ToolCall{{Name: "get_weather", Arguments: `{"city": "Tokyo", "units": "metric"}`}},
		Latency:   2 * time.Second,
	}
	expect := check.Expect{HasTools: true, ToolChoice: "required"}
	for b.Loop() {
		rs := append(check.Validate(expect, out), check.RunChecks(checks, out)...)
		if !check.Passed(rs) {
			b.Fatalf("checks failed: %+v", rs)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(checks)), "ns/check")
}

// BenchmarkRender measures building one judge request's messages from the
// default template: a run does it for every judge request.
func BenchmarkRender(b *testing.B) {
	tpl := builtinTemplates[DefaultTemplate]
	in := Input{Prompt: "What is 2 plus 2? Answer with the number.", Criteria: "The answer is 4, stated plainly.", Reply: "The answer is 4."}
	for b.Loop() {
		if msgs := Render(tpl, in); len(msgs) == 0 {
			b.Fatal("no messages")
		}
	}
}
