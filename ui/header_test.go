package ui

import (
	"strings"
	"testing"
	"time"

	"pitwall/judge/scoring"
	"pitwall/runner/state"
)

func TestChecksOnlyRunPicksNoJudge(t *testing.T) {
	t.Parallel()
	snap := sceneMidInference() // Judges: gemma
	checksOnly(snap)
	finish(snap, state.RunCompleted)
	ctrl := newFakeCtrl(snap)
	m := testModel(120, 30, Options{}, ctrl)
	show(m, snap)
	got := drawn(m)
	if m.judge != "" {
		t.Fatalf("judge in view = %q, want none", m.judge)
	}
	if !strings.Contains(got, "checks only") || strings.Contains(got, "judge gemma") {
		t.Errorf("header does not say checks only:\n%s", got)
	}
	if strings.Contains(got, "PASS 0") {
		t.Errorf("summary has a verdict count with no judge in view:\n%s", got)
	}
	k := m.c.keys.Grid
	if k.Rejudge.Enabled() || k.RejudgeAll.Enabled() {
		t.Error("re-judge is enabled with no judge in view")
	}
	if !k.Judge.Enabled() {
		t.Fatal("J cannot pick the configured judge")
	}
	// J opens on none, in view; k picks the configured judge, which then
	// judges the run.
	run(m, press(m, "J", "k", "enter"))
	if len(ctrl.switched) != 1 || ctrl.switched[0] != "gemma" {
		t.Fatalf("switched = %v, want [gemma]", ctrl.switched)
	}
	show(m, <-ctrl.out)
	if got := drawn(m); !strings.Contains(got, "judge gemma") || !strings.Contains(got, "PASS 0.88") {
		t.Fatalf("gemma's verdicts are not in view:\n%s", got)
	}
}

func TestJudgeWorkStatusEndsWithTheWork(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		keys []string
		want string
	}{
		{name: "re-judge all", keys: []string{"R", "y"}, want: "re-judging the whole run with jury"},
		{name: "re-judge a cell", keys: []string{"r", "y"}, want: "re-judging the cell with jury"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := sceneJudged()
			ctrl := newFakeCtrl(snap)
			m := testModel(120, 30, Options{}, ctrl)
			show(m, snap)
			run(m, press(m, tt.keys...))
			// A snapshot from before the work was seen leaves the status.
			stale := next(snap)
			show(m, stale)
			if !strings.Contains(drawn(m), tt.want) {
				t.Fatalf("status lacks %q:\n%s", tt.want, drawn(m))
			}
			busy := next(stale)
			busy.JudgeInFlight = 3
			show(m, busy)
			if !strings.Contains(drawn(m), tt.want) {
				t.Fatalf("status lacks %q while judging:\n%s", tt.want, drawn(m))
			}
			over := next(busy)
			over.JudgeInFlight = 0
			show(m, over)
			if got := drawn(m); strings.Contains(got, "re-judging") {
				t.Fatalf("status still says re-judging once no judge work is in flight:\n%s", got)
			}
		})
	}
}

func TestHeaderExitCodeIsOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		exit func(*state.BatteryRun) int
		want string
	}{
		{name: "the caller's code", exit: func(*state.BatteryRun) int { return 0 }, want: "q exits 0"},
		{name: "another", exit: func(*state.BatteryRun) int { return 2 }, want: "q exits 2"},
		{name: "none without ExitCode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testModel(120, 30, Options{ExitCode: tt.exit}, nil)
			show(m, sceneJudged())
			got := strings.Split(drawn(m), "\n")[1]
			if tt.want == "" {
				if strings.Contains(got, "exits") {
					t.Fatalf("header says %q with no ExitCode", got)
				}
				return
			}
			if !strings.HasSuffix(got, tt.want) {
				t.Fatalf("header line %q, want it to end with %q", got, tt.want)
			}
		})
	}
}

func TestFleetShowsRatesOfBusyServersOnly(t *testing.T) {
	t.Parallel()
	snap := sceneMidInference()
	snap.Fleet[0].Busy, snap.Fleet[0].TokensPerSec = 0, 41.5 // idle: its rate is old
	tests := []struct {
		name    string
		h       int
		want    string
		wantNot string
	}{
		{name: "a line per server", h: 30, want: "12 tok/s", wantNot: "42 tok/s"},
		{name: "the fleet on one line", h: 15, want: "· 12 tok/s", wantNot: "54 tok/s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testModel(120, tt.h, Options{}, nil)
			show(m, snap)
			got := drawn(m)
			if !strings.Contains(got, tt.want) || strings.Contains(got, tt.wantNot) {
				t.Fatalf("fleet shows %q or lacks %q:\n%s", tt.wantNot, tt.want, got)
			}
		})
	}
}

func TestFleetKeepsALongQueueApartFromTheRate(t *testing.T) {
	t.Parallel()
	snap := sceneMidInference()
	snap.Fleet[0].Queue = 43742
	m := testModel(140, 30, Options{}, nil)
	show(m, snap)
	got := drawn(m)
	if !strings.Contains(got, "queue 43742 42 tok/s") {
		t.Fatalf("a five-digit queue runs into the rate:\n%s", got)
	}
}

