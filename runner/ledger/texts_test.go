package ledger

import (
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sampleTexts are texts of every shape the cut and the packing meet.
func sampleTexts(t testing.TB) map[string]string {
	noise := make([]byte, 3000)
	if _, err := rand.Read(noise); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 8)
	msgs, _ := json.Marshal([]map[string]string{{"role": "system", "content": long + "\n\n" + long}, {"role": "user", "content": "q\n" + long}})
	return map[string]string{
		"empty":                  "",
		"short":                  "42",
		"one under inline":       strings.Repeat("a", inlineMax-1),
		"inline exactly":         strings.Repeat("a", inlineMax),
		"a long line":            long,
		"lines long and short":   "ok\n" + long + "\nshort\n\n" + long + "\n",
		"only newlines":          strings.Repeat("\n", 300),
		"JSON messages":          string(msgs),
		"escaped backslash-n":    strings.Repeat(`a\\n`, 60) + `\`,
		"ends in a backslash":    long + `\`,
		"multi-byte":             strings.Repeat("héllo wörld ✓ ⚠️ 日本語 ", 20),
		"not UTF-8":              "\xff\xfe" + long + "\x80\n" + long,
		"NUL bytes":              "a\x00b" + long + "\x00",
		"incompressible":         base64.StdEncoding.EncodeToString(noise),
		"compressible, one line": strings.Repeat("abc", 2000),
		"a megabyte":             strings.Repeat(long+"\n", 1<<20/len(long)),
	}
}

func TestTextsRoundTripThroughEveryTextColumn(t *testing.T) {
	l := openTest(t)
	for name, text := range sampleTexts(t) {
		t.Run(name, func(t *testing.T) {
			run := "run-" + name
			r := Request{RunID: run, Purpose: PurposeJudge, Input: text, Params: text, Output: text,
				Reasoning: text, ToolCalls: text, Error: text, Status: StatusCompleted}
			if _, err := l.InsertRequest(&r); err != nil {
				t.Fatal(err)
			}
			f := Request{RunID: run, Purpose: PurposeInference}
			if _, err := l.InsertRequest(&f); err != nil {
				t.Fatal(err)
			}
			f.Status, f.Output, f.Reasoning, f.ToolCalls, f.Error = StatusCompleted, text, text, text, text
			if err := l.FinishRequest(&f); err != nil {
				t.Fatal(err)
			}
			if err := l.PutCell(CellRow{RunID: run, Model: "m", Test: "t", Output: text, Reasoning: text,
				ToolCalls: text, Checks: text, Error: text}); err != nil {
				t.Fatal(err)
			}
			if err := l.PutVerdict(VerdictRow{RunID: run, Model: "m", Test: "t", Judge: "j", Detail: text, Error: text}); err != nil {
				t.Fatal(err)
			}
			reqs, err := l.Requests(run)
			if err != nil || len(reqs) != 2 {
				t.Fatalf("Requests: %d, %v", len(reqs), err)
			}
			for i, q := range reqs {
				for col, got := range map[string]string{"output": q.Output, "reasoning": q.Reasoning,
					"tool_calls": q.ToolCalls, "error": q.Error} {
					same(t, fmt.Sprintf("request %d %s", i, col), got, text)
				}
			}
			same(t, "input", reqs[0].Input, text)
			same(t, "params", reqs[0].Params, text)
			cells, err := l.Cells(run)
			if err != nil || len(cells) != 1 {
				t.Fatalf("Cells: %d, %v", len(cells), err)
			}
			c := cells[0]
			for col, got := range map[string]string{"output": c.Output, "reasoning": c.Reasoning,
				"tool_calls": c.ToolCalls, "checks": c.Checks, "error": c.Error} {
				same(t, "cell "+col, got, text)
			}
			vs, err := l.Verdicts(run)
			if err != nil || len(vs) != 1 {
				t.Fatalf("Verdicts: %d, %v", len(vs), err)
			}
			same(t, "detail", vs[0].Detail, text)
			same(t, "verdict error", vs[0].Error, text)
		})
	}
}

func same(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s: read back %d bytes that differ from the %d written (%.40q…)", what, len(got), len(want), got)
	}
}

// textsTable is what the texts table holds: pieces, and the bytes they
// take as stored.
func textsTable(t *testing.T, l *Ledger) (pieces, bytes int) {
	t.Helper()
	if err := l.r.QueryRow(`SELECT count(*), coalesce(sum(length(CAST(body AS BLOB))), 0) FROM texts`).Scan(&pieces, &bytes); err != nil {
		t.Fatal(err)
	}
	return pieces, bytes
}

func TestRepeatedTextIsStoredOnce(t *testing.T) {
	l := openTest(t)
	template := strings.Repeat("Judge the candidate below against the criteria and end with a verdict line. ", 12)
	prompt := `[{"role":"user","content":"What is the capital of France? Answer in one word, then explain."}]`
	params := `{"max_tokens":1024,"seed":42,"temperature":0,"tool_choice":null,"tools":null}`
	answers := make([]string, 50)
	for i := range answers {
		answers[i] = fmt.Sprintf("Paris.\n\nAnswer %d: ", i) + strings.Repeat(fmt.Sprintf("reason %d holds; ", i), 20)
	}
	write := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			r := Request{RunID: "r", Purpose: PurposeInference, Model: fmt.Sprintf("m%d", i), Input: prompt, Params: params,
				Status: StatusCompleted, Output: answers[i]}
			if _, err := l.InsertRequest(&r); err != nil {
				t.Fatal(err)
			}
			if err := l.PutCell(CellRow{RunID: "r", Model: r.Model, Test: "t", Output: answers[i]}); err != nil {
				t.Fatal(err)
			}
			// The judge's prompt quotes the answer inside JSON, as the runner does.
			judge, _ := json.Marshal([]map[string]string{{"role": "system", "content": template},
				{"role": "user", "content": "<candidate>\n" + answers[i] + "\n</candidate>\n\n" + template}})
			j := Request{RunID: "r", Purpose: PurposeJudge, Input: string(judge), Params: params, Status: StatusCompleted}
			if _, err := l.InsertRequest(&j); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(0, 1)
	onePieces, oneBytes := textsTable(t, l)
	write(1, len(answers))
	pieces, bytes := textsTable(t, l)
	// Each further cell adds its answer's one long line; the prompt, the
	// params, the template (twice per judge prompt) and the answer quoted
	// in the judge's prompt are there already.
	if want := onePieces + len(answers) - 1; pieces != want {
		t.Errorf("texts holds %d pieces after %d cells, want %d (%d after one cell)", pieces, len(answers), want, onePieces)
	}
	if per := (bytes - oneBytes) / (len(answers) - 1); per > len(answers[1]) {
		t.Errorf("each further cell took %d bytes of texts, more than its %d-byte answer", per, len(answers[1]))
	}
	reqs, err := l.Requests("r")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		if r.Params != params || (r.Purpose == PurposeInference && r.Input != prompt) {
			t.Fatalf("request %d read back wrong: %.60q", r.ID, r.Input)
		}
		if r.Purpose == PurposeJudge && !strings.Contains(r.Input, template) {
			t.Fatalf("judge request %d lost its template: %.60q", r.ID, r.Input)
		}
	}
}

func TestSplitCutsAsItsRulesSay(t *testing.T) {
	long := strings.Repeat("x", lineMin)
	run := strings.Repeat("y", runMin)
	tests := []struct {
		name string
		text string
		want []string // the pieces, refs in [brackets]
	}{
		{"a long line alone", long, []string{"[" + long + "]"}},
		{"a line one short of long", long[1:], []string{"[" + long[1:] + "]"}}, // a run of runMin or more
		{"a short run stays in the recipe", "ab\ncd", []string{"ab\ncd"}},
		{"long lines lose their ends to the runs", "a\n" + long + "\nb\n" + long,
			[]string{"a\n", "[" + long + "]", "\nb\n", "[" + long + "]"}},
		{"a JSON \\n ends a line", `"` + long + `\n` + run + `"`, []string{"[" + `"` + long + "]", "[" + `\n` + run + `"` + "]"}},
		{"a run of runMin is a piece", run + "\n" + long, []string{"[" + run + "\n]", "[" + long + "]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			at := 0
			for _, p := range split(tt.text) {
				if p.from != at {
					t.Fatalf("pieces leave a gap at %d", at)
				}
				s := tt.text[p.from:p.to]
				if p.ref {
					s = "[" + s + "]"
				}
				got = append(got, s)
				at = p.to
			}
			if at != len(tt.text) {
				t.Fatalf("pieces end at %d of %d", at, len(tt.text))
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("split = %q\nwant    %q", got, tt.want)
			}
		})
	}
}

func FuzzTextRecipeRoundTrips(f *testing.F) {
	for _, s := range sampleTexts(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st := encodeText(s)
		bodies := map[textHash]string{}
		for i, h := range st.hashes {
			if hashText(st.pieces[i]) != h {
				t.Fatalf("piece %d hashed wrong", i)
			}
			bodies[h] = st.pieces[i]
		}
		var got string
		switch v := st.value.(type) {
		case string:
			got = v
			if len(s) >= inlineMax {
				t.Fatalf("a %d-byte text stored inline", len(s))
			}
		case []byte:
			var err error
			if got, err = decodeRecipe(v, func(h textHash) (string, bool) { b, ok := bodies[h]; return b, ok }); err != nil {
				t.Fatal(err)
			}
			if len(v) > len(s)+8 {
				t.Errorf("a %d-byte text made a %d-byte recipe", len(s), len(v))
			}
		}
		if got != s {
			t.Fatalf("recipe rebuilt %q, want %q", got, s)
		}
		var p packer
		body, err := unpackBody(p.packBody(s))
		if err != nil || body != s {
			t.Fatalf("packed body read back %q, %v", body, err)
		}
	})
}

// oldRows writes rows as a ledger before schema 6 held them: texts and
// hex cache keys as TEXT.
func oldRows(t *testing.T, db *sql.DB, run, text, key string, at time.Time) {
	t.Helper()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO requests (run_id, purpose, status, input, params, output, reasoning, tool_calls, error,
			cache_key, verdict, ended_ms, model, candidate_model, test)
			VALUES (?, 'judge', 'completed', ?, ?, ?, ?, ?, ?, ?, 'pass', ?, 'judge', 'm', 't')`,
			[]any{run, text, text, text, text, text, text, key, at.UnixMilli()}},
		{`INSERT INTO cells (run_id, model, test, repeat, status, output, reasoning, tool_calls, checks, error)
			VALUES (?, 'm', 't', 0, 'completed', ?, ?, ?, ?, ?)`, []any{run, text, text, text, text, text}},
		{`INSERT INTO verdicts (run_id, model, test, repeat, judge, verdict, detail, error)
			VALUES (?, 'm', 't', 0, 'j', 'pass', ?, ?)`, []any{run, text, text}},
	} {
		if _, err := db.Exec(q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRowsFromBeforeSchema6ReadAsTheyWereWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	// A ledger at schema 5, with rows in the old form.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range migrations[:5] {
		if _, err := db.Exec(m); err != nil {
			t.Fatalf("migration %d: %v", i+1, err)
		}
	}
	if _, err := db.Exec(`PRAGMA user_version = 5`); err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("an answer from an older pitwall\n", 20)
	key := strings.Repeat("ab", 32) // a SHA-256 in hex, as the runner's keys are
	oldRows(t, db, "old", text, key, time.UnixMilli(1000))
	db.Close()

	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	reqs, err := l.Requests("old")
	if err != nil || len(reqs) != 1 {
		t.Fatalf("Requests: %d, %v", len(reqs), err)
	}
	q := reqs[0]
	for col, got := range map[string]string{"input": q.Input, "params": q.Params, "output": q.Output,
		"reasoning": q.Reasoning, "tool_calls": q.ToolCalls, "error": q.Error, "cache_key": q.CacheKey} {
		want := text
		if col == "cache_key" {
			want = key
		}
		same(t, "old request "+col, got, want)
	}
	cells, err := l.Cells("old")
	if err != nil || len(cells) != 1 || cells[0].Output != text || cells[0].Checks != text {
		t.Errorf("old cell read back %+v, %v", cells, err)
	}
	vs, err := l.Verdicts("old")
	if err != nil || len(vs) != 1 || vs[0].Detail != text {
		t.Errorf("old verdict read back %+v, %v", vs, err)
	}
	// The judge cache still answers from the old row, until a newer one
	// (stored the new way) with the same key ends.
	if out, ok, err := l.CachedJudgeOutput(key); err != nil || !ok || out != text {
		t.Errorf("CachedJudgeOutput of an old row = %.30q, %v, %v", out, ok, err)
	}
	newer := Request{RunID: "new", Purpose: PurposeJudge, Status: StatusCompleted, Output: "VERDICT: FAIL",
		CacheKey: key, EndedAt: time.UnixMilli(2000)}
	if _, err := l.InsertRequest(&newer); err != nil {
		t.Fatal(err)
	}
	if out, ok, err := l.CachedJudgeOutput(key); err != nil || !ok || out != newer.Output {
		t.Errorf("CachedJudgeOutput after a newer row = %.30q, %v, %v; want the newer", out, ok, err)
	}
}

