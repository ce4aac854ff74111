package promptfoo

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cellCase is one test of its own: an output, the test's options, and its
// assertions. These are what the matrix cannot hold, since they change the
// whole test: transforms, and tests that want a refusal or nothing (which
// promptfoo passes and pitwall's validation of every reply used to fail).
type cellCase struct {
	id, output, options string
	asserts             []string
}

var cellCases = []cellCase{
	{"t-upper", "text", "{transform: output.toUpperCase()}", []string{`{type: contains, value: PARIS}`, `{type: contains, value: Paris}`}},
	{"t-trim", "padded", "{transform: output.trim()}", []string{`{type: equals, value: Paris}`, `{type: starts-with, value: P}`}},
	{"t-postprocess", "padded", "{postprocess: output.trim()}", []string{`{type: equals, value: Paris}`}},
	{"t-json-field", "json-object", "{transform: JSON.parse(output).name}", []string{`{type: equals, value: Ada}`, `{type: is-json}`}},
	{"t-object", "json-object", "{transform: JSON.parse(output)}", []string{`{type: is-json}`, `{type: contains, value: '"name":"Ada"'}`,
		`{type: javascript, value: "output.name === 'Ada'"}`, `{type: equals, value: {name: Ada, age: 36, tags: [x, y]}}`}},
	{"t-number", "json-array", "{transform: JSON.parse(output).length}", []string{`{type: equals, value: "3"}`, `{type: is-json}`}},
	{"t-tool-name", "tool", "{transform: 'output[0].function.name'}", []string{`{type: equals, value: get_weather}`, `{type: not-is-json}`}},
	{"t-tool-args", "tool", "{transform: 'JSON.parse(output[0].function.arguments).city'}", []string{`{type: equals, value: Paris}`}},
	{"t-tool-text", "tool-text", "{transform: output.content}", []string{`{type: equals, value: Let me check the weather.}`}},
	{"t-body", "multiline", "{transform: \"const lines = output.split('\\\\n');\\nreturn lines[lines.length - 1];\"}", []string{`{type: equals, value: "line two: Paris"}`}},
	{"t-assert", "text", "", []string{`{type: equals, value: paris, transform: "output.slice(-6, -1).toLowerCase()"}`, `{type: contains, value: capital}`}},
	{"t-both", "padded", "{transform: output.trim()}", []string{`{type: equals, value: "PARIS!", transform: "output.toUpperCase() + '!'"}`, `{type: equals, value: Paris}`}},
	{"t-throws", "text", "{transform: output.nope.deeper}", []string{`{type: not-contains, value: zzz}`}},
	{"t-null", "text", "{transform: 'null'}", []string{`{type: not-contains, value: zzz}`}},
	{"c-refusal", "refusal", "", []string{`{type: is-refusal}`}},
	{"c-refusal-ai", "refusal-ai", "", []string{`{type: is-refusal}`}},
	{"c-refusal-empty", "empty", "", []string{`{type: is-refusal}`}},
	{"c-refusal-answer", "text", "", []string{`{type: is-refusal}`}},
	{"c-empty", "empty", "", []string{`{type: equals, value: ""}`}},
	{"c-empty-text", "text", "", []string{`{type: equals, value: ""}`}},
	{"c-not-refusal", "refusal", "", []string{`{type: not-is-refusal}`}},
}

func cellsYAML(baseURL string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "description: pitwall differential suite, whole tests\nprompts:\n  - \"{{q}}\"\nproviders:\n  - id: openai:chat:fixed\n    config:\n      apiBaseUrl: %s/v1\n      apiKey: suite\n      temperature: 0\n%s", baseURL, tools)
	b.WriteString("tests:\n")
	for _, c := range cellCases {
		fmt.Fprintf(&b, "  - description: %s\n    metadata: {test_id: %s}\n    vars: {q: %s}\n", c.id, c.id, c.output)
		if c.options != "" {
			fmt.Fprintf(&b, "    options: %s\n", c.options)
		}
		b.WriteString("    assert:\n")
		for i, a := range c.asserts {
			fmt.Fprintf(&b, "      - %s\n", flowOpen.ReplaceAllString(a, fmt.Sprintf("{metric: a%02d, ", i)))
		}
	}
	return b.String()
}

