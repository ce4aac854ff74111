package cli

import (
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// junitDoc is the JUnit XML shape CI systems read, as a test reads it back.
type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Cases    []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// demoOutcomes reads a run's cells back from its JSON export: how many,
// and how many of each outcome.
func demoOutcomes(t *testing.T, db, id string) (cells int, outcomes map[string]int) {
	t.Helper()
	code, out, stderr := inproc(t, "export", id, "--db", db)
	if code != 0 {
		t.Fatalf("export (json by default): exit %d: %s", code, stderr)
	}
	var x struct {
		Run struct {
			ID string `json:"id"`
		} `json:"run"`
		Cells []struct {
			Outcome string `json:"outcome"`
		} `json:"cells"`
		Comparison *struct{} `json:"comparison"`
	}
	if err := json.Unmarshal([]byte(out), &x); err != nil {
		t.Fatalf("the default export is not JSON: %v", err)
	}
	if x.Run.ID != id || x.Comparison == nil {
		t.Fatalf("export of %s names run %q, comparison %v", id, x.Run.ID, x.Comparison != nil)
	}
	outcomes = map[string]int{}
	for _, c := range x.Cells {
		outcomes[c.Outcome]++
	}
	return len(x.Cells), outcomes
}

// Every format of the demo run: each is read back as its readers would
// and checked against the JSON export's cells.
func TestExportWritesEveryFormatOfTheDemoRun(t *testing.T) {
	t.Parallel()
	db, id := demoRun(t, 1)
	cells, outcomes := demoOutcomes(t, db, id)
	if cells != 80 || outcomes["pass"] == 0 || outcomes["fail"] == 0 || outcomes["error"] == 0 {
		t.Fatalf("the demo run has %d cells, outcomes %v; want 80 with passes, fails and errors", cells, outcomes)
	}
	dir := t.TempDir()
	cases := []struct {
		name  string
		args  []string // after "export ID --db DB"; a path is made absolute in dir
		file  string   // where the report lands ("" stdout)
		check func(t *testing.T, text string)
	}{
		{"json by extension", []string{"-o", "run.json"}, "run.json", func(t *testing.T, text string) {
			var v map[string]any
			if err := json.Unmarshal([]byte(text), &v); err != nil || v["cells"] == nil {
				t.Errorf("not the JSON export: %v", err)
			}
		}},
		{"csv", []string{"--format", "csv"}, "", func(t *testing.T, text string) {
			rows, err := csv.NewReader(strings.NewReader(text)).ReadAll()
			if err != nil {
				t.Fatalf("not CSV: %v", err)
			}
			// The demo runs one judge: one row per cell, under a header.
			if len(rows) != cells+1 || rows[0][0] != "run" || rows[1][0] != id {
				t.Errorf("%d rows, first %v; want a header and %d cells of run %s", len(rows), rows[0], cells, id)
			}
		}},
		{"markdown", []string{"--format", "markdown", "-o", "run.txt"}, "run.txt", func(t *testing.T, text string) {
			for _, w := range []string{id, "| ", "qwen3-8b", "weather_tool"} {
				if !strings.Contains(text, w) {
					t.Errorf("the markdown lacks %q", w)
				}
			}
		}},
		{"html", []string{"-o", "run.html"}, "run.html", func(t *testing.T, text string) {
			if !strings.Contains(text, "<html") || !strings.Contains(text, id) {
				t.Errorf("not the HTML report of %s", id)
			}
			for _, remote := range []string{`src="http`, `href="http`, "cdn."} {
				if strings.Contains(text, remote) {
					t.Errorf("the page loads something from the network (%q): it must stand alone", remote)
				}
			}
		}},
		{"junit", []string{"-o", "junit.xml"}, "junit.xml", func(t *testing.T, text string) {
			var doc junitDoc
			if err := xml.Unmarshal([]byte(text), &doc); err != nil {
				t.Fatalf("not XML: %v", err)
			}
			if len(doc.Suites) != 5 || doc.Tests != cells {
				t.Fatalf("%d testsuites, %d tests; want one suite per model (5) and %d tests", len(doc.Suites), doc.Tests, cells)
			}
			failures, errs := 0, 0
			for _, s := range doc.Suites {
				if s.Tests != len(s.Cases) || s.Tests != 16 {
					t.Errorf("suite %s: tests=%d with %d testcases, want 16", s.Name, s.Tests, len(s.Cases))
				}
				for _, c := range s.Cases {
					if c.Failure != nil {
						failures++
						if c.Failure.Message == "" {
							t.Errorf("%s × %s: a failure with no message", s.Name, c.Name)
						}
					}
					if c.Error != nil {
						errs++
					}
				}
			}
			if failures != outcomes["fail"] || failures != doc.Failures {
				t.Errorf("%d <failure>s (root says %d), want the %d failed cells", failures, doc.Failures, outcomes["fail"])
			}
			if errs != outcomes["error"]+outcomes["judge-error"] || errs != doc.Errors {
				t.Errorf("%d <error>s (root says %d), want %d", errs, doc.Errors, outcomes["error"]+outcomes["judge-error"])
			}
		}},
		{"text", []string{"--format", "text"}, "", func(t *testing.T, text string) {
			if !strings.Contains(text, "rank") || !strings.Contains(text, "qwen3-8b") {
				t.Errorf("not the comparison's table:\n%s", text)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"export", id, "--db", db}
			for i, a := range tc.args {
				if i > 0 && tc.args[i-1] == "-o" {
					a = filepath.Join(dir, a)
				}
				args = append(args, a)
			}
			code, out, stderr := inproc(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			text := out
			if tc.file != "" {
				if out != "" {
					t.Errorf("-o given, yet %d bytes on stdout", len(out))
				}
				raw, err := os.ReadFile(filepath.Join(dir, tc.file))
				if err != nil {
					t.Fatal(err)
				}
				text = string(raw)
			}
			tc.check(t, text)
		})
	}
}

func TestExportOfSeveralRunsCarriesTheirComparison(t *testing.T) {
	t.Parallel()
	db, a := demoRun(t, 1)
	_, b := demoRun(t, 2)
	code, out, stderr := inproc(t, "export", a, b, "--db", db, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Runs []struct {
			Run struct{ ID string } `json:"run"`
		} `json:"runs"`
		Comparison struct {
			Diffs []json.RawMessage `json:"diffs"`
		} `json:"comparison"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Runs) != 2 || doc.Runs[0].Run.ID != a || doc.Runs[1].Run.ID != b || len(doc.Comparison.Diffs) != 1 {
		t.Errorf("runs %+v, %d diffs; want %s then %s and one diff", doc.Runs, len(doc.Comparison.Diffs), a, b)
	}
}

func TestExportRefusesWhatItCannotWrite(t *testing.T) {
	t.Parallel()
	db, id := demoRun(t, 1)
	dir := t.TempDir()
	keep := filepath.Join(dir, "keep.json")
	if err := os.WriteFile(keep, []byte("earlier"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown format", []string{id, "--format", "pdf"}, "use one of json, csv, md, html, junit, text"},
		{"extension says nothing", []string{id, "-o", filepath.Join(dir, "report")}, "no extension"},
		{"no run", nil, "name one run"},
		{"unknown run keeps the file", []string{"nope", "-o", keep}, "nope"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := inproc(t, append([]string{"export", "--db", db}, tc.args...)...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
			}
		})
	}
	if raw, _ := os.ReadFile(keep); string(raw) != "earlier" {
		t.Errorf("a failed export changed -o's file to %q", raw)
	}
}

func TestExportHelpListsEveryFormat(t *testing.T) {
	t.Parallel()
	code, _, stderr := inproc(t, "export", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, f := range []string{"json", "csv", "md", "html", "junit", "text", ".xml"} {
		if !strings.Contains(stderr, f) {
			t.Errorf("export --help does not list %q:\n%s", f, stderr)
		}
	}
}
