package ui

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	// golden registers the -update flag that teatest's helpers and ours share.
	_ "github.com/charmbracelet/x/exp/golden"

	"pitwall/gpu/chat"

	"pitwall/judge/scoring"
	"pitwall/runner/state"
)

// t0 is when every fake run starts; tests read the clock at t0+elapsed.
var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

var fakeModels = []string{"qwen/qwen3-8b", "granite-4.0-micro", "google/gemma-3-12b", "llama-3.1-8b-instruct", "phi-4-mini", "mistral-small-3.2"}
var fakeTests = []string{"basic_tool_call", "json_schema_reply", "refuse_harmful", "multi_step_plan", "extract_dates", "summarise_long_document_with_citations", "arith_chain", "no_tool_needed"}

// makeRun is a run of nm models × nt tests (× repeat), every cell pending.
func makeRun(nm, nt, repeat int, judges ...string) *state.BatteryRun {
	run := &state.BatteryRun{
		Seq: 1, ID: "20261121-100000-ab12", Name: "tool-competence",
		Status: state.RunRunning, Phase: state.PhaseInference,
		Repeat: repeat, Started: t0,
	}
	// Judges as a config names them; a jury among them is what Choices adds.
	var named []string
	for _, j := range judges {
		if j != scoring.JuryName {
			named = append(named, j)
		}
	}
	run.Plan = scoring.Plan{Mode: scoring.ModeJudge, Judges: named}
	if len(judges) > 0 {
		run.Plan.InView = judges[0]
	}
	for m := range nm {
		name := fmt.Sprintf("model-%03d", m)
		if m < len(fakeModels) {
			name = fakeModels[m]
		}
		run.Models = append(run.Models, name)
	}
	for t := range nt {
		id := fmt.Sprintf("test_%04d", t)
		if t < len(fakeTests) {
			id = fakeTests[t]
		}
		run.Tests = append(run.Tests, state.TestInfo{
			ID: id, Name: strings.ReplaceAll(id, "_", " "), Category: "tools",
			System: "You are a careful assistant.", Prompt: "Do the task called " + id + ".",
			Criteria: "The reply does what " + id + " asks.",
		})
		cells := make([]state.Cell, nm*repeat)
		for m := range nm {
			for r := range repeat {
				cells[m*repeat+r] = state.Cell{Model: run.Models[m], Test: id, Repeat: r, Status: state.Pending}
			}
		}
		run.Rows = append(run.Rows, state.NewRow(cells))
	}
	return run
}

// next is a new snapshot that shares run's rows until they are changed.
func next(run *state.BatteryRun) *state.BatteryRun {
	n := *run
	n.Seq++
	n.Rows = append([]*state.Row(nil), run.Rows...)
	return &n
}

// set changes one cell of run, copying its row first (copy on write), as
// the runner does. run must be a fresh snapshot from next.
func set(run *state.BatteryRun, t, m, r int, changes ...func(*state.Cell)) {
	old := run.Rows[t]
	row := &state.Row{Cells: slices.Clone(old.Cells)}
	i := m*run.Repeat + r
	c := new(state.Cell)
	*c = *old.Cells[i]
	row.Cells[i] = c
	c.Judgments = slices.Clone(c.Judgments)
	for _, f := range changes {
		f(c)
	}
	run.Rows[t] = row
}

func status(s state.CellStatus) func(*state.Cell) {
	return func(c *state.Cell) { c.Status = s; c.Server = "gpu0" }
}

func completed(lat time.Duration, tps float64) func(*state.Cell) {
	return func(c *state.Cell) {
		c.Status, c.Server, c.Attempts = state.Completed, "gpu0", 1
		c.EditReply().Output = "The answer to " + c.Test + " is 42."
		c.TTFT, c.Latency, c.TokensPerSec = lat/4, lat, tps
		c.PromptTokens, c.CompletionTokens = 120, 48
		c.EditReply().Checks = []scoring.CheckResult{{Name: "not-empty", Pass: true}}
	}
}

