package des

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"pitwall/edges/sim"
	"pitwall/gpu/chat"
	"pitwall/gpu/placement"
)

// flatRate is a rate function without batching effects, for by-hand sums.
func flatRate(single float64, n int) float64 { return single }

// desOne is a scenario of one server of 2 slots and 24 GB loading 1 GB/s.
func desOne(models map[string]Model, preload []string, rate RateFunc, jobs ...Job) Scenario {
	return Scenario{
		Servers: []Server{{Name: "s0", Slots: 2, VRAMGB: 24, LoadGBps: 1, Preload: preload}},
		Models:  models, Jobs: jobs, Rate: rate,
	}
}

func secondsOf(d time.Duration) float64 { return d.Seconds() }

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }

func TestSimulateByHand(t *testing.T) {
	m := map[string]Model{
		"m": {SizeGB: 10, TokensPerSec: 50, PrefillTPS: 1000, TTFT: 200 * time.Millisecond},
		"a": {SizeGB: 16, TokensPerSec: 50},
		"c": {SizeGB: 16, TokensPerSec: 50},
	}
	two := sim.StreamRate(50, 2)
	tests := []struct {
		name     string
		sc       Scenario
		policy   placement.Policy
		judging  string
		makespan float64
		loads    int
	}{
		{
			// load 10 GB at 1 GB/s, warm-up (TTFT, 8 prompt tokens, one
			// token), then the job: TTFT + 100/1000 prefill, 200 tokens at 50/s.
			name:     "one job: load, warm-up, time to first token, decode",
			sc:       desOne(m, nil, sim.StreamRate, Job{Model: "m", PromptTokens: 100, ReplyTokens: 200}),
			policy:   placement.Default,
			judging:  JudgingTwoPhase,
			makespan: 10 + (0.2 + 8.0/1000 + 1.0/50) + (0.2 + 100.0/1000) + 200.0/50,
			loads:    1,
		},
		{
			// Both decode at StreamRate(50, 2) until the short one ends; the
			// long one's last 100 tokens go at the solo rate.
			name: "two streams share the server's throughput by the rate function",
			sc: desOne(m, []string{"a"}, sim.StreamRate,
				Job{Model: "a", ReplyTokens: 200}, Job{Model: "a", ReplyTokens: 100}),
			policy:   placement.Default,
			judging:  JudgingTwoPhase,
			makespan: 100/two + 100.0/50,
		},
		{
			// The first decodes alone while the second prefills for 1 s,
			// then both decode their last 50 tokens together.
			name: "a request prefilling does not slow the streams decoding",
			sc: desOne(map[string]Model{"a": {SizeGB: 16, TokensPerSec: 50, PrefillTPS: 100}}, []string{"a"}, sim.StreamRate,
				Job{Model: "a", ReplyTokens: 100}, Job{Model: "a", PromptTokens: 100, ReplyTokens: 50}),
			policy:   placement.Default,
			judging:  JudgingTwoPhase,
			makespan: 1 + 50/two,
		},
		{
			// FIFO sends c to the server streaming a; c's load must wait for
			// a to drain (2 s), then load (16 s + a one-token warm-up).
			name: "a load waits for the model it evicts to drain",
			sc: desOne(m, []string{"a"}, flatRate,
				Job{Model: "a", ReplyTokens: 100}, Job{Model: "c", ReplyTokens: 50}),
			policy:   FIFO,
			judging:  JudgingTwoPhase,
			makespan: 2 + 16 + 1.0/50 + 1,
			loads:    1,
		},
		{
			name: "two-phase: the judge job waits for all inference",
			sc: desOne(m, []string{"a"}, flatRate,
				Job{Model: "a", ReplyTokens: 100}, Job{Model: "a", ReplyTokens: 400},
				Job{Model: "a", Purpose: chat.PurposeJudge, Judges: 0, ReplyTokens: 50}),
			policy:   placement.Default,
			judging:  JudgingTwoPhase,
			makespan: 8 + 1,
		},
		{
			name: "pipelined: the judge job starts when its cell ends",
			sc: desOne(m, []string{"a"}, flatRate,
				Job{Model: "a", ReplyTokens: 100}, Job{Model: "a", ReplyTokens: 400},
				Job{Model: "a", Purpose: chat.PurposeJudge, Judges: 0, ReplyTokens: 50}),
			policy:   placement.Default,
			judging:  JudgingPipelined,
			makespan: 8,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Simulate(tt.sc, tt.policy, tt.judging)
			if err != nil {
				t.Fatal(err)
			}
			if got := secondsOf(res.Makespan); !near(got, tt.makespan) {
				t.Errorf("makespan %.6fs, want %.6fs", got, tt.makespan)
			}
			if res.Loads != tt.loads {
				t.Errorf("%d loads, want %d", res.Loads, tt.loads)
			}
		})
	}
}

