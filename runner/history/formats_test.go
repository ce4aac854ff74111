package history

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"maps"
	"strings"
	"testing"
	"time"

	"pitwall/runner/compare"
)

func TestParseFormatAndFormatFromPath(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", "json"}, {"JSON", "json"}, {"markdown", "md"}, {"md", "md"}, {"htm", "html"},
		{"xml", "junit"}, {"junit", "junit"}, {"csv", "csv"}, {"text", "text"},
	} {
		if got, err := ParseFormat(tt.in); err != nil || got != tt.want {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	if _, err := ParseFormat("pdf"); err == nil || !strings.Contains(err.Error(), "json, csv, md, html, junit") {
		t.Errorf("ParseFormat(pdf) = %v; want an error listing the formats", err)
	}
	for _, tt := range []struct{ path, want string }{
		{"out/report.HTML", "html"}, {"r.md", "md"}, {"r.markdown", "md"}, {"junit.xml", "junit"}, {"a.b.csv", "csv"}, {"x.json", "json"},
	} {
		if got, err := FormatFromPath(tt.path); err != nil || got != tt.want {
			t.Errorf("FormatFromPath(%q) = %q, %v; want %q", tt.path, got, err, tt.want)
		}
	}
	for _, bad := range []string{"report", "report.pdf"} {
		if _, err := FormatFromPath(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("FormatFromPath(%q) = %v; want an error naming the file", bad, err)
		}
	}
}

func TestRecordFromConfigRecord(t *testing.T) {
	for _, tt := range []struct {
		name, config string
		cats, sevs   map[string]string
		warnings     int
	}{
		{"ids only (a run of an earlier build)", `{"tests":["a","b"]}`, nil, nil, 0},
		{"objects", `{"tests":[{"id":"a","category":"tools","severity":"critical"},{"id":"b"}]}`,
			map[string]string{"a": "tools"}, map[string]string{"a": "critical"}, 0},
		{"maps", `{"tests":["a","b"],"test_categories":{"a":"json"},"test_severities":{"b":"warning"},"warnings":["w"]}`,
			map[string]string{"a": "json"}, map[string]string{"b": "warning"}, 1},
		{"not JSON", `{`, nil, nil, 0},
		{"empty", ``, nil, nil, 0},
	} {
		got := readRecord(tt.config)
		if !maps.Equal(got.Categories, tt.cats) || !maps.Equal(got.Severities, tt.sevs) || len(got.Warnings) != tt.warnings {
			t.Errorf("%s: %+v, want categories %v severities %v and %d warnings", tt.name, got, tt.cats, tt.sevs, tt.warnings)
		}
	}
}

func TestJSONExportCarriesCellsAndComparison(t *testing.T) {
	led := fixture(t)
	var x Export
	if err := json.Unmarshal(render(t, led, "json", run1), &x); err != nil {
		t.Fatal(err)
	}
	if x.Judge != "jury" || len(x.Judges) != 2 || x.Categories["json_person"] != "json" || x.Comparison == nil {
		t.Fatalf("judge %q judges %v categories %v comparison %v", x.Judge, x.Judges, x.Categories, x.Comparison)
	}
	var found bool
	for _, c := range x.Cells {
		if c.Model == "beta|b" && c.Test == "json_person" {
			found = true
			if c.Output != injected || c.Outcome != "fail" || c.Category != "json" || !bytes.Contains(c.Messages, []byte("Answer briefly.")) {
				t.Errorf("cell %+v", c)
			}
			if j := c.Judgments["j1"]; len(j.Samples) != 1 || !strings.Contains(j.Samples[0].Reason, "j1 says fail") {
				t.Errorf("j1's samples %+v", j.Samples)
			}
			if c.Judgments["jury"].Jury == nil {
				t.Error("the jury's detail is missing")
			}
		}
	}
	if !found {
		t.Fatal("no beta|b × json_person cell")
	}
	r := x.Comparison.Runs[0]
	if r.Ranking[0].Model != "alpha" || r.Ranking[0].Pass != 5 || r.Ranking[0].Decided != 6 {
		t.Errorf("ranking %+v: want alpha first at 5/6", r.Ranking[0])
	}
	// beta|b: weather failed, pick errored, json_person fail, json_list pass;
	// arithmetic cancelled and summarise a judge error are left out: 1/4.
	if b := r.Ranking[1]; b.Pass != 1 || b.Decided != 4 || b.JudgeError != 1 || b.None != 1 {
		t.Errorf("beta|b %+v: want 1/4, a judge error and a cancel", b)
	}

	var two struct {
		Runs       []Export        `json:"runs"`
		Comparison *compare.Report `json:"comparison"`
	}
	if err := json.Unmarshal(render(t, led, "json", run1, run2), &two); err != nil {
		t.Fatal(err)
	}
	if len(two.Runs) != 2 || two.Comparison == nil || len(two.Comparison.Diffs) != 1 {
		t.Fatalf("two runs: %d runs, comparison %v", len(two.Runs), two.Comparison)
	}
	d := two.Comparison.Diffs[0]
	if len(d.Fixed) != 2 || len(d.Broke) != 1 || len(d.Flipped) != 0 {
		t.Errorf("diff fixed %v broke %v flipped %v; want 2 fixed (warn → pass, fail → pass), 1 broke", d.Fixed, d.Broke, d.Flipped)
	}
}

func TestCSVOneRowPerCellAndJudgeWithRFC4180Quoting(t *testing.T) {
	led := fixture(t)
	raw := render(t, led, "csv", run1)
	if !bytes.Contains(raw, []byte("\r\n")) {
		t.Error("lines do not end in CRLF (RFC 4180)")
	}
	// The tricky output: quotes doubled, the field quoted as a whole.
	if want := `"a, ""quoted"" | piped` + "\r\n" + `second line,` + "\r\n" + `third"`; !bytes.Contains(raw, []byte(want)) {
		t.Errorf("the tricky output is not quoted as RFC 4180 says; want %q in\n%s", want, raw)
	}
	rows, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	// Two judges: one row per judge that judged a cell (j1, j2, jury), one
	// row for a cell no judge saw (failed check, error, cancel).
	judged, unjudged := 0, 0
	for _, s := range fixtureCells() {
		if len(s.verdicts) > 0 {
			judged += len(s.verdicts)
		} else {
			unjudged++
		}
	}
	if got := len(rows) - 1; got != judged+unjudged {
		t.Fatalf("%d rows, want %d (a row per cell and judge, one per unjudged cell)", got, judged+unjudged)
	}
	var tricky1, view int
	for _, r := range rows[1:] {
		if len(r) != len(csvHeader) {
			t.Fatalf("row of %d fields, want %d: %q", len(r), len(csvHeader), r)
		}
		if r[col["model"]] == "beta|b" && r[col["test"]] == "json_list" {
			tricky1++
			if r[col["output"]] != strings.ReplaceAll(tricky, "\r\n", "\n") {
				t.Errorf("tricky output read back as %q", r[col["output"]])
			}
		}
		if r[col["in_view"]] == "true" {
			view++
		}
		if r[col["model"]] == "alpha" && r[col["test"]] == "arithmetic" && r[col["judge"]] == "j2" && r[col["verdict"]] != "fail" {
			t.Errorf("j2's row on alpha × arithmetic says %q, want its own fail", r[col["verdict"]])
		}
		if r[col["model"]] == "beta|b" && r[col["test"]] == "weather_tool" && (r[col["verdict"]] != "fail" || !strings.Contains(r[col["reason"]], "no tool call")) {
			t.Errorf("the failed check's row %q", r)
		}
	}
	if tricky1 != 3 {
		t.Errorf("%d rows for the tricky cell, want 3 (j1, j2, jury)", tricky1)
	}
	if view != 9+3 { // every jury row, and the three cells no judge saw
		t.Errorf("%d rows in view, want 12", view)
	}
}

func TestMarkdownEscapesAndKeepsTablesWhole(t *testing.T) {
	led := fixture(t)
	md := string(render(t, led, "md", run1, run2))
	for _, want := range []string{
		"## pitwall · demo · run " + run1,
		"### Ranking", "95% Wilson intervals", "| rank | model | pass rate | 95% interval |",
		"### Grid", "| `weather_tool` | tools | ✓ 0.90 | ❌ |",
		"| `summarise` | — | ✓ 0.90 | J-ERR |",
		"`beta\\|b`", "&lt;script&gt;window.\\_\\_pwned=1&lt;/script&gt;",
		"&lt;/script&gt; \\| &lt;img src=x",
		"## Changes: run " + run1 + " → run " + run2,
		"| fixed | `alpha` | `arithmetic` | 1 | warn → pass |",
		"| broke | `alpha` | `json_list` |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if strings.Contains(md, "<script") || strings.Contains(md, "<img") {
		t.Error("raw model markup in the markdown")
	}
	// Every row of a table has as many unescaped pipes as its header.
	var want int
	for i, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "|") {
			want = 0
			continue
		}
		n := strings.Count(line, "|") - strings.Count(line, `\|`)
		if want == 0 {
			want = n
		} else if n != want {
			t.Errorf("line %d has %d cell borders, its table %d: %s", i+1, n, want, line)
		}
	}
}

