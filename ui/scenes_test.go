package ui

import (
	"time"

	"pitwall/gpu/chat"
	"pitwall/gpu/telemetry"

	"pitwall/judge/scoring"
	"pitwall/runner/state"
)

// Scenes shared by the golden tests, the program tests and the benchmarks.

// sceneFleet is three servers: one busy with telemetry, one loading a model
// on two GPUs, one down.
func sceneFleet() []telemetry.ServerState {
	return []telemetry.ServerState{
		{Name: "gpu0", Kind: "lmstudio", Up: true, Slots: 2, Busy: 2, Queue: 5,
			Resident: []string{"qwen/qwen3-8b"}, TokensPerSec: 41.5,
			GPUs: []telemetry.GPUState{{Name: "RTX 4090", UtilPct: 87, MemUsedMiB: 18500, MemTotalMiB: 24564}}},
		{Name: "gpu1", Kind: "vllm", Up: true, Slots: 4, Busy: 1, Queue: 0, Loading: "google/gemma-3-12b",
			Resident: []string{"granite-4.0-micro"}, TokensPerSec: 12,
			GPUs: []telemetry.GPUState{{Name: "A100", UtilPct: 40, MemUsedMiB: 30000, MemTotalMiB: 40960}, {Name: "A100", UtilPct: 60, MemUsedMiB: 20000, MemTotalMiB: 40960}}},
		{Name: "laptop", Kind: "ollama", Up: false, DownReason: "connection refused", Slots: 1},
	}
}

// sceneMidInference is 4 models × 8 tests part way through inference.
func sceneMidInference() *state.BatteryRun {
	run := next(makeRun(4, 8, 1, "gemma"))
	set(run, 0, 0, 0, completed(1200*time.Millisecond, 41))
	set(run, 0, 1, 0, completed(2500*time.Millisecond, 22.5))
	set(run, 0, 2, 0, completed(12300*time.Millisecond, 8))
	set(run, 0, 3, 0, completed(640*time.Millisecond, 95))
	set(run, 1, 0, 0, completed(900*time.Millisecond, 38))
	set(run, 1, 1, 0, failed("tool-call get_weather", "no tool call was made; the reply was text"))
	set(run, 1, 2, 0, status(state.Running))
	set(run, 1, 3, 0, status(state.Loading))
	set(run, 2, 0, 0, errored("timeout", "gpu1: no reply within 300s"))
	set(run, 2, 1, 0, status(state.Queued))
	set(run, 2, 2, 0, status(state.Running))
	set(run, 3, 0, 0, status(state.Queued))
	run.Fleet = sceneFleet()
	run.TokensGenerated = 5321
	return run
}

// sceneAllDown is sceneMidInference with every server down: the work left
// waits on them.
func sceneAllDown() *state.BatteryRun {
	run := sceneMidInference()
	run.Fleet = []telemetry.ServerState{
		{Name: "gpu0", Kind: "lmstudio", Up: false, DownReason: "connection refused", DownSince: t0.Add(67 * time.Second),
			Slots: 2, Queue: 3, Stranded: 3},
		{Name: "gpu1", Kind: "vllm", Up: false, DownReason: "no reply to /v1/models", DownSince: t0.Add(80 * time.Second),
			Slots: 4, Queue: 2, Stranded: 2},
	}
	return run
}

// sceneJudged is a finished 4 × 6 run under a jury of two judges, with every
// verdict and every end of inference on screen.
func sceneJudged() *state.BatteryRun {
	run := next(makeRun(4, 6, 1, "gemma", "llama", scoring.JuryName))
	run.Plan.InView = scoring.JuryName
	for t := range 6 {
		for m := range 4 {
			set(run, t, m, 0, completed(time.Duration(500+100*t+300*m)*time.Millisecond, float64(20+5*m)))
		}
	}
	verdicts := []scoring.Verdict{scoring.Pass, scoring.Fail, scoring.Warn, scoring.Error}
	for t := range 6 {
		for m := range 4 {
			v := verdicts[(t+m)%4]
			set(run, t, m, 0, judged("gemma", v, 0.25+0.125*float64(t)), judged("llama", scoring.Pass, 0.9),
				judged(scoring.JuryName, v, 0.5+0.05*float64(m)))
		}
	}
	set(run, 4, 1, 0, failed("is-json", "the reply is not JSON: invalid character 'T' looking for beginning of value"), func(c *state.Cell) { c.Judgments = nil })
	set(run, 5, 2, 0, errored("http_5xx", "gpu1: HTTP 503: model is loading"), func(c *state.Cell) { c.Judgments = nil })
	set(run, 5, 3, 0, status(state.Cancelled), func(c *state.Cell) { c.Judgments = nil })
	set(run, 3, 0, 0, judging(scoring.JuryName, state.JudgmentQueued))
	set(run, 0, 0, 0, func(c *state.Cell) {
		c.Judgment(scoring.JuryName).Jury = &scoring.JuryResult{
			Judges: []scoring.JudgeResult{{Judge: "gemma", Weight: 1, Score: 0.25, Verdict: scoring.Fail},
				{Judge: "llama", Weight: 2, Score: 0.9, Verdict: scoring.Pass}},
			Score: 0.68, StdDev: 0.31, Spread: 0.65, Verdict: scoring.Warn, Disagreement: true}
	})
	finish(run, state.RunCompleted)
	run.TokensGenerated = 48000
	return run
}