func TestSimulateAccountsServerTime(t *testing.T) {
	m := map[string]Model{"m": {SizeGB: 10, TokensPerSec: 50}}
	res, err := Simulate(desOne(m, nil, flatRate, Job{Model: "m", ReplyTokens: 100}), placement.Default, JudgingTwoPhase)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Servers[0]
	load, busy := 10+1.0/50, 2.0
	if !near(s.LoadIdle.Seconds(), load) || !near(s.Busy.Seconds(), busy) || s.Idle != 0 || s.Full != 0 {
		t.Errorf("trace %+v, want %.2fs loading and %.2fs busy, nothing else", s, load, busy)
	}
	if !near(res.IdleShare, load/(load+busy)) {
		t.Errorf("idle share %.4f, want %.4f", res.IdleShare, load/(load+busy))
	}
	if len(s.Loads) != 1 || s.Loads[0].Model != "m" || s.Loads[0].Start != 0 {
		t.Errorf("loads %+v, want one of m at 0", s.Loads)
	}
	if s.Jobs != 1 {
		t.Errorf("%d jobs, want 1", s.Jobs)
	}
}

func TestSimulateEvictsLeastRecentlyUsedIdleModel(t *testing.T) {
	models := map[string]Model{
		"x": {SizeGB: 10, TokensPerSec: 50}, "y": {SizeGB: 10, TokensPerSec: 50}, "z": {SizeGB: 10, TokensPerSec: 50},
	}
	sc := Scenario{
		Servers: []Server{{Name: "s0", Slots: 1, VRAMGB: 24, LoadGBps: 1}},
		Models:  models, Rate: flatRate,
		Jobs: []Job{{Model: "x", ReplyTokens: 10}, {Model: "y", ReplyTokens: 10}, {Model: "x", ReplyTokens: 10}, {Model: "z", ReplyTokens: 10}},
	}
	res, err := Simulate(sc, FIFO, JudgingTwoPhase)
	if err != nil {
		t.Fatal(err)
	}
	// x, y load; x runs again, so y is the least recently used when z comes.
	loads := res.Servers[0].Loads
	if len(loads) != 3 || loads[2].Model != "z" || !reflect.DeepEqual(loads[2].Evicted, []string{"y"}) {
		t.Errorf("loads %+v, want x, y, then z evicting y", loads)
	}
}

func TestSimulateRejects(t *testing.T) {
	m := map[string]Model{"a": {SizeGB: 16, TokensPerSec: 50}}
	ok := desOne(m, []string{"a"}, flatRate, Job{Model: "a", ReplyTokens: 10})
	tests := []struct {
		name    string
		sc      func() Scenario
		policy  placement.Policy
		judging string
		want    string
	}{
		{"a scenario without a rate function", func() Scenario { s := ok; s.Rate = nil; return s }, placement.Default, JudgingTwoPhase, "rate function"},
		{"a scenario without servers", func() Scenario { s := ok; s.Servers = nil; return s }, placement.Default, JudgingTwoPhase, "no servers"},
		{"a model too large for every server", func() Scenario {
			s := ok
			s.Models = map[string]Model{"a": {SizeGB: 30, TokensPerSec: 50}}
			s.Servers = []Server{{Name: "s0", Slots: 1, VRAMGB: 24, LoadGBps: 1}}
			return s
		}, placement.Default, JudgingTwoPhase, "room"},
		{"a judge job that judges a judge job", func() Scenario {
			s := ok
			s.Jobs = []Job{{Model: "a", Purpose: chat.PurposeJudge, Judges: 0}}
			return s
		}, placement.Default, JudgingTwoPhase, "not an inference job"},
		{"an unknown judging schedule", func() Scenario { return ok }, placement.Default, "sometimes", "judging"},
		{"an assignment to an unknown server", func() Scenario { return ok },
			placement.PolicyFunc(func(v placement.FleetView) []placement.Assignment {
				return []placement.Assignment{{Job: v.Queue[0].ID, Server: "nope"}}
			}),
			JudgingTwoPhase, "no such server"},
		{"the same job placed twice", func() Scenario { return ok },
			placement.PolicyFunc(func(v placement.FleetView) []placement.Assignment {
				return []placement.Assignment{{Job: v.Queue[0].ID, Server: "s0"}, {Job: v.Queue[0].ID, Server: "s0"}}
			}), JudgingTwoPhase, "not queued"},
		{"a policy that leaves work queued on an idle fleet", func() Scenario { return ok },
			placement.PolicyFunc(func(placement.FleetView) []placement.Assignment { return nil }), JudgingTwoPhase, "idle fleet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Simulate(tt.sc(), tt.policy, tt.judging)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one that mentions %q", err, tt.want)
			}
		})
	}
}

func TestSimulateIsDeterministic(t *testing.T) {
	sc := desRandomScenario(3)
	for _, p := range []placement.Policy{placement.Default, PromptPrix, FIFO} {
		a, err := Simulate(sc, p, JudgingPipelined)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Simulate(sc, p, JudgingPipelined)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("two runs differ:\n%s\n%s", a.Summary(), b.Summary())
		}
	}
}
