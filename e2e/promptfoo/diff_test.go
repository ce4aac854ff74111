package promptfoo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"pitwall/internal/reap"
)

// expectedDifferences are the (output, assertion) pairs where pitwall
// deliberately gives another verdict than promptfoo, each with why; README's
// table lists the same. A pair listed here that comes to agree fails the
// suite as well, so that a change either way is noticed.
var expectedDifferences = map[string]string{
	"truncated/a36": truncatedJSON,
	"truncated/a37": truncatedJSON,
	"truncated/a38": truncatedJSON,
}

const truncatedJSON = "promptfoo repairs a JSON object cut off mid-way and finds it; pitwall finds only JSON that parses"

// tools is what the provider offers, for is-valid-openai-tools-call.
const tools = `
      tools:
        - type: function
          function:
            name: get_weather
            description: Current weather for a city
            parameters: {type: object, properties: {city: {type: string}}, required: [city], additionalProperties: false}
        - type: function
          function:
            name: get_time
            description: Current time in a zone
            parameters: {type: object, properties: {zone: {type: string}}, required: [zone]}
`

var flowOpen = regexp.MustCompile(`^\{`)

// suiteYAML is the promptfoo config both tools run: one test per output,
// each with every assertion of the matrix, named by metric so that the two
// result files can be joined.
func suiteYAML(baseURL string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "description: pitwall differential suite\nprompts:\n  - \"{{q}}\"\nproviders:\n  - id: openai:chat:fixed\n    config:\n      apiBaseUrl: %s/v1\n      apiKey: suite\n      temperature: 0\n%s", baseURL, tools)
	b.WriteString("tests:\n")
	for _, key := range slices.Sorted(mapsKeys(outputs)) {
		fmt.Fprintf(&b, "  - description: %s\n    metadata: {test_id: %s}\n    vars: {q: %s}\n    assert:\n", key, key, key)
		for i, a := range matrix {
			fmt.Fprintf(&b, "      - %s\n", flowOpen.ReplaceAllString(a, fmt.Sprintf("{metric: a%02d, ", i)))
		}
	}
	return b.String()
}

func mapsKeys[V any](m map[string]V) iter.Seq[string] { return maps.Keys(m) }

// verdict is one assertion's outcome in one tool.
type verdict struct {
	pass   bool
	reason string
}