// sceneWarnings puts ⚠️ in most cells, beside wide ❌ and narrow ✓, to test
// that columns line up whatever width a glyph has.
func sceneWarnings() *state.BatteryRun {
	run := next(makeRun(12, 10, 1))
	for t := range 10 {
		for m := range 12 {
			switch (t*3 + m) % 5 {
			case 0:
				set(run, t, m, 0, completed(time.Second, 30))
			case 1:
				set(run, t, m, 0, failed("contains \"Paris\"", "not found"))
			default:
				set(run, t, m, 0, errored("unavailable", "connection reset"))
			}
		}
	}
	return run
}

// sceneBig is nm × nt with a spread of states.
func sceneBig(nm, nt int) *state.BatteryRun {
	run := next(makeRun(nm, nt, 1, "gemma"))
	for t := range nt {
		row := &state.Row{Cells: make([]*state.Cell, nm)}
		for m := range nm {
			c := new(state.Cell)
			*c = *run.Rows[t].Cells[m]
			row.Cells[m] = c
			switch (t*7 + m*3) % 9 {
			case 0, 1, 2:
				completed(time.Duration(300+t%50*40)*time.Millisecond, float64(10+m%40))(c)
				judged("gemma", scoring.Pass, 0.9)(c)
			case 3:
				completed(time.Second, 20)(c)
				judged("gemma", scoring.Fail, 0.2)(c)
			case 4:
				failed("not-refusal", "the model refused")(c)
			case 5:
				errored("timeout", "no reply")(c)
			case 6:
				status(state.Running)(c)
			case 7:
				status(state.Queued)(c)
			}
		}
		run.Rows[t] = row
	}
	run.Fleet = sceneFleet()
	return run
}

// sceneRepeats is 3 models × 4 tests with three repeats each.
func sceneRepeats() *state.BatteryRun {
	run := next(makeRun(3, 4, 3, "gemma"))
	ok := func(v scoring.Verdict) []func(*state.Cell) {
		return []func(*state.Cell){completed(time.Second, 30), judged("gemma", v, 0.8)}
	}
	for r := range 3 {
		set(run, 0, 0, r, ok(scoring.Pass)...)
	}
	set(run, 0, 1, 0, ok(scoring.Pass)...)
	set(run, 0, 1, 1, ok(scoring.Fail)...)
	set(run, 0, 1, 2, ok(scoring.Pass)...)
	set(run, 0, 2, 0, ok(scoring.Pass)...)
	set(run, 0, 2, 1, errored("timeout", "no reply"))
	set(run, 0, 2, 2, failed("regex", "no match"))
	set(run, 1, 0, 0, completed(time.Second, 30))
	set(run, 1, 0, 1, status(state.Running))
	set(run, 1, 1, 0, completed(time.Second, 30), judging("gemma", state.JudgmentRunning))
	set(run, 1, 1, 1, completed(time.Second, 30), judged("gemma", scoring.Pass, 0.9))
	set(run, 1, 1, 2, completed(time.Second, 30), judging("gemma", state.JudgmentQueued))
	set(run, 1, 2, 0, status(state.Queued))
	for r := range 3 {
		set(run, 2, 0, r, completed(2*time.Second, 20))
	}
	run.Phase = state.PhaseJudgment
	return run
}

// sceneWide is sceneMidInference on a fleet whose names are long, as the
// simulator's are: a 200-column screen has room for them whole.
func sceneWide() *state.BatteryRun {
	run := sceneMidInference()
	run.Fleet = []telemetry.ServerState{
		{Name: "sim-lmstudio-gpu0", Kind: "lmstudio", Up: true, Slots: 2, Busy: 2, Queue: 5,
			Resident: []string{"qwen/qwen3-8b", "google/gemma-3-12b"}, TokensPerSec: 41.5,
			GPUs: []telemetry.GPUState{{Name: "Simulated RTX 4090", UtilPct: 87, MemUsedMiB: 18500, MemTotalMiB: 24564}}},
		{Name: "sim-vllm-gpu1", Kind: "vllm", Up: true, Slots: 4, Busy: 1, Loading: "meta-llama/llama-3.1-8b-instruct",
			Resident: []string{"granite-4.0-micro"}, TokensPerSec: 12,
			GPUs: []telemetry.GPUState{{Name: "NVIDIA Simulated A100-SXM4-80GB", UtilPct: 40, MemUsedMiB: 30000, MemTotalMiB: 81920}}},
	}
	return run
}

