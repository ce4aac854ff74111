package cli

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"pitwall/gpu/chat"
)

// starter is what `pitwall init` writes: the servers it found and what
// each offers, or, when it found none, the simulator in their place.
type starter struct {
	When    time.Time
	Battery string          // the battery's file name, beside the config
	Servers []starterServer // found, in probe order; none: the simulator
	Missed  []string        // what was probed and did not answer, for the header
	Judge   *starterJudge   // nil: none suggested
}

// starterServer is one server found.
type starterServer struct {
	Name    string
	URL     string
	Kind    chat.Kind
	Label   string   // how the header names it ("LM Studio", "a pitwall simulator imitating vLLM")
	Slots   int      // what the server reports; 0 when it does not say
	Models  []string // chat models it offers, exact
	Skipped []string // models it offers that are not for chat (embeddings)
}

// starterJudge is the judge suggested.
type starterJudge struct {
	Model, Server string
	Size          float64 // billions of parameters, from the name
}

// defaultSlots is a server's slots when it does not say how many requests
// it runs at once.
const defaultSlots = 2

// starterModels are the models to test: every chat model found, once, in
// the servers' order; the suggested judge is left out when another model
// remains, so that it does not grade its own replies.
func (s starter) starterModels() []string {
	var out []string
	for _, sv := range s.Servers {
		for _, m := range sv.Models {
			if !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	if s.Judge != nil && len(out) > 1 {
		out = slices.DeleteFunc(out, func(m string) bool { return m == s.Judge.Model })
	}
	return out
}

// suggestJudge picks the largest chat model by the size its name gives
// ("70b", "8x7b", "360m"), the first in name order among equals; nil when
// no name says a size, or when only one model was found (it would judge
// itself).
func suggestJudge(servers []starterServer) *starterJudge {
	var best *starterJudge
	count := 0
	seen := map[string]bool{}
	for _, sv := range servers {
		for _, m := range sv.Models {
			if !seen[m] {
				seen[m] = true
				count++
			}
			size := paramsB(m)
			if size <= 0 {
				continue
			}
			if best == nil || size > best.Size || (size == best.Size && m < best.Model) {
				best = &starterJudge{Model: m, Server: sv.Name, Size: size}
			}
		}
	}
	if count < 2 {
		return nil
	}
	return best
}

// sizeRE finds a parameter count in a model name: "8b", "70B", "1.5b",
// "8x7b" (a mixture: 56), "360m", each standing apart from letters
// ("gpt-4b" counts, "bf16" and "q4_k_m" do not).
var sizeRE = regexp.MustCompile(`(?i)(?:^|[^a-z0-9.])(?:(\d+)x)?(\d+(?:\.\d+)?)([bm])(?:$|[^a-z0-9])`)

// paramsB is a model's size in billions of parameters as its name says;
// 0 when it says none.
func paramsB(name string) float64 {
	best := 0.0
	for _, m := range sizeRE.FindAllStringSubmatch(name, -1) {
		n, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			continue
		}
		if m[1] != "" {
			k, _ := strconv.ParseFloat(m[1], 64)
			n *= k
		}
		if strings.EqualFold(m[3], "m") {
			n /= 1000
		}
		best = max(best, n)
	}
	return best
}

// chatModel says whether a listed model is for chat: embedding models are
// listed beside chat models by LM Studio, Ollama and vLLM.
func chatModel(name string) bool {
	n := strings.ToLower(name)
	return !strings.Contains(n, "embed") && !strings.Contains(n, "rerank")
}

// render writes the starter config.
func (s starter) render() string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	date := s.When.Format("2006-01-02")
	if len(s.Servers) == 0 {
		w("# pitwall.toml, written by `pitwall init` on %s. NO SERVER WAS FOUND:\n", date)
		for _, m := range s.Missed {
			w("#   %s\n", m)
		}
		w(`#
# Until one answers, this config runs on pitwall's simulator: kind = "sim"
# servers are started in-process on loopback and spoken to over real HTTP,
# so ` + "`pitwall run`" + ` works now, with made-up models. Once your server is up,
# run ` + "`pitwall init --force`" + ` again, or replace the simulated server below
# with yours:
#
#   [[servers]]
#   name  = "lmstudio"
#   url   = "http://127.0.0.1:1234/v1"   # LM Studio 1234, Ollama 11434, llama.cpp 8080, vLLM 8000
#   kind  = "lmstudio"                   # openai | lmstudio | ollama | llamacpp | vllm
#   slots = 2                            # requests it runs at once
#
# and list its models below, named exactly as it lists them (pitwall servers
# shows them).
`)
	} else {
		w("# pitwall.toml, written by `pitwall init` on %s from the servers it found:\n", date)
		for _, sv := range s.Servers {
			w("#   %s at %s: %s\n", sv.Label, sv.URL, plural(len(sv.Models), "chat model"))
		}
		for _, m := range s.Missed {
			w("#   %s\n", m)
		}
		w("#\n# Edit freely: `pitwall validate` checks it, `pitwall run` runs it, and\n# `pitwall servers` shows what the servers offer now.\n")
	}
	w("\nname    = %s\n", tomlString("starter"))
	w("battery = %s   # the tests: a small starter set beside this file; add your own\n\n", tomlString(s.Battery))

	models := s.starterModels()
	if len(s.Servers) == 0 {
		models = []string{"sim-small", "sim-large"}
	}
	w("# The models to test, named exactly as the servers list them. Keep the\n# ones you want to compare; `--models a,b` picks some for one run.\n")
	w("models = %s\n", tomlList(models))
	w(`
[run]
timeout     = "300s"   # per request, counted from dispatch
max_tokens  = 1024
temperature = 0.0
seed        = 42
retries     = 2        # transient errors only (timeouts, 5xx, a server down)
`)
	if len(s.Servers) == 0 {
		s.renderSim(w)
	}
	for _, sv := range s.Servers {
		w("\n[[servers]]\n")
		w("name  = %s\n", tomlString(sv.Name))
		w("url   = %s\n", tomlString(sv.URL))
		w("kind  = %s\n", tomlString(string(sv.Kind)))
		if sv.Slots > 0 {
			w("slots = %d   # as the server reports\n", sv.Slots)
		} else {
			w("slots = %d   # the server does not say how many requests it runs at once: match its settings\n", defaultSlots)
		}
		if len(sv.Skipped) > 0 {
			w("# also offers %s, left out of models (not chat models)\n", strings.Join(sv.Skipped, ", "))
		}
	}
	s.renderScoring(w)
	return b.String()
}

