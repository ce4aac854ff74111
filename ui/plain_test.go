package ui

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"pitwall/judge/scoring"
	"pitwall/runner/state"
)

// plainRun is a small run played out as a runner would publish it.
func plainRun() []*state.BatteryRun {
	s0 := makeRun(3, 2, 1, "gemma")
	s0.Counts.ToJudge = 4
	s1 := next(s0)
	set(s1, 0, 0, 0, completed(1200*time.Millisecond, 41))
	set(s1, 0, 1, 0, status(state.Running))
	s2 := next(s1)
	set(s2, 0, 1, 0, failed("tool-call get_weather", "no tool call was made"))
	set(s2, 0, 2, 0, errored("timeout", "gpu1: no reply within 300s"))
	set(s2, 1, 0, 0, completed(2500*time.Millisecond, 22))
	s3 := next(s2)
	set(s3, 1, 1, 0, completed(700*time.Millisecond, 60))
	set(s3, 1, 2, 0, status(state.Cancelled))
	s3.Phase = state.PhaseJudgment
	s3.JudgeInFlight = 3
	s4 := next(s3)
	set(s4, 0, 0, 0, judged("gemma", scoring.Pass, 0.92))
	set(s4, 1, 0, 0, judged("gemma", scoring.Error, 0))
	s5 := next(s4)
	set(s5, 1, 1, 0, judged("gemma", scoring.Fail, 0.2))
	finish(s5, state.RunCompleted)
	s5.JudgeInFlight = 0
	return []*state.BatteryRun{s0, s1, s2, s3, s4, s5}
}

// feed sends snaps on an open channel from a goroutine, as the runner does;
// the channel stays open, so RunPlain must stop on its own.
func feed(t *testing.T, snaps []*state.BatteryRun) <-chan *state.BatteryRun {
	ch := make(chan *state.BatteryRun)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		for _, s := range snaps {
			select {
			case ch <- s:
			case <-stop:
				return
			}
		}
		<-stop
	}()
	return ch
}

// runPlain runs RunPlain and fails the test if it does not return.
func runPlain(t *testing.T, ch <-chan *state.BatteryRun, opts Options) (last *state.BatteryRun, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	done := make(chan *state.BatteryRun)
	go func() { done <- RunPlain(ch, &out, &errOut, opts) }()
	select {
	case last = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("RunPlain did not return after the final snapshot")
	}
	return last, out.String(), errOut.String()
}

func TestRunPlainGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts Options
	}{
		{name: "plain", opts: Options{LedgerPath: ".pitwall/ledger.db", ExitCode: func(*state.BatteryRun) int { return 1 }}},
		{name: "plain_ascii", opts: Options{ASCII: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snaps := plainRun()
			last, stdout, stderr := runPlain(t, feed(t, snaps), tt.opts)
			if last != snaps[len(snaps)-1] {
				t.Fatalf("returned snapshot %d, want the final one", last.Seq)
			}
			golden(t, tt.name+"_progress", stderr)
			golden(t, tt.name+"_final", stdout)
			if tt.opts.ASCII {
				for i, r := range stdout + stderr {
					if r > 127 {
						t.Fatalf("non-ASCII %q at %d in ASCII output", r, i)
					}
				}
			}
		})
	}
}

