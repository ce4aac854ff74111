package gpu

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// MakespanBound is a lower bound on the makespan of a scenario under any
// placement policy and either judging schedule, in SimulateScenario's model.
type MakespanBound struct {
	Total time.Duration
	// Work is the fleet's total GPU work divided by its servers: each job at
	// the best throughput a server can give it (see LowerBound).
	Work time.Duration
	// Load is what the loads add: Total - Work.
	Load time.Duration
}

// LowerBound computes a makespan no policy can beat on sc.
//
// Work. On a server with S slots, n requests decoding together progress at
// Rate(r, n) tokens/s each, so a reply of R tokens of a model of
// single-stream rate r is R/r seconds of "solo work", and the server gets
// through A(n) = n·Rate(1, n) solo seconds per second (this needs Rate to be
// proportional to r, as sim.StreamRate is; LowerBound checks it). A request
// prefilling holds a slot without decoding, so with k of them at most S-k
// decode. Let M(n) be the largest A(m) for m ≤ n and
//
//	β = min over k = 1..S of (1 - M(S-k)/M(S)) / k.
//
// At any instant, (solo progress)/M(S) + β·(requests prefilling) ≤ 1, so a
// server needs at least
//
//	c(job) = (R/r) / M(S) + β · prefill(job)
//
// seconds per job, summed over the jobs it runs. For sim.StreamRate and two
// slots, M(2) = 2^0.7 ≈ 1.62 and β = 1 - 2^-0.7 ≈ 0.38. Each job is counted
// at its cheapest server; W is the sum.
//
// Loads. A server that starts with nothing resident runs nothing before its
// first load (warm-up included) ends, and that load takes at least L, the
// shortest load of a model it offers. So a server that does any work has
// T ≥ L + its work, and the bound is the least T with
//
//	G·T - Σ min(L_g, T) ≥ W
//
// over the G servers (servers that start with a model resident have L = 0).
// With equal servers and W large this is W/G + L: the shortest load, once.
// Adding every model's load time would not be a valid bound, because a
// load may overlap another resident model's streams on the same server.
func LowerBound(sc Scenario) (MakespanBound, error) {
	if err := sc.validate(); err != nil {
		return MakespanBound{}, fmt.Errorf("lower bound: %w", err)
	}
	type shape struct{ m, beta float64 }
	shapes := make([]shape, len(sc.Servers))
	for i, s := range sc.Servers {
		m, beta, err := batchShape(sc.Rate, s.Slots)
		if err != nil {
			return MakespanBound{}, fmt.Errorf("lower bound: server %s: %w", s.Name, err)
		}
		shapes[i] = shape{m, beta}
	}
	for name, m := range sc.Models {
		for n := 1; n <= 64; n *= 2 {
			want := m.TokensPerSec * sc.Rate(1, n)
			if got := sc.Rate(m.TokensPerSec, n); math.Abs(got-want) > 1e-9*want {
				return MakespanBound{}, fmt.Errorf("lower bound: model %s: the rate function is not proportional to the single-stream rate (%g vs %g at n=%d)", name, got, want, n)
			}
		}
	}
	var work float64
	for _, j := range sc.Jobs {
		spec := sc.Models[j.Model]
		best := math.Inf(1)
		for i, s := range sc.Servers {
			if !s.offers(j.Model) || (j.Pinned != "" && j.Pinned != s.Name) || (!s.Static && spec.SizeGB > s.VRAMGB) {
				continue
			}
			c := float64(j.ReplyTokens)/spec.TokensPerSec/shapes[i].m + shapes[i].beta*sc.prefill(j)
			best = min(best, c)
		}
		work += best
	}
	firstLoad := make([]float64, len(sc.Servers))
	for i, s := range sc.Servers {
		if s.Static || len(s.Preload) > 0 {
			continue
		}
		firstLoad[i] = math.Inf(1)
		for m := range sc.Models {
			if s.offers(m) && sc.Models[m].SizeGB <= s.VRAMGB {
				firstLoad[i] = min(firstLoad[i], sc.loadTime(s, m))
			}
		}
	}
	g := float64(len(sc.Servers))
	capacity := func(t float64) float64 { // G·T - Σ min(L_g, T)
		c := g * t
		for _, l := range firstLoad {
			c -= min(l, t)
		}
		return c
	}
	// capacity(work + every finite first load) ≥ work: some server that can
	// run the jobs has a finite first load.
	lo, hi := work/g, work
	for _, l := range firstLoad {
		if !math.IsInf(l, 1) {
			hi += l
		}
	}
	if work > 0 {
		for range 200 {
			mid := (lo + hi) / 2
			if capacity(mid) >= work {
				hi = mid
			} else {
				lo = mid
			}
		}
	}
	return MakespanBound{Total: seconds(hi), Work: seconds(work / g), Load: seconds(hi - work/g)}, nil
}

// batchShape returns M(S), the best aggregate solo-work rate of a server
// with s slots, and β, what a prefilling request costs it (see LowerBound).
func batchShape(rate RateFunc, slots int) (m, beta float64, err error) {
	best := make([]float64, slots+1) // best[n] = M(n)
	for n := 1; n <= slots; n++ {
		a := float64(n) * rate(1, n)
		if !(a > 0) || math.IsInf(a, 0) {
			return 0, 0, errors.New("the rate function gives no positive finite throughput")
		}
		best[n] = max(best[n-1], a)
	}
	m, beta = best[slots], math.Inf(1)
	for k := 1; k <= slots; k++ {
		beta = min(beta, (1-best[slots-k]/m)/float64(k))
	}
	return m, beta, nil
}