// runPromptfoo runs promptfoo eval and reads its verdicts: test id →
// metric → verdict. cells, when not nil, gets each test's own outcome
// (success, and the error of a test promptfoo could not grade, which then
// fails the suite unless allowErrors).
func runPromptfoo(t *testing.T, dir, cfg string, cells map[string]verdict, allowErrors bool) map[string]map[string]verdict {
	t.Helper()
	ctx, cancel := reap.Step(t, 5*time.Minute)
	defer cancel()
	out := filepath.Join(dir, "promptfoo.json")
	cmd := exec.CommandContext(ctx, promptfooBin, "eval", "-c", cfg, "-o", out, "--no-cache", "--no-progress-bar", "--no-write", "--no-table", "-j", "4")
	cmd.Dir = dir
	// node and whatever it starts are one group: ended together on the
	// step's deadline, and by the watchdog if this binary dies first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	cmd.Env = append(os.Environ(),
		"HOME="+dir, "PROMPTFOO_CONFIG_DIR="+filepath.Join(dir, ".promptfoo"),
		"PROMPTFOO_DISABLE_TELEMETRY=1", "PROMPTFOO_DISABLE_UPDATE=1", "PROMPTFOO_DISABLE_REMOTE_GENERATION=1",
		"PROMPTFOO_DISABLE_SHARING=1", "PROMPTFOO_DISABLE_REDTEAM_REMOTE_GENERATION=1", "PROMPTFOO_SELF_HOSTED=1",
		"PROMPTFOO_DISABLE_WAL_MODE=1", "OPENAI_API_KEY=suite", "NO_COLOR=1", "CI=true")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	var err error
	if err = cmd.Start(); err == nil {
		release, rerr := reap.Group(cmd.Process.Pid)
		if rerr != nil {
			t.Fatal(rerr)
		}
		err = cmd.Wait()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what node left running
		release()
	}
	data, rerr := os.ReadFile(out)
	if rerr != nil {
		t.Fatalf("promptfoo eval wrote no results (%v, %v):\n%s", err, rerr, tail(stderr.String(), 4000))
	}
	var res struct {
		Results struct {
			Results []struct {
				TestCase struct {
					Metadata map[string]any `json:"metadata"`
				} `json:"testCase"`
				Success       bool   `json:"success"`
				Error         string `json:"error"`
				GradingResult *struct {
					ComponentResults []struct {
						Pass      bool   `json:"pass"`
						Reason    string `json:"reason"`
						Assertion *struct {
							Metric string `json:"metric"`
						} `json:"assertion"`
					} `json:"componentResults"`
				} `json:"gradingResult"`
			} `json:"results"`
		} `json:"results"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatalf("promptfoo's results are not JSON: %v", err)
	}
	got := map[string]map[string]verdict{}
	for _, r := range res.Results.Results {
		id, _ := r.TestCase.Metadata["test_id"].(string)
		cells[id] = verdict{r.Success, r.Error}
		if r.GradingResult == nil {
			if !allowErrors {
				t.Errorf("promptfoo gave test %s no grading (error %q)", id, r.Error)
			}
			continue
		}
		m := map[string]verdict{}
		for _, c := range r.GradingResult.ComponentResults {
			if c.Assertion == nil || c.Assertion.Metric == "" {
				continue
			}
			m[c.Assertion.Metric] = verdict{c.Pass, c.Reason}
		}
		got[id] = m
	}
	return got
}

// runPitwall runs the same config headless against the same server and
// reads the verdicts of the export: test id → metric → verdict. The checks
// of a cell come after its automatic validation, one per assertion (two for
// the assert-set, which passes when both do).
func runPitwall(t *testing.T, dir, battery, baseURL string) map[string]map[string]verdict {
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
			Error  string `json:"error"`
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
	widths := make([]int, len(matrix))
	total := 0
	for i, a := range matrix {
		widths[i] = 1
		if strings.Contains(a, "type: assert-set") {
			widths[i] = strings.Count(a, "{type:") - 1
		}
		total += widths[i]
	}
	got := map[string]map[string]verdict{}
	for _, c := range e.Cells {
		if len(c.Checks) < total {
			t.Errorf("pitwall cell %s (%s %s) has %d results, want at least the matrix's %d checks", c.Test, c.Status, c.Error, len(c.Checks), total)
			continue
		}
		checks := c.Checks[len(c.Checks)-total:]
		m := map[string]verdict{}
		k := 0
		for i, w := range widths {
			v := verdict{pass: true}
			var names []string
			for _, ch := range checks[k : k+w] {
				names = append(names, ch.Name)
				if !ch.Pass {
					v = verdict{false, ch.Reason}
				}
			}
			if v.pass {
				v.reason = strings.Join(names, "; ")
			}
			m[fmt.Sprintf("a%02d", i)] = v
			k += w
		}
		got[c.Test] = m
	}
	return got
}

type cmdResult struct {
	code           int
	stdout, stderr string
}

func pitwall(t *testing.T, dir string, args ...string) cmdResult {
	t.Helper()
	ctx, cancel := reap.Step(t, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, pitwallBin, args...)
	cmd.Dir = dir
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PITWALL_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "NO_COLOR=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := cmdResult{stdout: stdout.String(), stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("pitwall %s: %v", strings.Join(args, " "), err)
	}
	return r
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// TestPitwallAgreesWithPromptfooPerAssertion runs the matrix through both
// tools and compares every assertion's verdict.
func TestPitwallAgreesWithPromptfooPerAssertion(t *testing.T) {
	requirePromptfoo(t)
	srv := newFixedServer(t, outputs)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "suite.yaml")
	if err := os.WriteFile(cfg, []byte(suiteYAML(srv.URL)), 0o644); err != nil {
		t.Fatal(err)
	}
	pf := runPromptfoo(t, dir, cfg, map[string]verdict{}, false)
	pw := runPitwall(t, dir, cfg, srv.URL)
	if len(srv.unknown) > 0 {
		t.Errorf("the server was asked prompts it does not know: %q", srv.unknown)
	}
	compare(t, pf, pw)
}

// compare reports agreement per assertion and per type, and fails on every
// disagreement not listed in expectedDifferences and every listed one that
// agrees.
func compare(t *testing.T, pf, pw map[string]map[string]verdict) {
	t.Helper()
	type count struct{ agree, all int }
	perType := map[string]*count{}
	var agree, all int
	var unexpected []string
	for _, key := range slices.Sorted(mapsKeys(outputs)) {
		for i, a := range matrix {
			metric := fmt.Sprintf("a%02d", i)
			name := key + "/" + metric
			p, okP := pf[key][metric]
			w, okW := pw[key][metric]
			if !okP || !okW {
				t.Errorf("%s %s: missing a verdict (promptfoo %v, pitwall %v)", name, a, okP, okW)
				continue
			}
			typ := assertType(a)
			if perType[typ] == nil {
				perType[typ] = &count{}
			}
			all++
			perType[typ].all++
			why, expected := expectedDifferences[name]
			if p.pass == w.pass {
				agree++
				perType[typ].agree++
				if expected {
					t.Errorf("%s %s: listed as a difference (%s) but both now say pass=%v", name, a, why, p.pass)
				}
				continue
			}
			if !expected {
				unexpected = append(unexpected, fmt.Sprintf("%s %s on %q: promptfoo pass=%v (%s), pitwall pass=%v (%s)",
					name, a, key, p.pass, clip(p.reason), w.pass, clip(w.reason)))
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "agreement: %d of %d assertions (%.1f%%)\n", agree, all, 100*float64(agree)/float64(max(all, 1)))
	for _, typ := range slices.Sorted(mapsKeys(perType)) {
		c := perType[typ]
		fmt.Fprintf(&b, "  %-28s %3d/%3d\n", typ, c.agree, c.all)
	}
	t.Log(b.String())
	for _, u := range unexpected {
		t.Error(u)
	}
	if all > 0 && float64(agree) < 0.99*float64(all) {
		t.Errorf("agreement %.1f%% is under 99%%", 100*float64(agree)/float64(all))
	}
}

var typeOf = regexp.MustCompile(`type: ([\w-]+)`)

func assertType(a string) string {
	if m := typeOf.FindStringSubmatch(a); m != nil {
		return m[1]
	}
	return "?"
}

func clip(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