func TestRunPlainLines(t *testing.T) {
	t.Parallel()
	inference := regexp.MustCompile(`^\[(\d+)/6\] \S+ × \S+ (✓|❌|⚠️|⊘) `)
	judge := regexp.MustCompile(`^\[judge (\d+)/\d+\] \S+ × \S+ (PASS|FAIL|WARN|J-ERR)[ 0-9.]* \(gemma\)`)
	tests := []struct {
		name  string
		snaps func() []*state.BatteryRun
	}{
		{name: "every snapshot"},
		{name: "intermediate snapshots dropped", snaps: func() []*state.BatteryRun {
			all := plainRun()
			return []*state.BatteryRun{all[0], all[2], all[5]}
		}},
		{name: "only the final snapshot", snaps: func() []*state.BatteryRun {
			all := plainRun()
			return all[5:]
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snaps := plainRun()
			if tt.snaps != nil {
				snaps = tt.snaps()
			}
			_, _, stderr := runPlain(t, feed(t, snaps), Options{})
			var cells, verdicts []string
			for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
				switch {
				case inference.MatchString(l):
					cells = append(cells, inference.FindStringSubmatch(l)[1])
				case judge.MatchString(l):
					verdicts = append(verdicts, judge.FindStringSubmatch(l)[1])
				default:
					t.Errorf("unexpected line %q", l)
				}
			}
			if strings.Join(cells, ",") != "1,2,3,4,5,6" {
				t.Errorf("inference lines numbered %v, want one per cell, 1 to 6:\n%s", cells, stderr)
			}
			if strings.Join(verdicts, ",") != "1,2,3" {
				t.Errorf("judge lines numbered %v, want 1 to 3:\n%s", verdicts, stderr)
			}
			for _, want := range []string{
				"qwen/qwen3-8b × basic_tool_call ✓ 1.2s 41 tok/s",
				"granite-4.0-micro × basic_tool_call ❌ 800ms 30 tok/s tool-call get_weather: no tool call was made",
				"google/gemma-3-12b × basic_tool_call ⚠️ timeout: gpu1: no reply within 300s (after 3 attempts)",
				"google/gemma-3-12b × json_schema_reply ⊘ cancelled",
				"qwen/qwen3-8b × basic_tool_call PASS 0.92 (gemma) 900ms",
				"J-ERR (gemma) 900ms: judge reply had no VERDICT line",
			} {
				if !strings.Contains(stderr, want) {
					t.Errorf("progress lacks %q:\n%s", want, stderr)
				}
			}
		})
	}
}

func TestRunPlainWaitsForJudgesAfterTheEnd(t *testing.T) {
	t.Parallel()
	snaps := plainRun()
	// The run is over but re-judging is still in flight.
	over := next(snaps[4])
	finish(over, state.RunCompleted)
	over.JudgeInFlight = 1
	last := next(snaps[5])
	set(last, 0, 0, 0, judged("gemma", scoring.Fail, 0.1))
	got, _, stderr := runPlain(t, feed(t, []*state.BatteryRun{snaps[0], snaps[3], over, last}), Options{})
	if got != last {
		t.Fatalf("returned snapshot %d, want %d (the one with no judge in flight)", got.Seq, last.Seq)
	}
	if !strings.Contains(stderr, "FAIL 0.10 (gemma)") {
		t.Fatalf("the judgment after the end was not printed:\n%s", stderr)
	}
}

func TestRunPlainPrintsARejudgeAgain(t *testing.T) {
	t.Parallel()
	snaps := plainRun()
	final := snaps[5]
	finish(final, state.RunCompleted)
	queued := next(final)
	queued.Final, queued.JudgeInFlight = false, 1
	set(queued, 0, 0, 0, judging("gemma", state.JudgmentQueued))
	again := next(queued)
	again.Final, again.JudgeInFlight = true, 0
	set(again, 0, 0, 0, judged("gemma", scoring.Fail, 0.3))
	in := append(append([]*state.BatteryRun{}, snaps[:5]...), queued, again)
	_, _, stderr := runPlain(t, feed(t, in), Options{})
	if n := strings.Count(stderr, "qwen/qwen3-8b × basic_tool_call PASS"); n != 1 {
		t.Errorf("first verdict printed %d times", n)
	}
	// The count is of the cells the judge has judged now: the re-judged cell
	// left it while queued and is back.
	if !strings.Contains(stderr, "[judge 3/3] qwen/qwen3-8b × basic_tool_call FAIL 0.30 (gemma)") {
		t.Errorf("re-judged verdict missing or misnumbered:\n%s", stderr)
	}
}