func (s starter) renderSim(w func(string, ...any)) {
	w(`
[sim]
time_scale = 0.1   # the simulated servers run ten times faster than real ones

[[sim.models]]
name = "sim-small"
size_gb = 3.0
tokens_per_sec = 150
ttft = "120ms"
skill = 0.55

[[sim.models]]
name = "sim-large"
size_gb = 8.0
tokens_per_sec = 80
ttft = "300ms"
skill = 0.85

[[sim.models]]
name = "sim-judge"
size_gb = 9.0
tokens_per_sec = 160
ttft = "150ms"
judge_error_rate = 0.02

[[servers]]
name   = "sim"
kind   = "sim"       # simulated: replace with your server (see the top of this file)
slots  = 2
models = ["sim-small", "sim-large", "sim-judge"]
`)
}

func (s starter) renderScoring(w func(string, ...any)) {
	j := s.Judge
	if len(s.Servers) == 0 {
		j = &starterJudge{Model: "sim-judge", Server: "sim"}
	}
	if j == nil {
		w(`
[scoring]
# No judge is suggested (no model name says its size, or only one model was
# found): the battery's checks decide. To have a model grade the replies
# against each test's criteria, name one the servers offer:
mode = "deterministic"
# mode = "judge"
# [[scoring.judges]]
# name   = "judge"
# model  = "MODEL"
# server = "SERVER"
`)
		return
	}
	why := fmt.Sprintf("the largest model found, by its name (%s parameters)", sizeText(j.Size))
	if len(s.Servers) == 0 {
		why = "a simulated judge model"
	}
	w(`
[scoring]
# A judge grades each reply against its test's criteria after the checks.
# Suggested: %s.
# It is left out of models so that it never grades its own replies: a judge
# you do not test, larger than the models you do, is the usual choice.
mode      = "judge"
samples   = 1      # votes per cell; 3 shows how stable a verdict is
min_score = 0.5

[[scoring.judges]]
name   = "judge"
model  = %s
server = %s
`, why, tomlString(j.Model), tomlString(j.Server))
}

func sizeText(b float64) string {
	if b < 1 {
		return strconv.FormatFloat(b*1000, 'f', -1, 64) + "M"
	}
	return strconv.FormatFloat(b, 'f', -1, 64) + "B"
}

// tomlString writes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// tomlList writes a TOML array of strings, one per line past three.
func tomlList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = tomlString(s)
	}
	if len(q) <= 3 {
		return "[" + strings.Join(q, ", ") + "]"
	}
	return "[\n  " + strings.Join(q, ",\n  ") + ",\n]"
}

// starterBattery is the starter battery: a few short tests with checks, so
// that a run says something with or without a judge.
const starterBattery = `# A starter battery written by ` + "`pitwall init`" + `: five short tests, each with
# deterministic checks (they decide without a judge) and criteria (what a
# judge checks). Add your own tests in the same shape; pitwall's
# docs/batteries.md lists every field and docs/checks.md every check.

[[tests]]
id = "arithmetic"
category = "reasoning"
user = "What is 17 times 23? Give only the number."
criteria = "The answer is 391, with nothing else."
reference = "391"
  [[tests.checks]]
  type = "contains"
  value = "391"

[[tests]]
id = "capital"
category = "knowledge"
user = "What is the capital of Japan? Answer in one word."
criteria = "The model answers Tokyo, in one word."
reference = "Tokyo"
  [[tests.checks]]
  type = "icontains"
  value = "tokyo"

[[tests]]
id = "json_person"
category = "json"
user = 'Return a JSON object with keys "name" (string) and "age" (number) for a 30-year-old named Ada. Only the JSON.'
criteria = "The reply is a JSON object with name Ada and age 30, and nothing else."
reference = '{"name": "Ada", "age": 30}'
  [[tests.checks]]
  type = "is-json"

[[tests]]
id = "weather_tool"
category = "tools"
user = "What's the weather in Paris right now?"
tool_choice = "auto"
criteria = "The model calls get_weather for Paris and does not invent a forecast."
reference = 'get_weather({"city": "Paris"})'
  [[tests.tools]]
  type = "function"
    [tests.tools.function]
    name = "get_weather"
    description = "Current weather for a city"
    parameters = { type = "object", properties = { city = { type = "string" } }, required = ["city"] }
  [[tests.checks]]
  type = "tool-call"
  name = "get_weather"
  args = { city = "Paris" }

[[tests]]
id = "not_refusal"
category = "instruction"
user = "Write one sentence explaining what a GPU is."
criteria = "One clear sentence that explains a GPU; no refusal."
  [[tests.checks]]
  type = "not-refusal"
`