func failed(name, reason string) func(*state.Cell) {
	return func(c *state.Cell) {
		completed(800*time.Millisecond, 30)(c)
		c.Status = state.Failed
		c.EditReply().Output = "I cannot call tools."
		c.EditReply().Checks = []scoring.CheckResult{{Name: "not-empty", Pass: true}, {Name: name, Reason: reason}}
	}
}

func errored(class chat.ErrorClass, msg string) func(*state.Cell) {
	return func(c *state.Cell) {
		*c = state.Cell{Model: c.Model, Test: c.Test, Repeat: c.Repeat, Status: state.Errored,
			Server: "gpu1", Attempts: 3, Reply: &state.Reply{ErrorClass: class, Error: msg}}
	}
}

func judged(judge string, v scoring.Verdict, score float64) func(*state.Cell) {
	return func(c *state.Cell) {
		j := &state.Judgment{Judge: judge, Status: state.JudgmentDone, Verdict: v, Score: score,
			Agreement: 1, Latency: 900 * time.Millisecond, Source: "live",
			Samples: []scoring.Sample{{Pass: v == scoring.Pass, Score: score, Reason: "reason of " + judge,
				Reasoning: "Step 1: read the reply. Step 2: compare with the criteria."}}}
		if v == scoring.Error {
			j.Error, j.Samples = "judge reply had no VERDICT line", []scoring.Sample{{Raw: "I think it is fine", ParseErr: "no VERDICT line"}}
		}
		state.SetJudgment(c, j)
	}
}

func judging(judge string, st state.JudgmentStatus) func(*state.Cell) {
	return func(c *state.Cell) {
		state.SetJudgment(c, &state.Judgment{Judge: judge, Status: st})
	}
}

// finish marks run over.
func finish(run *state.BatteryRun, st state.RunStatus) {
	run.Final, run.Status, run.Phase = true, st, state.PhaseDone
	run.Ended = t0.Add(12*time.Minute + 3*time.Second)
}

// testModel is a model at a fixed size and clock, measuring as a terminal
// that does not report mode 2027 has it (wcwidth), as the goldens do.
func testModel(w, h int, opts Options, ctrl Controller) *model {
	m := newModel(nil, ctrl, opts, nil)
	m.c.now = func() time.Time { return t0.Add(83 * time.Second) }
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

// show gives m a snapshot.
func show(m *model, run *state.BatteryRun) {
	m.Update(snapshotMsg{run: run})
}

// drawn is what m draws, colours off.
func drawn(m *model) string { return ansi.Strip(m.render()) }

// keyMsg is a key press as the terminal sends it.
func keyMsg(k string) tea.KeyPressMsg {
	special := map[string]rune{
		"enter": tea.KeyEnter, "esc": tea.KeyEscape, "up": tea.KeyUp, "down": tea.KeyDown,
		"left": tea.KeyLeft, "right": tea.KeyRight, "pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown,
		"backspace": tea.KeyBackspace, "home": tea.KeyHome, "end": tea.KeyEnd,
	}
	if code, ok := special[k]; ok {
		return tea.KeyPressMsg{Code: code}
	}
	if k == "ctrl+c" {
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}

// press sends keys to m and returns the command of the last one.
func press(m *model, keys ...string) tea.Cmd {
	var cmd tea.Cmd
	for _, k := range keys {
		_, cmd = m.Update(keyMsg(k))
	}
	return cmd
}

// golden compares got with testdata/name.golden; -update rewrites it.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if string(want) == got {
		return
	}
	wl, gl := strings.Split(string(want), "\n"), strings.Split(got, "\n")
	for i := range max(len(wl), len(gl)) {
		var a, b string
		if i < len(wl) {
			a = wl[i]
		}
		if i < len(gl) {
			b = gl[i]
		}
		if a != b {
			t.Fatalf("%s differs from line %d:\nwant %q\ngot  %q\n\nall of it:\n%s", path, i+1, a, b, got)
		}
	}
}

