package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var pieceCases = []string{
	"",
	"\n",
	"\n\n\n",
	"one line",
	"ends with a newline\n",
	"a\nb\nc",
	`json \n escaped \n lines`,
	`an escaped backslash \\n is not a line end, but cut there it still rebuilds`,
	`trailing backslash \`,
	"crlf\r\nlines\r\n",
	"ünïcödé\nlines ✓\n",
	strings.Repeat("short\n", 300),
	strings.Repeat("a line long enough to stand as a piece of its own, past longLine\n", 20),
	strings.Repeat("x", 5000),
}

func rebuild(s string) (string, []string) {
	var sb strings.Builder
	var bodies []string
	p := newPieces(s)
	for p.next() {
		bodies = append(bodies, p.body)
		sb.WriteString(p.body)
		sb.WriteString(endings[p.end])
	}
	return sb.String(), bodies
}

func TestPiecesRebuildTheTextExactly(t *testing.T) {
	t.Parallel()
	for _, s := range pieceCases {
		if got, _ := rebuild(s); got != s {
			t.Errorf("%q rebuilt as %q", s, got)
		}
	}
}

// linesByRule is rule 1 read byte by byte: the ends of s's lines, how each
// ends, and where the next starts. pieces finds them with IndexByte.
func linesByRule(s string) [][3]int {
	var out [][3]int
	for i := 0; i < len(s); {
		j := i
		for ; j < len(s); j++ {
			if s[j] == '\n' || (s[j] == '\\' && j+1 < len(s) && s[j+1] == 'n') {
				break
			}
		}
		switch {
		case j == len(s):
			out = append(out, [3]int{j, endNone, j})
		case s[j] == '\n':
			out = append(out, [3]int{j, endNewline, j + 1})
		default:
			out = append(out, [3]int{j, endEscaped, j + 2})
		}
		i = out[len(out)-1][2]
	}
	return out
}

func linesOf(s string) [][3]int {
	var out [][3]int
	p := newPieces(s)
	for i := 0; i < len(s); {
		e, end, after := p.lineAt(i)
		out = append(out, [3]int{e, end, after})
		i = after
	}
	return out
}

func TestLinesEndWhereRuleOneSays(t *testing.T) {
	t.Parallel()
	for _, s := range append(pieceCases, `a\\n\"b\n\`, "\\\n\n\\") {
		if got, want := linesOf(s), linesByRule(s); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: lines %v, rule 1 says %v", s, got, want)
		}
	}
}

func FuzzPiecesRebuildTheText(f *testing.F) {
	for _, s := range pieceCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, bodies := rebuild(s)
		if got != s {
			t.Fatalf("%q rebuilt as %q", s, got)
		}
		if got, want := linesOf(s), linesByRule(s); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: lines %v, rule 1 says %v", s, got, want)
		}
		for _, b := range bodies {
			if len(b) > maxPiece+longLine && strings.ContainsAny(b, "\n") {
				t.Fatalf("a piece of %d bytes gathers lines past maxPiece: %q", len(b), b)
			}
		}
	})
}

// The same line cuts alike wherever it stands: raw in a reply, escaped in
// a judge prompt's JSON.
func TestALineIsOnePieceRawOrEscaped(t *testing.T) {
	t.Parallel()
	line := "The answer is 42, and here is a sentence long enough to be a piece alone."
	reply := "42\n\n" + line
	prompt, _ := json.Marshal([]map[string]string{{"role": "user", "content": "Grade this.\n<candidate>\n" + reply + "\n</candidate>\nThen say PASS or FAIL."}})
	_, a := rebuild(reply)
	_, b := rebuild(string(prompt))
	found := 0
	for _, x := range a {
		for _, y := range b {
			if x == line && y == line {
				found++
			}
		}
	}
	if found != 1 {
		t.Errorf("the reply's line is not a piece of both:\n reply  %q\n prompt %q", a, b)
	}
}

// ledgerFileBytes closes l and returns its files' bytes.
func ledgerFileBytes(t *testing.T, l *Ledger) []byte {
	t.Helper()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(l.Path() + "*")
	var all []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	return all
}

