package des

import (
	"errors"
	"fmt"
	"pitwall/gpu/chat"
	"pitwall/gpu/placement"
	"strings"
	"time"
)

// Judging schedules (config's run.judging).
const (
	// JudgingTwoPhase submits judge jobs only once every inference job has ended.
	JudgingTwoPhase = "two-phase"
	// JudgingPipelined submits a cell's judge jobs as soon as its inference
	// ends; the policy lets them take only slots inference cannot use.
	JudgingPipelined = "pipelined"
)

// RateFunc is the decode rate, in tokens/s, of each of n streams decoding
// together on one server when a stream alone decodes at single tokens/s
// (continuous batching). sim.StreamRate is the simulator's.
type RateFunc func(single float64, n int) float64

// Scenario is a fleet and a battery's jobs, described for Simulate.
//
// The simulation's model of a server, chosen to match edges/sim:
//   - a job holds a slot from its assignment to its last token;
//   - a job whose model is not resident waits for it to load; loads run one
//     at a time per server, take SizeGB / LoadGBps plus a warm-up request
//     (TTFT, a short prompt and one token) that absorbs the load, and count
//     in no job's latency; other resident models keep streaming meanwhile;
//   - a load that needs room evicts the least recently used idle models; a
//     model that is streaming is never evicted: the load waits for it to
//     drain, and no new request may start on it meanwhile;
//   - a request first prefills for TTFT + PromptTokens / PrefillTPS, then
//     decodes ReplyTokens at Rate(TokensPerSec, n), where n is the number of
//     requests decoding on the server at that moment, over all its models.
type Scenario struct {
	Servers []Server
	Models  map[string]Model
	Jobs    []Job    // in submission order
	Rate    RateFunc // required; sim.StreamRate for the simulator's
	// HideVRAM shows the policy no VRAM figures, as a live fleet that cannot
	// read them sees the servers (the simulation still honours VRAM).
	HideVRAM bool
	// HideJobTimes shows the policy no measured job times (placement.ModelView.JobTime).
	HideJobTimes bool
	// HideLoadTimes shows the policy no load times (placement.ModelView.LoadTime).
	HideLoadTimes bool
}

// Server is one simulated server (one GPU pool).
type Server struct {
	Name     string
	Slots    int
	VRAMGB   float64
	LoadGBps float64
	Offered  []string // nil: every model of the scenario
	Preload  []string // resident at the start
	// Static servers hold every offered model at all times and never load
	// (vLLM, hosted APIs); VRAMGB and LoadGBps do not matter for them.
	Static bool
}

// Model is one simulated model. Zero PrefillTPS or TTFT mean none.
type Model struct {
	SizeGB       float64
	TokensPerSec float64 // single-stream decode rate
	PrefillTPS   float64
	TTFT         time.Duration
}

// Job is one request of the battery.
type Job struct {
	Model        string
	Purpose      chat.Purpose
	PromptTokens int
	ReplyTokens  int
	Pinned       string
	// Judges is, for a judge job, the index in Scenario.Jobs of the
	// inference job whose cell it judges: it becomes ready when that ends.
	Judges int
}

// warmupPromptTokens is the prompt of the fleet's warm-up request ("Hi" in a
// chat template).
const warmupPromptTokens = 8

// Result is what a simulated run did, in virtual time.
type Result struct {
	Judging      string
	Makespan     time.Duration // start to the last job's end
	InferenceEnd time.Duration // start to the last inference job's end
	Loads        int           // model loads made (warm-ups), preloads not counted
	// IdleShare is the share of GPU time, over all servers and the whole
	// makespan, with no request prefilling or decoding (0..1).
	IdleShare float64
	Servers   []ServerTrace
}

// ServerTrace is one server's account of a simulated run. Busy, LoadIdle
// and Idle add up to the makespan.
type ServerTrace struct {
	Name string
	Jobs int
	Busy time.Duration // at least one request prefilling or decoding
	Full time.Duration // of Busy: every slot decoding
	// LoadIdle: nothing running while a model loads.
	LoadIdle time.Duration
	// Idle: nothing running, nothing loading (no work placed, or jobs
	// waiting for a model that another load must finish first).
	Idle  time.Duration
	Loads []LoadRecord
}

// LoadRecord is one model load in a simulated run.
type LoadRecord struct {
	Model   string
	Start   time.Duration
	End     time.Duration // warm-up included
	Evicted []string
}

// Simulate runs sc's jobs through policy p in virtual time under a
// judging schedule (JudgingTwoPhase or JudgingPipelined) and reports the
// run. It is deterministic: the same inputs give the same result. It fails
// on an invalid scenario, an invalid assignment from p, or p leaving work
// queued on an idle fleet (a policy may wait for a better placement, never
// for ever).
func Simulate(sc Scenario, p placement.Policy, judging string) (Result, error) {
	if err := sc.validate(); err != nil {
		return Result{}, fmt.Errorf("simulate: %w", err)
	}
	switch judging {
	case JudgingTwoPhase, JudgingPipelined:
	default:
		return Result{}, fmt.Errorf("simulate: judging %q: want %q or %q", judging, JudgingTwoPhase, JudgingPipelined)
	}
	r := newDESRun(sc, p, judging == JudgingPipelined)
	if err := r.run(); err != nil {
		return Result{}, fmt.Errorf("simulate (%s): %w", judging, err)
	}
	res := r.result()
	res.Judging = judging
	return res, nil
}