func TestRunPlainWhenTheChannelCloses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		snaps    []*state.BatteryRun
		wantLast bool
	}{
		{name: "before the final snapshot", snaps: plainRun()[:3], wantLast: true},
		{name: "with no snapshot at all"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := make(chan *state.BatteryRun, len(tt.snaps))
			for _, s := range tt.snaps {
				ch <- s
			}
			close(ch)
			last, stdout, stderr := runPlain(t, ch, Options{})
			if !tt.wantLast {
				if last != nil || stdout != "" || !strings.Contains(stderr, "before its first snapshot") {
					t.Fatalf("got %v, stdout %q, stderr %q", last, stdout, stderr)
				}
				return
			}
			if last != tt.snaps[len(tt.snaps)-1] {
				t.Fatal("did not return the last snapshot")
			}
			if !strings.Contains(stdout, "pass rate by model") {
				t.Fatalf("no summary:\n%s", stdout)
			}
		})
	}
}

func TestRunPlainEndsWithSummary(t *testing.T) {
	t.Parallel()
	opts := Options{LedgerPath: ".pitwall/ledger.db", ExitCode: func(*state.BatteryRun) int { return 1 }}
	snaps := plainRun()
	last, stdout, _ := runPlain(t, feed(t, snaps), opts)
	want := RenderGrid(last, "gemma", false) + "\n" + Summary(last, "gemma", opts)
	if stdout != want {
		t.Fatalf("RunPlain printed\n%s\nwant the grid, a blank line and Summary:\n%s", stdout, want)
	}
	if Summary(nil, "gemma", opts) != "" {
		t.Fatal("Summary of no run is not empty")
	}
}