type jSuites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Skipped  int    `xml:"skipped,attr"`
		Cases    []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Time      string `xml:"time,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
			} `xml:"error"`
			Skipped   *struct{} `xml:"skipped"`
			SystemOut string    `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestJUnitParsesBack(t *testing.T) {
	led := fixture(t)
	raw := render(t, led, "junit", run1)
	if !bytes.HasPrefix(raw, []byte("<?xml")) {
		t.Error("no XML declaration")
	}
	var s jSuites
	if err := xml.Unmarshal(raw, &s); err != nil {
		t.Fatalf("the JUnit XML does not parse: %v\n%s", err, raw)
	}
	if len(s.Suites) != 2 || s.Suites[0].Name != "alpha" || s.Suites[1].Name != "beta|b" {
		t.Fatalf("suites %+v, want alpha and beta|b", s.Suites)
	}
	// alpha: 6 cases, all pass (arithmetic's WARN passes, said in system-out).
	// beta|b: failed check and FAIL verdict are failures, timeout and judge
	// error are errors, the cancel is skipped, json_list passes.
	a, b := s.Suites[0], s.Suites[1]
	if a.Tests != 6 || a.Failures != 0 || a.Errors != 0 || a.Skipped != 0 {
		t.Errorf("alpha %d/%d/%d/%d", a.Tests, a.Failures, a.Errors, a.Skipped)
	}
	if b.Tests != 6 || b.Failures != 2 || b.Errors != 2 || b.Skipped != 1 {
		t.Errorf("beta|b tests %d failures %d errors %d skipped %d; want 6, 2, 2, 1", b.Tests, b.Failures, b.Errors, b.Skipped)
	}
	if s.Tests != 12 || s.Failures != 2 || s.Errors != 2 || s.Skipped != 1 {
		t.Errorf("totals %d/%d/%d/%d", s.Tests, s.Failures, s.Errors, s.Skipped)
	}
	cases := map[string]int{}
	for i, c := range b.Cases {
		cases[c.Name] = i
	}
	if f := b.Cases[cases["weather_tool"]].Failure; f == nil || f.Type != "check" || !strings.Contains(f.Message, "no tool call in the reply") {
		t.Errorf("weather_tool failure %+v", f)
	}
	if f := b.Cases[cases["json_person"]].Failure; f == nil || f.Type != "verdict" || !strings.Contains(f.Text, injected) {
		t.Errorf("json_person failure %+v: want the verdict and the output, intact once parsed", f)
	}
	if e := b.Cases[cases["pick_tool"]].Error; e == nil || e.Type != "timeout" || e.Message != "no reply within 300s" {
		t.Errorf("pick_tool error %+v", e)
	}
	if b.Cases[cases["arithmetic"]].Skipped == nil {
		t.Error("the cancelled cell is not skipped")
	}
	if c := a.Cases[4]; c.Name != "arithmetic" || c.Failure != nil || !strings.Contains(c.SystemOut, "WARN") || c.Classname != "pitwall.alpha" || c.Time != "0.090" {
		t.Errorf("alpha × arithmetic %+v", c)
	}
}