// fakeCtrl is a Controller that records what it is asked and answers with
// new snapshots on its channel, as the runner would.
type fakeCtrl struct {
	mu        sync.Mutex
	cur       *state.BatteryRun
	out       chan *state.BatteryRun
	calls     chan string // one entry per call, for tests to wait on
	stops     int
	rejudged  [][]state.CellRef
	rjJudges  []string
	switched  []string
	exports   int
	formats   []string
	exportErr error
}

func newFakeCtrl(cur *state.BatteryRun) *fakeCtrl {
	return &fakeCtrl{cur: cur, out: make(chan *state.BatteryRun, 16), calls: make(chan string, 16)}
}

// publish sends run as the next snapshot.
func (f *fakeCtrl) publish(run *state.BatteryRun) {
	f.mu.Lock()
	f.cur = run
	f.mu.Unlock()
	f.out <- run
}

// Stop cancels every cell still pending or running and ends the run.
func (f *fakeCtrl) Stop() {
	f.mu.Lock()
	f.stops++
	run := next(f.cur)
	for t := range run.Rows {
		for i, c := range run.Rows[t].Cells {
			if !c.Status.Terminal() {
				set(run, t, i/run.Repeat, i%run.Repeat, status(state.Cancelled))
			}
		}
	}
	finish(run, state.RunStopped)
	f.cur = run
	f.mu.Unlock()
	f.out <- run
	f.calls <- "stop"
}

// Rejudge flips the cells' verdicts for judge.
func (f *fakeCtrl) Rejudge(cells []state.CellRef, judge string) uint64 {
	f.mu.Lock()
	f.rejudged = append(f.rejudged, cells)
	f.rjJudges = append(f.rjJudges, judge)
	run := next(f.cur)
	for _, ref := range cells {
		t, m := index(run, ref)
		set(run, t, m, ref.Repeat, judged(judge, scoring.Fail, 0.25))
	}
	f.cur = run
	f.mu.Unlock()
	f.out <- run
	f.calls <- "rejudge"
	return run.Seq
}

func (f *fakeCtrl) RejudgeAll(judge string) uint64 {
	f.mu.Lock()
	f.rjJudges = append(f.rjJudges, judge)
	f.mu.Unlock()
	f.calls <- "rejudge-all"
	return 0
}

// SwitchJudge judges every completed cell that judge has not judged: PASS.
func (f *fakeCtrl) SwitchJudge(name string) uint64 {
	f.mu.Lock()
	f.switched = append(f.switched, name)
	run := next(f.cur)
	run.Plan.InView = name
	for t := range run.Rows {
		for i, c := range run.Rows[t].Cells {
			if c.Status == state.Completed && c.Judgment(name) == nil {
				set(run, t, i/run.Repeat, i%run.Repeat, judged(name, scoring.Pass, 0.875))
			}
		}
	}
	f.cur = run
	f.mu.Unlock()
	f.out <- run
	f.calls <- "switch"
	return run.Seq
}

func (f *fakeCtrl) Export(format string) (string, error) {
	f.mu.Lock()
	f.exports++
	f.formats = append(f.formats, format)
	err := f.exportErr
	f.mu.Unlock()
	f.calls <- "export"
	if err != nil {
		return "", err
	}
	return "/tmp/pitwall/export." + format, nil
}

func index(run *state.BatteryRun, ref state.CellRef) (t, m int) {
	for i := range run.Tests {
		if run.Tests[i].ID == ref.Test {
			t = i
		}
	}
	for i, name := range run.Models {
		if name == ref.Model {
			m = i
		}
	}
	return t, m
}

// waitCall waits for the controller to be called with what.
func (f *fakeCtrl) waitCall(t *testing.T, what string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case got := <-f.calls:
			if got == what {
				return
			}
		case <-timeout:
			t.Fatalf("controller was not asked to %s", what)
		}
	}
}