// clocked is a model whose clock the test moves.
func clocked(w, h int) (*model, *time.Time) {
	now := t0
	m := testModel(w, h, Options{}, nil)
	m.c.now = func() time.Time { return now }
	return m, &now
}

// progressLine is the header's second line.
func progressLine(m *model) string { return strings.Split(drawn(m), "\n")[1] }

func TestVerdictsPerMinuteAreOfJudgment(t *testing.T) {
	t.Parallel()
	// Ten minutes of inference judge nothing; then 12 verdicts in 3s.
	m, now := clocked(160, 30)
	snap := next(makeRun(4, 10, 1, "gemma"))
	show(m, snap)
	*now = t0.Add(10 * time.Minute)
	done := next(snap)
	for tt := range 10 {
		for mm := range 4 {
			set(done, tt, mm, 0, completed(time.Second, 30))
		}
	}
	done.Phase = state.PhaseJudgment
	show(m, done)
	*now = now.Add(3 * time.Second)
	judging := next(done)
	for i := range 12 {
		set(judging, i/4, i%4, 0, judged("gemma", scoring.Pass, 0.9))
	}
	show(m, judging)
	got := progressLine(m)
	// 12 in 3s is 240 a minute, and 28 to go take 7s; over the whole run
	// it read 1.2 verdicts/min.
	for _, want := range []string{"Judgment 12/40", "ETA 7s", "240.0 verdicts/min"} {
		if !strings.Contains(got, want) {
			t.Errorf("header lacks %q: %q", want, got)
		}
	}
	if strings.Contains(got, "tok/s") {
		t.Errorf("header shows tok/s while no inference runs: %q", got)
	}
}

func TestTokensPerSecondAreRecent(t *testing.T) {
	t.Parallel()
	m, now := clocked(160, 30)
	snap := next(makeRun(4, 10, 1, "gemma"))
	set(snap, 0, 0, 0, status(state.Running))
	show(m, snap)
	// 500 tokens a second for 20s.
	for i := 1; i <= 20; i++ {
		*now = t0.Add(time.Duration(i) * time.Second)
		s := next(snap)
		s.TokensGenerated = int64(500 * i)
		show(m, s)
		snap = s
	}
	if got := progressLine(m); !strings.Contains(got, " 500 tok/s") {
		t.Errorf("after 20s at 500 tok/s the header reads %q", got)
	}
	// Then nothing for 15s while a cell still runs: the rate is 0, where
	// the average over the run read 286.
	*now = t0.Add(35 * time.Second)
	m.Update(tickMsg(*now))
	if got := progressLine(m); !strings.Contains(got, " 0 tok/s") {
		t.Errorf("15s with no tokens, the header reads %q", got)
	}
	// Nothing runs and nothing was generated lately: no figure at all.
	idle := next(snap)
	set(idle, 0, 0, 0, completed(time.Second, 30))
	show(m, idle)
	if got := progressLine(m); strings.Contains(got, "tok/s") {
		t.Errorf("nothing runs, yet the header reads %q", got)
	}
}

func TestFleetGrowsWithTheScreen(t *testing.T) {
	t.Parallel()
	whole := []string{"sim-lmstudio-gpu0", "Simulated RTX 4090", "Simulated A100-SXM4-80GB", "loading llama-3.1-8b-instruct…"}
	for _, w := range []int{60, 80, 120, 160, 200, 240} {
		m := testModel(w, 30, Options{}, nil)
		show(m, sceneWide())
		got := drawn(m)
		for i, l := range strings.Split(got, "\n") {
			if lw := m.c.wm.StringWidth(l); lw > w {
				t.Errorf("at %d line %d is %d wide: %q", w, i+1, lw, l)
			}
		}
		if w < 200 {
			continue
		}
		for _, name := range whole {
			if !strings.Contains(got, name) {
				t.Errorf("at %d the fleet cuts %q:\n%s", w, name, got)
			}
		}
	}
}

// The header shows what judging has spent as it goes, apart from
// inference, with its cost when the judges are priced.
func TestHeaderShowsJudgingsSpending(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		spend state.JudgeSpend
		want  string
		not   string
	}{
		{"priced", state.JudgeSpend{Requests: 53, PromptTokens: 12000, CompletionTokens: 2512, Cost: 0.0213, Priced: true},
			"judges 53 req 14,512 tok $0.021", ""},
		{"unpriced", state.JudgeSpend{Requests: 2, PromptTokens: 900, CompletionTokens: 100},
			"judges 2 req 1,000 tok", "$"},
		{"nothing yet", state.JudgeSpend{}, "", "judges "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := sceneMidInference()
			snap.Phase = state.PhaseJudgment
			snap.Judging = tc.spend
			m := testModel(200, 30, Options{}, newFakeCtrl(snap))
			show(m, snap)
			head := strings.SplitN(drawn(m), "\n", 3)[1]
			if tc.want != "" && !strings.Contains(head, tc.want) {
				t.Errorf("header lacks %q:\n%s", tc.want, head)
			}
			if tc.not != "" && strings.Contains(head, tc.not) {
				t.Errorf("header has %q:\n%s", tc.not, head)
			}
		})
	}
}