func TestCacheKeysReadBackAsGivenWhateverTheirForm(t *testing.T) {
	l := openTest(t)
	hexKey := strings.Repeat("0123456789abcdef", 4)
	for _, key := range []string{hexKey, strings.ToUpper(hexKey), "not-a-hash", hexKey[:63] + "g", hexKey + "00"} {
		r := Request{RunID: "r", Purpose: PurposeInference, Status: StatusCompleted, Output: "out " + key, CacheKey: key}
		if _, err := l.InsertRequest(&r); err != nil {
			t.Fatal(err)
		}
		got, ok, err := l.CachedInference(key)
		if err != nil || !ok || got.Output != r.Output || got.CacheKey != key {
			t.Errorf("CachedInference(%q) = %q key %q, %v, %v", key, got.Output, got.CacheKey, ok, err)
		}
	}
	var blobs int
	if err := l.r.QueryRow(`SELECT count(*) FROM requests WHERE typeof(cache_key) = 'blob'`).Scan(&blobs); err != nil {
		t.Fatal(err)
	}
	if blobs != 1 {
		t.Errorf("%d keys stored as 32 bytes, want 1 (only lower-case hex of a SHA-256)", blobs)
	}
}

func TestAMissingPieceIsAnErrorThatNamesIt(t *testing.T) {
	l := openTest(t)
	text := strings.Repeat("a piece that goes missing ", 10)
	if err := l.PutCell(CellRow{RunID: "r", Model: "m", Test: "t", Output: text}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.w.Exec(`DELETE FROM texts`); err != nil {
		t.Fatal(err)
	}
	l.bodies = newTextCache(readCacheBytes, func(s string) int { return len(s) })
	_, err := l.Cells("r")
	if err == nil || !strings.Contains(err.Error(), "missing from the texts table") {
		t.Errorf("Cells with a piece gone: %v, want an error saying a piece is missing", err)
	}
}