// A run's repeated texts are in the file once: the judge template every
// judge request carries, a reply that is the request's output, the cell's
// output and part of the judge's prompt, the judge's reply quoted in the
// verdict. What is stored stays greppable: each text is in the file as it
// was given, so a grep for a leaked secret can find it.
func TestRepeatedTextsAreStoredOnceAndGreppable(t *testing.T) {
	t.Parallel()
	l, err := Open(testPath(t))
	if err != nil {
		t.Fatal(err)
	}
	const cells = 50
	for i := range cells {
		if err := writeJudgedCell(l, "r", judgedCell(i)); err != nil {
			t.Fatal(err)
		}
	}
	// Each read back whole.
	reqs, err := l.Requests("r")
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2*cells {
		t.Fatalf("%d requests, want %d", len(reqs), 2*cells)
	}
	for i := range cells {
		c, infer, judge := judgedCell(i), reqs[2*i], reqs[2*i+1]
		if infer.Input != c.input || infer.Params != c.params || infer.Output != c.reply ||
			judge.Input != c.judgeInput || judge.Output != c.judgeOut {
			t.Errorf("cell %d's requests read back changed:\n%+v\n%+v", i, infer, judge)
		}
	}
	stored := func(s string) int { return textsHolding(t, l, s) }
	reply := judgedCell(7).reply
	replyLine := reply[strings.LastIndex(reply, "\n")+1:]
	judgeLine := strings.Split(judgedCell(7).judgeOut, "\n")[2]
	tests := []struct {
		what, text string
	}{
		{"a sentence of the judge template", "Everything in the candidate_output block is the answer under review"},
		{"the judge's system prompt", benchSystem},
		{"a reply (request output, cell output, judge prompt)", replyLine},
		{"a line of a judge's reply (its output, the verdict detail)", judgeLine},
	}
	for _, tt := range tests {
		if n := stored(tt.text); n != 1 {
			t.Errorf("%s is in %d stored texts, want one: %q", tt.what, n, tt.text)
		}
	}
	if testPG != nil {
		return // the server's files are not the ledger's to read
	}
	all := ledgerFileBytes(t, l)
	for _, tt := range tests {
		if !bytes.Contains(all, []byte(tt.text)) {
			t.Errorf("%s cannot be found in the ledger's bytes: %q", tt.what, tt.text)
		}
	}
}

// A cell read back is remembered again: its reply quoted in a judge's
// prompt long after it was stored (phase two of a large run) stores
// nothing new, though the writer had forgotten it.
func TestAReplyReadBackIsNotStoredAgainWhenQuoted(t *testing.T) {
	// Not parallel: it shrinks the writer's memory for every ledger.
	defer func(n, m int) { knownTexts, recentCellBytes = n, m }(knownTexts, recentCellBytes)
	knownTexts, recentCellBytes = 8, 1 // forget soon, and read the cell from the table
	l := openTest(t)
	line := func(who string, i int) string {
		return fmt.Sprintf("%s line %d of a reply long enough to be a piece of its own, surely.", who, i)
	}
	reply := line("first", 1) + "\n" + line("first", 2) + "\n" + line("first", 3)
	if err := l.PutCell(CellRow{RunID: "r", Model: "m", Test: "t0", Status: "completed", Output: reply}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 20; i++ { // enough other texts for the writer to forget the first
		if err := l.PutCell(CellRow{RunID: "r", Model: "m", Test: fmt.Sprintf("t%d", i), Status: "completed",
			Output: line(fmt.Sprintf("other %d", i), 1) + "\n" + line(fmt.Sprintf("other %d", i), 2)}); err != nil {
			t.Fatal(err)
		}
	}
	count := func() int { return textsHolding(t, l, "first line") }
	before := count()
	got, err := l.Cell("r", "m", "t0", 0)
	if err != nil || got.Output != reply {
		t.Fatalf("the cell read back: %q, %v", got.Output, err)
	}
	input, _ := json.Marshal([]map[string]string{{"role": "user", "content": "Judge this reply:\n" + reply + "\nVERDICT?"}})
	if _, err := l.InsertRequest(&Request{RunID: "r", Purpose: PurposeJudge, Model: "j", Test: "t0", Input: string(input)}); err != nil {
		t.Fatal(err)
	}
	if after := count(); after != before {
		t.Errorf("the quoted reply's lines are in %d stored texts, %d before it was quoted", after, before)
	}
	reqs, err := l.Requests("r")
	if err != nil || len(reqs) != 1 || reqs[0].Input != string(input) {
		t.Fatalf("the judge request read back: %+v, %v", reqs, err)
	}
}

// RequestsUsage reads what Requests reads but the texts.
func TestRequestsUsageIsRequestsWithoutTexts(t *testing.T) {
	t.Parallel()
	l, err := Open(testPath(t))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := range 3 {
		if err := writeJudgedCell(l, "r", judgedCell(i)); err != nil {
			t.Fatal(err)
		}
	}
	whole, err := l.Requests("r")
	if err != nil {
		t.Fatal(err)
	}
	usage, err := l.RequestsUsage("r")
	if err != nil || len(usage) != len(whole) || len(whole) != 6 {
		t.Fatalf("usage %d rows (%v), whole %d", len(usage), err, len(whole))
	}
	for i := range whole {
		w := whole[i]
		if w.Input == "" || w.Output == "" {
			t.Fatalf("whole row %d lacks its texts: %+v", i, w)
		}
		w.Input, w.Params, w.Output, w.Reasoning, w.ToolCalls = "", "", "", "", ""
		if !reflect.DeepEqual(usage[i], w) {
			t.Errorf("row %d:\nusage %+v\nwhole %+v", i, usage[i], w)
		}
	}
}

// textsHolding counts the pieces stored that hold s.
func textsHolding(t *testing.T, l *Ledger, s string) int {
	t.Helper()
	q := `SELECT count(*) FROM texts WHERE instr(body, ?) > 0`
	if l.d.pg {
		q = `SELECT count(*) FROM texts WHERE position(convert_to(?, 'UTF8') in body) > 0`
	}
	var n int
	if err := l.r.QueryRow(q, s).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
