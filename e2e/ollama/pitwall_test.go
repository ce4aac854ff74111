package ollama

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// result is one finished pitwall command.
type result struct {
	args   []string
	code   int
	stdout string
	stderr string
	wall   time.Duration
}

func (r result) String() string {
	return fmt.Sprintf("pitwall %s → exit %d in %s\n--- stdout ---\n%s--- stderr ---\n%s", strings.Join(r.args, " "), r.code,
		r.wall.Round(time.Millisecond), r.stdout, r.stderr)
}

// pitwallEnv is the caller's environment without PITWALL_* variables, so that
// only the suite's configs and flags decide what a command does.
func pitwallEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PITWALL_") {
			env = append(env, kv)
		}
	}
	return append(env, "NO_COLOR=1")
}

// pitwall runs the binary in dir and returns what it did; it fails the test
// only when the command cannot be run or outlives ctx.
func pitwall(ctx context.Context, t *testing.T, dir string, args ...string) result {
	t.Helper()
	cmd := exec.CommandContext(ctx, pitwallBin, args...)
	cmd.Dir = dir
	cmd.Env = pitwallEnv()
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{args: args, stdout: stdout.String(), stderr: stderr.String(), wall: time.Since(start)}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case ctx.Err() != nil:
		t.Fatalf("pitwall %s did not finish in time (%v)\n%s", strings.Join(args, " "), ctx.Err(), r)
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	default:
		t.Fatalf("pitwall %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// fixture is a directory with a config, a battery and a ledger for one test.
type fixture struct {
	dir    string
	config string
	db     string
}

type configOpts struct {
	models   []string
	kind     string // "" leaves kind out (pitwall detects it)
	slots    int
	timeout  string
	retries  int
	serverOf string // the server URL; default the suite's Ollama
	battery  string // the battery's TOML; default battery
	// judge, when set, is the judge's model on the suite's server
	// ([scoring] mode = "judge", one [[scoring.judges]] named judgeName);
	// "" scores with the checks alone.
	judge          string
	judgeMaxTokens int
}

// judgeName is the name of the judge a fixture with configOpts.judge declares.
const judgeName = "tj"

// newFixture writes battery.toml and pitwall.toml into a fresh directory.
func newFixture(t *testing.T, o configOpts) fixture {
	t.Helper()
	dir := t.TempDir()
	if o.battery == "" {
		o.battery = battery
	}
	if err := os.WriteFile(filepath.Join(dir, "battery.toml"), []byte(o.battery), 0o644); err != nil {
		t.Fatal(err)
	}
	if o.slots == 0 {
		o.slots = 2
	}
	if o.timeout == "" {
		o.timeout = "60s"
	}
	if o.serverOf == "" {
		o.serverOf = srv.baseURL() + "/v1"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "name    = %q\nbattery = \"battery.toml\"\nmodels  = %s\n\n", t.Name(), tomlList(o.models))
	fmt.Fprintf(&b, "[run]\ntimeout     = %q\nmax_tokens  = 16\ntemperature = 0.0\nseed        = 42\nretries     = %d\n\n", o.timeout, o.retries)
	fmt.Fprintf(&b, "[[servers]]\nname  = \"ollama\"\nurl   = %q\n", o.serverOf)
	if o.kind != "" {
		fmt.Fprintf(&b, "kind  = %q\n", o.kind)
	}
	fmt.Fprintf(&b, "slots = %d\n\n", o.slots)
	if o.judge == "" {
		fmt.Fprintf(&b, "[scoring]\nmode = \"deterministic\"\n")
	} else {
		fmt.Fprintf(&b, "[scoring]\nmode = \"judge\"\n\n[[scoring.judges]]\nname       = %q\nmodel      = %q\nserver     = \"ollama\"\n", judgeName, o.judge)
		if o.judgeMaxTokens > 0 {
			fmt.Fprintf(&b, "max_tokens = %d\n", o.judgeMaxTokens)
		}
	}
	f := fixture{dir: dir, config: filepath.Join(dir, "pitwall.toml"), db: filepath.Join(dir, "ledger.db")}
	if err := os.WriteFile(f.config, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func tomlList(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// battery has six short tests: plain prompts, a system prompt, JSON mode, a
// JSON schema and a tool. Against random weights the checks mostly fail;
// what matters is that every cell ends.
const battery = `
[[tests]]
id = "hello"
category = "instructions"
user = "Say hello in one word."
  [[tests.checks]]
  type = "icontains"
  value = "hello"

[[tests]]
id = "capital"
category = "knowledge"
user = "What is the capital of Japan? One word."
  [[tests.checks]]
  type = "icontains"
  value = "Tokyo"

[[tests]]
id = "pirate"
category = "instructions"
system = "You are a pirate. Answer like one."
user = "How is the weather?"
  [[tests.checks]]
  type = "not-refusal"

[[tests]]
id = "colours_json"
category = "json"
user = "List red, green and blue as JSON: an object whose key colours holds an array."
response_format = { type = "json_object" }
  [[tests.checks]]
  type = "is-json"

[[tests]]
id = "order_schema"
category = "json"
user = "Return '3 apples' as JSON with item and quantity."
  [tests.response_format]
  type = "json_schema"
  name = "order"
  schema = { type = "object", properties = { item = { type = "string" }, quantity = { type = "integer" } }, required = ["item", "quantity"] }
  [[tests.checks]]
  type = "is-json"

[[tests]]
id = "weather_tool"
category = "tools"
user = "What's the weather in Paris?"
tool_choice = "auto"
  [[tests.tools]]
  type = "function"
    [tests.tools.function]
    name = "get_weather"
    description = "Current weather for a city"
    parameters = { type = "object", properties = { city = { type = "string" } }, required = ["city"] }
  [[tests.checks]]
  type = "tool-call"
  name = "get_weather"
`

const batteryTests = 6

// export is the part of `pitwall export RUN --format json` the suite reads.
type export struct {
	Run struct {
		ID       string `json:"id"`
		Status   string `json:"status"`
		Message  string `json:"message"`
		ExitCode *int   `json:"exit_code"`
	} `json:"run"`
	Judge  string            `json:"judge"`
	Judges []string          `json:"judges"`
	Models []json.RawMessage `json:"models"`
	Cells  []struct {
		Model      string  `json:"model"`
		Test       string  `json:"test"`
		Repeat     int     `json:"repeat"`
		Status     string  `json:"status"`
		Outcome    string  `json:"outcome"`
		Verdict    *string `json:"verdict"`
		Output     string  `json:"output"`
		Server     string  `json:"server"`
		ErrorClass string  `json:"error_class"`
		Error      string  `json:"error"`
		Judgments  map[string]struct {
			Verdict string `json:"verdict"`
			Error   string `json:"error"`
			Samples []struct {
				Raw string `json:"raw"`
			} `json:"samples"`
		} `json:"judgments"`
	} `json:"cells"`
	Requests []struct {
		Purpose          string `json:"purpose"`
		Model            string `json:"model"`
		Test             string `json:"test"`
		Repeat           int    `json:"repeat"`
		Judge            string `json:"judge"`
		CandidateModel   string `json:"candidate_model"`
		Status           string `json:"status"`
		CompletionTokens int    `json:"completion_tokens"`
		ErrorClass       string `json:"error_class"`
		Error            string `json:"error"`
	} `json:"requests"`
	Summary json.RawMessage `json:"summary"`
}

// exportLast reads the last run of the fixture's ledger.
func exportLast(t *testing.T, f fixture) export {
	t.Helper()
	ctx, cancel := stepContext(t, 30*time.Second)
	defer cancel()
	r := pitwall(ctx, t, f.dir, "export", "last", "--format", "json", "--db", f.db)
	if r.code != 0 {
		t.Fatalf("export failed:\n%s", r)
	}
	var e export
	if err := json.Unmarshal([]byte(r.stdout), &e); err != nil {
		t.Fatalf("export is not JSON: %v\n%s", err, r.stdout)
	}
	return e
}

var terminal = map[string]bool{"completed": true, "failed": true, "error": true, "cancelled": true}

// checkAllTerminal fails t unless the export has want cells, each in a terminal state.
func checkAllTerminal(t *testing.T, e export, want int) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for _, c := range e.Cells {
		counts[c.Status]++
		if !terminal[c.Status] {
			t.Errorf("cell %s × %s (repeat %d) is %q, not terminal", c.Model, c.Test, c.Repeat, c.Status)
		}
	}
	if len(e.Cells) != want {
		t.Errorf("export has %d cells, want %d", len(e.Cells), want)
	}
	return counts
}

// requestSummary counts the ledger's requests by purpose, model, status and error class.
func requestSummary(e export) string {
	counts := map[string]int{}
	var keys []string
	for _, r := range e.Requests {
		k := fmt.Sprintf("%s %s %s %s", r.Purpose, r.Model, r.Status, r.ErrorClass)
		if counts[k] == 0 {
			keys = append(keys, k)
		}
		counts[k]++
	}
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %3d × %s\n", counts[k], k)
	}
	return b.String()
}

func cellTable(e export) string {
	var b strings.Builder
	for _, c := range e.Cells {
		out := c.Output
		if len(out) > 40 {
			out = out[:40] + "…"
		}
		fmt.Fprintf(&b, "  %-14s %-13s r%d %-9s %-10s %q %s\n", c.Model, c.Test, c.Repeat, c.Status, c.ErrorClass, out, c.Error)
	}
	return b.String()
}