func TestSummary(t *testing.T) {
	t.Parallel()
	// qwen3-8b: a ❌ and a ✓; granite: two ✓; the judge has judged
	// granite's first.
	scene := func() *state.BatteryRun {
		run := next(makeRun(2, 2, 1, "large"))
		set(run, 0, 0, 0, failed("regex", "no match"))
		set(run, 1, 0, 0, completed(time.Second, 30))
		set(run, 0, 1, 0, completed(time.Second, 30), judged("large", scoring.Pass, 0.9))
		set(run, 1, 1, 0, completed(time.Second, 30))
		finish(run, state.RunCompleted)
		return run
	}
	tests := []struct {
		name    string
		judge   string
		opts    Options
		want    []string
		wantNot []string
	}{
		{name: "a model the judge has not judged reads —", judge: "large",
			want: []string{
				"verdicts 1 PASS · 0 FAIL · 0 WARN · 0 J-ERR (judge large)",
				"  qwen/qwen3-8b         —  (nothing decided)\n",
				"  granite-4.0-micro  100%  (1/1)\n",
			},
			wantNot: []string{"0%  (0/1)"}},
		{name: "checks only: no verdict line, ✓ passes", judge: "",
			want: []string{
				"scoring  checks only\n",
				"  qwen/qwen3-8b       50%  (1/2)\n",
				"  granite-4.0-micro  100%  (2/2)\n",
			},
			wantNot: []string{"verdicts", "judge large"}},
		{name: "ledger, export and exit", judge: "large",
			opts: Options{LedgerPath: "/tmp/l.db", ExitCode: func(*state.BatteryRun) int { return 0 }},
			want: []string{"ledger   /tmp/l.db\n", "export   pitwall export 20261121-100000-ab12 --format json\n", "exit     0\n"}},
		{name: "ASCII", judge: "large", opts: Options{ASCII: true},
			want: []string{"run 20261121-100000-ab12 - tool-competence - completed in 12m03s\n", "  qwen/qwen3-8b         -  (nothing decided)\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Summary(scene(), tt.judge, tt.opts)
			if strings.Contains(got, "no verdicts") || strings.Contains(got, "(0/0)") {
				t.Errorf("summary words nothing decided another way:\n%s", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("summary lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(got, w) {
					t.Errorf("summary has %q:\n%s", w, got)
				}
			}
		})
	}
}

// TestStoppedSummaryWordsNothingDecidedOneWay: a model whose cells were all
// cancelled read "— (0/0)" and one the judge never reached "— (no
// verdicts)".
func TestStoppedSummaryWordsNothingDecidedOneWay(t *testing.T) {
	t.Parallel()
	run := next(makeRun(3, 2, 1, "large"))
	// qwen3-8b: judged; granite: completed, never judged; gemma: cancelled.
	for tt := range 2 {
		set(run, tt, 0, 0, completed(time.Second, 30), judged("large", scoring.Pass, 0.9))
		set(run, tt, 1, 0, completed(time.Second, 30))
		set(run, tt, 2, 0, status(state.Cancelled))
	}
	finish(run, state.RunStopped)
	got := Summary(run, "large", Options{})
	for _, want := range []string{
		"  qwen/qwen3-8b       100%  (2/2)\n",
		"  granite-4.0-micro      —  (nothing decided)\n",
		"  google/gemma-3-12b     —  (nothing decided)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
}

func TestRunPlainScoresByChecksWithNoJudgeInView(t *testing.T) {
	t.Parallel()
	snaps := plainRun()
	for _, s := range snaps {
		checksOnly(s)
	}
	_, stdout, _ := runPlain(t, feed(t, snaps), Options{})
	for _, w := range []string{"scoring  checks only", "qwen/qwen3-8b       100%  (2/2)", "granite-4.0-micro    50%  (1/2)"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("output lacks %q:\n%s", w, stdout)
		}
	}
	if strings.Contains(stdout, "verdicts") || strings.Contains(stdout, "(judge") {
		t.Errorf("a run scored by its checks has a verdict line:\n%s", stdout)
	}
}

func TestRunPlainSaysWhenAVerdictCameFromTheCache(t *testing.T) {
	t.Parallel()
	run := next(makeRun(1, 1, 1, "gemma"))
	set(run, 0, 0, 0, completed(time.Second, 30), judged("gemma", scoring.Pass, 0.9), func(c *state.Cell) {
		c.Judgment("gemma").Source = "cache"
	})
	finish(run, state.RunCompleted)
	_, _, stderr := runPlain(t, feed(t, []*state.BatteryRun{run}), Options{})
	if !strings.Contains(stderr, "PASS 0.90 (gemma) cached") || strings.Contains(stderr, "cached 900ms") {
		t.Errorf("a cached verdict's line should say cached instead of a time:\n%s", stderr)
	}
}

func TestRunPlainSaysWhatWaitsOnServersThatAreDown(t *testing.T) {
	t.Parallel()
	up := sceneMidInference()
	up.Seq = 10
	down := sceneAllDown()
	down.Seq = 11
	later := sceneAllDown() // the same work waits a little longer: no new line
	later.Seq = 12
	back := sceneMidInference()
	back.Seq = 13
	back.Final = true
	_, _, stderr := runPlain(t, feed(t, []*state.BatteryRun{up, down, later, back}), Options{})
	for _, want := range []string{
		"server gpu0 down: connection refused",
		"server gpu1 down: no reply to /v1/models",
		"waiting on gpu0 down",
		"(connection refused): 3 waiting; gpu1 down",
		"server gpu0 is back",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("headless output lacks %q:\n%s", want, stderr)
		}
	}
	if n := strings.Count(stderr, "waiting on"); n != 1 {
		t.Errorf("the waiting line came %d times, want once while nothing changed:\n%s", n, stderr)
	}
}

func TestSummarySaysWhyARunFailed(t *testing.T) {
	t.Parallel()
	run := sceneJudged()
	run.Status = state.RunFailed
	run.Message = "judge gemma gave no usable verdict (24 judge errors)"
	if s := Summary(run, "gemma", Options{}); !strings.Contains(s, "reason   judge gemma gave no usable verdict") {
		t.Errorf("summary of a failed run does not say why:\n%s", s)
	}
}

