package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// numbersConfig is a judged run on the simulated fleet with every number
// the table below spoils written out, one per line, so that each case can
// replace one line and know its number.
const numbersConfig = `name = "numbers"
battery = "battery.toml"
models = ["m1"]
[run]
temperature = 0.0
repeat = 1
retries = 0
max_tokens = 64
max_reply_bytes = 1048576
[sim]
time_scale = 0.0
[[sim.models]]
name = "m1"
skill = 0.9
tokens_per_sec = 100.0
reply_tokens = 20
[[sim.models]]
name = "judge"
judge_error_rate = 0.0
[[servers]]
name = "gpu0"
kind = "sim"
slots = 2
models = ["m1", "judge"]
  [servers.sim]
  load_gbps = 6.0
  faults = { error_rate = 0.0 }
[scoring]
mode = "judge"
min_score = 0.5
samples = 1
[[scoring.judges]]
name = "j"
model = "judge"
server = "gpu0"
weight = 1.0
price_in = 0.0
max_tokens = 64
[prices]
m1 = { price_in = 0.1, price_out = 0.2 }
`

// No number in a config, a flag or the environment can panic pitwall or
// exhaust its memory before the first request: NaN and infinities (TOML's
// nan and inf) and sizes past their bounds stop both validate and a
// headless run on the simulated fleet with exit 2, at once, naming the
// field and where it was written.
func TestEveryNumberIsValidatedBeforeTheFirstRequest(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, old, new string
		field          string   // as the message names it
		args           []string // flags added to both commands
		env            []string
	}{
		{"temperature nan", "temperature = 0.0", "temperature = nan", "run.temperature", nil, nil},
		{"temperature inf", "temperature = 0.0", "temperature = inf", "run.temperature", nil, nil},
		{"min_score nan", "min_score = 0.5", "min_score = nan", "scoring.min_score", nil, nil},
		{"a judge's weight inf", "weight = 1.0", "weight = +inf", "scoring.judges[0].weight", nil, nil},
		{"a judge's price nan", "price_in = 0.0", "price_in = nan", "scoring.judges[0].price_in", nil, nil},
		{"a model's price -inf", "m1 = { price_in = 0.1, price_out = 0.2 }", "m1 = { price_in = 0.1, price_out = -inf }", "prices.m1.price_out", nil, nil},
		{"a simulated skill nan", "skill = 0.9", "skill = nan", "sim.models[0].skill", nil, nil},
		{"a simulated rate inf", "tokens_per_sec = 100.0", "tokens_per_sec = inf", "sim.models[0].tokens_per_sec", nil, nil},
		{"a simulated reply of a billion tokens", "reply_tokens = 20", "reply_tokens = 1000000000", "sim.models[0].reply_tokens", nil, nil},
		{"time_scale nan", "time_scale = 0.0", "time_scale = nan", "sim.time_scale", nil, nil},
		{"a fault rate nan", "faults = { error_rate = 0.0 }", "faults = { error_rate = nan }", "servers[0].sim.faults.error_rate", nil, nil},
		{"load_gbps inf", "load_gbps = 6.0", "load_gbps = inf", "servers[0].sim.load_gbps", nil, nil},
		{"a billion slots", "slots = 2", "slots = 1000000000", "servers[0].slots", nil, nil},
		{"a million repeats", "repeat = 1", "repeat = 1000000", "run.repeat", nil, nil},
		{"max_tokens of a billion", "max_tokens = 64\nmax_reply_bytes", "max_tokens = 1000000000\nmax_reply_bytes", "run.max_tokens", nil, nil},
		{"a judge's max_tokens of a billion", "max_tokens = 64\n[prices]", "max_tokens = 1000000000\n[prices]", "scoring.judges[0].max_tokens", nil, nil},
		{"max_reply_bytes of 4 GB", "max_reply_bytes = 1048576", "max_reply_bytes = 4000000000", "run.max_reply_bytes", nil, nil},
		{"a million samples", "samples = 1", "samples = 1000000", "scoring.samples", nil, nil},
		{"a billion retries", "retries = 0", "retries = 1000000000", "run.retries", nil, nil},
		{"--repeat of a million", "", "", "command line: --repeat", []string{"--repeat", "1000000"}, nil},
		{"--judge-samples of a million", "", "", "command line: --judge-samples", []string{"--judge-samples", "1000000"}, nil},
		{"--time-scale nan", "", "", `--time-scale "nan": "nan" is not a time scale`, []string{"--time-scale", "nan"}, nil},
		{"PITWALL_REPEAT of a million", "", "", "environment: PITWALL_REPEAT", nil, []string{"PITWALL_REPEAT=1000000"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "battery.toml", "[[tests]]\nid = \"t1\"\nuser = \"What is 1 plus 1?\"\nreference = \"2\"\n")
			text := numbersConfig
			where := tt.field
			if tt.old != "" {
				if strings.Count(text, tt.old) != 1 {
					t.Fatalf("%q is not one line of the config", tt.old)
				}
				text = strings.Replace(text, tt.old, tt.new, 1)
				line := strings.Count(text[:strings.Index(text, tt.new)], "\n") + 1
				where = fmt.Sprintf("numbers.toml:%d: %s", line, tt.field)
			}
			conf := writeFile(t, dir, "numbers.toml", text)
			db := filepath.Join(dir, "ledger.db")
			for _, args := range [][]string{
				append([]string{"validate", conf, "--db", db}, tt.args...),
				append([]string{"run", conf, "--headless", "--db", db}, tt.args...),
			} {
				start := time.Now()
				code, stdout, stderr := pitwall(t, dir, tt.env, args...)
				took := time.Since(start)
				if code != 2 {
					t.Errorf("%s: exit %d, want 2\nstdout: %s\nstderr: %s", args[0], code, stdout, stderr)
				}
				if !strings.Contains(stderr, where) {
					t.Errorf("%s: the message does not name %q:\n%s", args[0], where, stderr)
				}
				if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") {
					t.Errorf("%s panicked:\n%s", args[0], stderr)
				}
				if took > 10*time.Second {
					t.Errorf("%s took %s to refuse it", args[0], took.Round(time.Millisecond))
				}
			}
		})
	}
}

// The config the table spoils is itself sound: validate and a run accept
// it, so each refusal above is the spoiled number's.
func TestTheNumbersConfigRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "battery.toml", "[[tests]]\nid = \"t1\"\nuser = \"What is 1 plus 1?\"\nreference = \"2\"\n")
	conf := writeFile(t, dir, "numbers.toml", numbersConfig)
	db := filepath.Join(dir, "ledger.db")
	for _, args := range [][]string{{"validate", conf, "--db", db}, {"run", conf, "--headless", "--db", db}} {
		if code, stdout, stderr := pitwall(t, dir, nil, args...); code != 0 && code != 1 {
			t.Errorf("%s: exit %d\n%s\n%s", args[0], code, stdout, stderr)
		}
	}
}