func (sc *Scenario) validate() error {
	if sc.Rate == nil {
		return errors.New("scenario has no rate function (use sim.StreamRate)")
	}
	if len(sc.Servers) == 0 {
		return errors.New("scenario has no servers")
	}
	names := map[string]bool{}
	for _, s := range sc.Servers {
		switch {
		case s.Name == "" || names[s.Name]:
			return fmt.Errorf("server %q: names must be set and unique", s.Name)
		case s.Slots < 1:
			return fmt.Errorf("server %s: slots %d: want at least 1", s.Name, s.Slots)
		case !s.Static && (s.VRAMGB <= 0 || s.LoadGBps <= 0):
			return fmt.Errorf("server %s: a loading server needs VRAMGB and LoadGBps above 0", s.Name)
		}
		names[s.Name] = true
		for _, m := range append(append([]string(nil), s.Offered...), s.Preload...) {
			if _, ok := sc.Models[m]; !ok {
				return fmt.Errorf("server %s: model %q is not in the scenario's models", s.Name, m)
			}
		}
	}
	for name, m := range sc.Models {
		if m.SizeGB <= 0 || m.TokensPerSec <= 0 {
			return fmt.Errorf("model %s: SizeGB and TokensPerSec must be above 0", name)
		}
	}
	for i, j := range sc.Jobs {
		if _, ok := sc.Models[j.Model]; !ok {
			return fmt.Errorf("job %d: model %q is not in the scenario's models", i, j.Model)
		}
		if j.PromptTokens < 0 || j.ReplyTokens < 0 {
			return fmt.Errorf("job %d: negative token counts", i)
		}
		if j.Pinned != "" && !names[j.Pinned] {
			return fmt.Errorf("job %d: pinned to unknown server %q", i, j.Pinned)
		}
		if j.Purpose == chat.PurposeJudge {
			if j.Judges < 0 || j.Judges >= len(sc.Jobs) || sc.Jobs[j.Judges].Purpose == chat.PurposeJudge {
				return fmt.Errorf("job %d: judges job %d, which is not an inference job", i, j.Judges)
			}
		}
		if !sc.canRun(j) {
			return fmt.Errorf("job %d: no server offers model %q with room for its %.1f GB", i, j.Model, sc.Models[j.Model].SizeGB)
		}
	}
	return nil
}

// canRun reports whether some server could ever run j.
func (sc *Scenario) canRun(j Job) bool {
	for _, s := range sc.Servers {
		if j.Pinned != "" && j.Pinned != s.Name {
			continue
		}
		if s.offers(j.Model) && (s.Static || sc.Models[j.Model].SizeGB <= s.VRAMGB) {
			return true
		}
	}
	return false
}

func (s Server) offers(m string) bool {
	if s.Offered == nil {
		return true
	}
	for _, o := range s.Offered {
		if o == m {
			return true
		}
	}
	return false
}

// loadTime is how long loading m takes on s, warm-up included.
func (sc *Scenario) loadTime(s Server, m string) float64 {
	spec := sc.Models[m]
	t := spec.SizeGB/s.LoadGBps + spec.TTFT.Seconds() + 1/spec.TokensPerSec
	if spec.PrefillTPS > 0 {
		t += warmupPromptTokens / spec.PrefillTPS
	}
	return t
}

// prefill is how long a request of j takes to its first token.
func (sc *Scenario) prefill(j Job) float64 {
	spec := sc.Models[j.Model]
	t := spec.TTFT.Seconds()
	if spec.PrefillTPS > 0 {
		t += float64(j.PromptTokens) / spec.PrefillTPS
	}
	return t
}

// maxSummaryLoads caps the loads Summary lists per server.
const maxSummaryLoads = 12

// Summary is a few lines for a person: makespan, loads, and where each
// server's time went.
func (r Result) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: makespan %s (inference ends %s), %d loads, GPU idle %.1f%%\n",
		r.Judging, r.Makespan.Round(time.Second), r.InferenceEnd.Round(time.Second), r.Loads, 100*r.IdleShare)
	for _, s := range r.Servers {
		fmt.Fprintf(&b, "  %-8s %4d jobs  busy %6.0fs (full %6.0fs)  loading %5.0fs  idle %5.0fs  loads %d:",
			s.Name, s.Jobs, s.Busy.Seconds(), s.Full.Seconds(), s.LoadIdle.Seconds(), s.Idle.Seconds(), len(s.Loads))
		for i, l := range s.Loads {
			if i == maxSummaryLoads {
				fmt.Fprintf(&b, " … %d more", len(s.Loads)-i)
				break
			}
			fmt.Fprintf(&b, " %s@%.0f", l.Model, l.Start.Seconds())
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// seconds turns virtual seconds into a duration.
func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