// sceneAgent is 3 models × 3 agent tests under one judge: a loop that
// answered after calling a tool no mock answered, one that stagnated, and
// one still at work on its third model turn.
func sceneAgent() *state.BatteryRun {
	run := next(makeRun(3, 3, 1, "gemma"))
	run.Tests = append([]state.TestInfo(nil), run.Tests...)
	run.Tests[0].Prompt = "Sort the files in ./inbox into ./invoices and ./receipts."
	run.Tests[0].Tools = []chat.Tool{{Type: "function", Function: chat.FunctionDef{Name: "list_files", Description: "List a folder."}},
		{Type: "function", Function: chat.FunctionDef{Name: "move_file", Description: "Move a file."}}}
	step := func(server string, lat time.Duration, content string, calls ...state.StepCall) state.Step {
		fin := "tool_calls"
		if len(calls) == 0 {
			fin = "stop"
		}
		return state.Step{Content: content, Calls: calls, FinishReason: fin, Server: server,
			TTFT: lat / 5, Latency: lat, PromptTokens: 310, CompletionTokens: 42}
	}
	call := func(name, args, obs string, mocked bool) state.StepCall {
		return state.StepCall{ToolCall: chat.ToolCall{ID: "call_" + name, Name: name, Arguments: args}, Observation: obs, Mocked: mocked}
	}
	agent := func(pass bool, why string, steps ...state.Step) func(*state.Cell) {
		return func(c *state.Cell) {
			completed(0, 25)(c)
			c.EditReply().Steps = steps
			c.EditReply().ToolCalls, c.Latency, c.PromptTokens, c.CompletionTokens = nil, 0, 0, 0
			for _, s := range steps {
				for _, sc := range s.Calls {
					c.EditReply().ToolCalls = append(c.Said().ToolCalls, sc.ToolCall)
				}
				c.Latency += s.Latency
				c.PromptTokens += s.PromptTokens
				c.CompletionTokens += s.CompletionTokens
			}
			c.TTFT = steps[0].TTFT
			c.EditReply().Output = steps[len(steps)-1].Content
			c.EditReply().FinishReason = steps[len(steps)-1].FinishReason
			c.EditReply().Checks = []scoring.CheckResult{{Name: "agent-loop", Pass: pass, Reason: why}, {Name: "tool-call move_file", Pass: true}}
			if !pass {
				c.Status = state.Failed
			}
		}
	}
	set(run, 0, 0, 0, agent(true, "answered after 3 model turns",
		step("gpu0", 1200*time.Millisecond, "I will look at the inbox first, then move each file to the folder its name says. "+
			"There may be several files, so I list them all before moving any, and I check each name for the words invoice and receipt.",
			call("list_files", `{"path": "./inbox"}`, "invoice_march.pdf\nreceipt_0412.png\nnotes.txt", true)),
		step("gpu1", 900*time.Millisecond, "",
			call("move_file", `{"from":"./inbox/invoice_march.pdf","to":"./invoices/"}`, "moved", true),
			call("delete_file", `{"path":"./inbox/notes.txt"}`, `error: no mock answers delete_file; the test's mock_tools have list_files and move_file only, so this call was not carried out`, false)),
		step("gpu0", 1500*time.Millisecond, "I moved invoice_march.pdf to ./invoices. notes.txt is neither an invoice nor a receipt, so I left it.")),
		judged("gemma", scoring.Pass, 0.8))
	set(run, 0, 1, 0, agent(false, `stagnation: list_files({"path":"./inbox"}) repeated 3 times from step 1 to step 3`,
		step("gpu0", 700*time.Millisecond, "Listing.", call("list_files", `{"path":"./inbox"}`, "invoice_march.pdf", true)),
		step("gpu0", 650*time.Millisecond, "Listing again.", call("list_files", `{"path":"./inbox"}`, "invoice_march.pdf", true)),
		step("gpu0", 640*time.Millisecond, "", call("list_files", `{"path":"./inbox"}`, "invoice_march.pdf", true))))
	set(run, 0, 2, 0, status(state.Running), func(c *state.Cell) {
		c.EditReply().Steps = []state.Step{
			step("gpu0", time.Second, "First the list.", call("list_files", `{"path":"./inbox"}`, "a.pdf", true)),
			step("gpu0", time.Second, "", call("move_file", `{"from":"a.pdf","to":"./invoices/"}`, "moved", true)),
		}
	})
	for t := 1; t < 3; t++ {
		for m := range 3 {
			set(run, t, m, 0, completed(time.Second, 30), judged("gemma", scoring.Pass, 0.9))
		}
	}
	run.Phase = state.PhaseInference
	return run
}

// sceneSeverity is sceneJudged with its tests in three categories and some
// of them marked by severity, two of them critical.
func sceneSeverity() *state.BatteryRun {
	run := sceneJudged()
	run.Tests = append([]state.TestInfo(nil), run.Tests...)
	meta := []struct{ cat, sev string }{
		{"tools", "critical"}, {"json", "warning"}, {"safety", "critical"}, {"tools", ""}, {"json", "info"}, {"tools", ""},
	}
	for i, m := range meta {
		run.Tests[i].Category, run.Tests[i].Severity = m.cat, m.sev
	}
	return run
}