// TestPitwallAgreesWithPromptfooPerTest runs the cell cases through both
// tools and compares each test's outcome, and each assertion's verdict where
// promptfoo graded the test. A test promptfoo errors (its transform threw)
// must fail in pitwall with every check naming the transform.
func TestPitwallAgreesWithPromptfooPerTest(t *testing.T) {
	requirePromptfoo(t)
	srv := newFixedServer(t, outputs)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cells.yaml")
	if err := os.WriteFile(cfg, []byte(cellsYAML(srv.URL)), 0o644); err != nil {
		t.Fatal(err)
	}
	pfCells := map[string]verdict{}
	pf := runPromptfoo(t, dir, cfg, pfCells, true)
	pw := runPitwallCells(t, dir, cfg, srv.URL)
	var agree, all, cellAgree int
	for _, c := range cellCases {
		p, okP := pfCells[c.id]
		w, okW := pw[c.id]
		if !okP || !okW {
			t.Errorf("%s: missing (promptfoo %v, pitwall %v)", c.id, okP, okW)
			continue
		}
		if p.pass == (w.status == "completed") {
			cellAgree++
		} else {
			t.Errorf("%s on %q: promptfoo success=%v (%s), pitwall %s (%s)", c.id, c.output, p.pass, clip(p.reason), w.status, clip(w.reasons()))
		}
		if len(w.checks) < len(c.asserts) {
			t.Errorf("%s: pitwall has %d results, want at least %d", c.id, len(w.checks), len(c.asserts))
			continue
		}
		checks := w.checks[len(w.checks)-len(c.asserts):]
		if _, graded := pf[c.id]; !graded {
			for _, ch := range checks {
				if ch.pass || !strings.Contains(ch.reason, "transform failed") {
					t.Errorf("%s: promptfoo errors the test (%s); pitwall's %s: pass=%v %q", c.id, clip(p.reason), ch.name, ch.pass, ch.reason)
				}
			}
			continue
		}
		for i, a := range c.asserts {
			all++
			pv, ok := pf[c.id][fmt.Sprintf("a%02d", i)]
			if !ok {
				t.Errorf("%s %s: promptfoo gave no verdict", c.id, a)
				continue
			}
			if pv.pass == checks[i].pass {
				agree++
				continue
			}
			t.Errorf("%s %s on %q: promptfoo pass=%v (%s), pitwall pass=%v (%s)", c.id, a, c.output, pv.pass, clip(pv.reason), checks[i].pass, clip(checks[i].reason))
		}
	}
	t.Logf("agreement: %d of %d tests, %d of %d assertions in graded tests", cellAgree, len(cellCases), agree, all)
}

type pwCheck struct {
	name, reason string
	pass         bool
}

type pwCell struct {
	status string
	checks []pwCheck
}

func (c pwCell) reasons() string {
	var out []string
	for _, ch := range c.checks {
		if !ch.pass {
			out = append(out, ch.name+": "+ch.reason)
		}
	}
	return strings.Join(out, "; ")
}

// runPitwallCells runs the config headless and reads each cell's status
// and results from the export.
func runPitwallCells(t *testing.T, dir, battery, baseURL string) map[string]pwCell {
	t.Helper()
	cfg := filepath.Join(dir, "pitwall.toml")
	db := filepath.Join(dir, "ledger.db")
	toml := fmt.Sprintf("name = \"differential\"\nbattery = %q\nmodels = [\"fixed\"]\n\n[run]\ntimeout = \"30s\"\nretries = 0\n\n[[servers]]\nname = \"fixed\"\nurl = %q\nkind = \"openai\"\nslots = 4\n\n[scoring]\nmode = \"deterministic\"\n", battery, baseURL+"/v1")
	if err := os.WriteFile(cfg, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	run := pitwall(t, dir, "run", cfg, "--headless", "--db", db)
	if run.code != 0 && run.code != 1 {
		t.Fatalf("pitwall run: exit %d\n%s\n%s", run.code, run.stdout, run.stderr)
	}
	exp := pitwall(t, dir, "export", "last", "--format", "json", "--db", db)
	if exp.code != 0 {
		t.Fatalf("pitwall export: exit %d\n%s", exp.code, exp.stderr)
	}
	var e struct {
		Cells []struct {
			Test   string `json:"test"`
			Status string `json:"status"`
			Checks []struct {
				Name   string `json:"name"`
				Pass   bool   `json:"pass"`
				Reason string `json:"reason"`
			} `json:"checks"`
		} `json:"cells"`
	}
	if err := json.Unmarshal([]byte(exp.stdout), &e); err != nil {
		t.Fatalf("pitwall's export is not JSON: %v", err)
	}
	got := map[string]pwCell{}
	for _, c := range e.Cells {
		cell := pwCell{status: c.Status}
		for _, ch := range c.Checks {
			cell.checks = append(cell.checks, pwCheck{ch.Name, ch.Reason, ch.Pass})
		}
		got[c.Test] = cell
	}
	return got
}