func TestJUnitNamesRepeatsAndRuns(t *testing.T) {
	led := newLedger(t)
	cells := []spec{
		{model: "m", test: "t", repeat: 0, status: "completed", output: "ok\x00\x1b[31m\ufffe", verdicts: map[string]string{"j1": "fail", "j2": "fail", "jury": "fail"}},
		{model: "m", test: "t", repeat: 1, status: "completed", output: "fine", verdicts: map[string]string{"j1": "pass", "j2": "pass", "jury": "pass"}},
	}
	putRun(t, led, "r-a", fixtureStart, cells)
	putRun(t, led, "r-b", fixtureStart.Add(time.Second), cells)
	raw := render(t, led, "junit", "r-a", "r-b")
	var s jSuites
	if err := xml.Unmarshal(raw, &s); err != nil {
		t.Fatalf("control characters in an output broke the XML: %v", err)
	}
	if len(s.Suites) != 2 || s.Suites[0].Name != "r-a/m" || s.Suites[1].Name != "r-b/m" {
		t.Fatalf("suites %+v; want r-a/m and r-b/m", s.Suites)
	}
	c := s.Suites[0].Cases
	if len(c) != 2 || c[0].Name != "t #1" || c[1].Name != "t #2" || c[0].Failure == nil || c[1].Failure != nil {
		t.Fatalf("cases %+v; want t #1 failing and t #2 passing", c)
	}
	if !strings.Contains(c[0].Failure.Text, "ok\ufffd\ufffd[31m") {
		t.Errorf("failure text %q: control characters should read as U+FFFD", c[0].Failure.Text)
	}
}

func TestMarkdownLeavesOutAnEmptyCategoryColumn(t *testing.T) {
	led := newLedger(t)
	putRun(t, led, "r-a", fixtureStart, []spec{{model: "m", test: "t", status: "failed", output: "no"}})
	md := string(render(t, led, "md", "r-a"))
	if !strings.Contains(md, "| test | `m` | pass rate |") || !strings.Contains(md, "| `t` | ❌ | 0% |") {
		t.Errorf("want a grid of test, model and rate only:\n%s", md)
	}
	if strings.Contains(md, "By category") {
		t.Error("a category breakdown of one unknown category")
	}
}