// A snapshot whose lines outgrow the output buffer still prints every
// character whole: ✓ and × are three and two bytes, and wherever the
// buffer fills, no line may show one as escaped stray bytes. The first
// cell's message moves where the buffer's edge falls, byte by byte.
func TestRunPlainKeepsCharactersWholeInALargeSnapshot(t *testing.T) {
	t.Parallel()
	for pad := range 48 {
		s0 := makeRun(1, 900, 1)
		s1 := next(s0)
		set(s1, 0, 0, 0, errored("timeout", "gpu1: no reply"+strings.Repeat(".", pad)))
		for tt := 1; tt < 900; tt++ {
			set(s1, tt, 0, 0, completed(1200*time.Millisecond, 41))
		}
		finish(s1, state.RunCompleted)
		_, _, stderr := runPlain(t, feed(t, []*state.BatteryRun{s0, s1}), Options{})
		if len(stderr) < 40<<10 {
			t.Fatalf("pad %d: %d bytes of lines, want more than the 32 KiB buffer", pad, len(stderr))
		}
		if i := strings.Index(stderr, `\x`); i >= 0 {
			t.Fatalf("pad %d: a character cut in two at byte %d: %q", pad, i, stderr[max(i-40, 0):min(i+40, len(stderr))])
		}
		if n := strings.Count(stderr, "✓"); n != 899 {
			t.Fatalf("pad %d: %d lines with ✓, want 899", pad, n)
		}
	}
}

// halfWriter takes half of its first write and fails, then takes all.
type halfWriter struct {
	bytes.Buffer
	failed bool
}

func (w *halfWriter) Write(p []byte) (int, error) {
	if !w.failed {
		w.failed = true
		n, _ := w.Buffer.Write(p[:len(p)/2])
		return n, errors.New("stderr full")
	}
	return w.Buffer.Write(p)
}

// A write to stderr that fails part way loses its lines, not the run's
// later ones, and those start on a line of their own, not after the
// fragment the failed write left.
func TestRunPlainGoesOnAfterAStderrThatFailedPartWay(t *testing.T) {
	t.Parallel()
	w := &halfWriter{}
	done := make(chan *state.BatteryRun)
	var out bytes.Buffer
	go func() { done <- RunPlain(feed(t, plainRun()), &out, w, Options{}) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("RunPlain did not return")
	}
	got := w.String()
	if regexp.MustCompile(`[^\n]\[\d+/\d+\]`).MatchString(got) {
		t.Errorf("a line joined to the fragment a failed write left:\n%s", got)
	}
	if !strings.Contains(got, "[judge 3/3]") {
		t.Errorf("the lines after the failed write are missing:\n%s", got)
	}
}

// A headless run says where it stands every 30 s, as the grid's header
// does: phase, done of total, ETA; nothing in between, nothing once over.
func TestPlainSaysItsProgressEveryThirtySeconds(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	p := newPlain(&out, Options{})
	now := t0
	p.c.now = func() time.Time { return now }
	snaps := plainRun()
	run := snaps[2]
	run.Started = t0.Add(-time.Minute)
	p.diff(nil, run)
	now = now.Add(29 * time.Second)
	p.diff(run, run)
	if strings.Contains(out.String(), "[progress]") {
		t.Fatalf("a progress line before 30 s:\n%s", out.String())
	}
	now = now.Add(2 * time.Second)
	p.diff(run, run)
	lines := regexp.MustCompile(`(?m)^\[progress\] Inference \d+/6 .*$`).FindAllString(out.String(), -1)
	if len(lines) != 1 {
		t.Fatalf("progress lines after 31 s: %q, want one\n%s", lines, out.String())
	}
	last := snaps[len(snaps)-1]
	now = now.Add(time.Minute)
	p.diff(run, last)
	if n := strings.Count(out.String(), "[progress]"); n != 1 {
		t.Errorf("%d progress lines once the run is over, want the one before", n)
	}
}
