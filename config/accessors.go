package config

import (
	"pitwall/gpu/chat"
	"pitwall/gpu/simspec"
	"pitwall/judge/check"
	"pitwall/judge/scoring"
	"slices"
	"strings"
)

// SimTimeScale is the simulator's time scale: sim.time_scale, overridden by
// PITWALL_SIM_TIME_SCALE and the flag; 0 is instant. Load fills 1 (real
// time) when the file leaves it out; a config built by hand, which never
// went through Load, runs in real time too.
func (c *Config) SimTimeScale() float64 {
	if c.meta == nil && c.Sim.TimeScale == 0 {
		return 1
	}
	return c.Sim.TimeScale
}

// ModelSpec returns the simulated model called name: its [[sim.models]]
// entry, or, for a model that a sim server offers without an entry, a spec
// with only the name set, whose zero fields the simulator fills with its
// defaults (a model needs no entry to be simulated; entries are for tuning).
// ok is false when no sim server offers name.
func (c *Config) ModelSpec(name string) (simspec.Model, bool) {
	for _, m := range c.Sim.Models {
		if m.Name == name {
			return m, true
		}
	}
	for _, s := range c.Servers {
		if s.Kind == chat.KindSim && slices.Contains(s.Models, name) {
			return simspec.Model{Name: name}, true
		}
	}
	return simspec.Model{}, false
}

// Plan is the run's scoring plan: which judges it has, which run, and
// whose verdicts are in view (Scoring.Active, which --judge NAME sets).
func (c *Config) Plan() scoring.Plan {
	p := scoring.NewPlan(c.Scoring.Mode, c.allJudgeNames(), c.Scoring.Active, c.Run.Judging)
	p.Samples = max(c.Scoring.Samples, 1)
	return p
}

// JudgeNames returns the judges that score this run, in config order:
// none in deterministic mode, the judge in view in judge mode, every judge
// in jury mode. Scoring.Judges still lists every configured judge, for
// switching.
func (c *Config) JudgeNames() []string { return c.Plan().Running() }

// FleetServer is the fleet server a judge's requests are pinned to: its
// configured server, or the hosted endpoint that setup adds for a judge
// with a url; "" for server = "any" (every server that offers the model).
func (j Judge) FleetServer() string {
	switch j.Server {
	case AnyServer:
		return ""
	case "":
		return "judge:" + j.Name
	}
	return j.Server
}

// Judge returns the configured judge called name.
func (c *Config) Judge(name string) (Judge, bool) {
	for _, j := range c.Scoring.Judges {
		if j.Name == name {
			return j, true
		}
	}
	return Judge{}, false
}

// Server returns the configured server called name.
func (c *Config) Server(name string) (Server, bool) {
	for _, s := range c.Servers {
		if s.Name == name {
			return s, true
		}
	}
	return Server{}, false
}

// Conversation is the messages every model is sent for the test: its
// messages (after its system prompt, unless they start with one), or its
// system prompt and user turn.
func (t Test) Conversation() []chat.Message {
	var out []chat.Message
	if t.System != "" && (len(t.Messages) == 0 || t.Messages[0].Role != "system") {
		out = append(out, chat.Message{Role: "system", Content: t.System})
	}
	if len(t.Messages) > 0 {
		return append(out, t.Messages...)
	}
	return append(out, chat.Message{Role: "user", Content: t.User})
}

// PromptText is the system prompt and the user turns of the test as text,
// for the judge and the detail view.
func (t Test) PromptText() (system, prompt string) {
	system = t.System
	if len(t.Messages) == 0 {
		return system, t.User
	}
	var b strings.Builder
	for _, m := range t.Messages {
		if m.Role == "system" {
			if system == "" {
				system = m.Content
			}
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		if len(t.Messages) > 1 || m.Role != "user" {
			b.WriteString(m.Role + ": ")
		}
		b.WriteString(m.Content)
	}
	return system, b.String()
}

// Validation is what the validation every reply gets holds this test's reply
// to: its request, less what its own checks want (a refusal, an empty
// reply; see check.Expect.Wanting).
func (t Test) Validation() check.Expect {
	return check.Expect{ToolChoice: t.ToolChoice, HasTools: len(t.Tools) > 0, ResponseFormat: t.ResponseFormat}.Wanting(t.Checks)
}

// Judge checks a reply as every cell's reply is checked: the validation
// every reply gets against what the test asked (tools, tool_choice,
// response_format), then the test's own checks. ok is true when all pass.
// The runner decides a cell with it, and so does an imported run.
func (t Test) Judge(out check.Output) (results []scoring.CheckResult, ok bool) {
	results = check.Validate(t.Validation(), out)
	results = append(results, check.RunChecks(t.Checks, out)...)
	return results, check.Passed(results)
}
