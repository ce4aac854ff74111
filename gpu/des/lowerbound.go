package des

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// MakespanBound is a lower bound on the makespan of a scenario under any
// placement policy and either judging schedule, in Simulate's model.
type MakespanBound struct {
	Total time.Duration
	// Work is the fleet's total GPU work divided by its servers: each job at
	// the best throughput a server can give it (see LowerBound).
	Work time.Duration
	// Load is the rest, Total - Work: the first load each server must wait
	// for, and work that only some servers may run.
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
//
// Loads that must happen cost more than that. A model that must be loaded
// (a job asks for it; no server that may run its jobs is static or starts
// with it) and fits beside nothing there is dead time whole (modelLoad).
// Any other such load holds a slot while it lasts, its warm-up's or its
// waiting job's, so at most S-1-k requests decode beside k prefilling.
// With
//
//	β_load = min over k = 0..S-1 of 1 - β·k - M(S-1-k)/M(S)
//
// (solo progress)/M(S) + β·(prefilling) + β_load·(loading) ≤ 1 still holds,
// so each costs at least β_load × its load time (modelLoad), once per model
// (two slots under sim.StreamRate: β_load = β ≈ 0.38). Either kind may be a
// server's first load, already counted: what is given back is the most
// that the servers' first loads can have counted twice (subsetBound).
//
// Jobs that only some servers may run (pinned, offered or fitting only
// there) must also fit in those servers' time: the same bound is taken over
// each such set of servers with its jobs alone, and the largest one wins.
func LowerBound(sc Scenario) (MakespanBound, error) {
	if err := sc.validate(); err != nil {
		return MakespanBound{}, fmt.Errorf("lower bound: %w", err)
	}
	type shape struct{ m, beta, betaLoad float64 }
	shapes := make([]shape, len(sc.Servers))
	for i, s := range sc.Servers {
		m, beta, betaLoad, err := batchShape(sc.Rate, s.Slots)
		if err != nil {
			return MakespanBound{}, fmt.Errorf("lower bound: server %s: %w", s.Name, err)
		}
		shapes[i] = shape{m, beta, betaLoad}
	}
	for name, m := range sc.Models {
		for n := 1; n <= 64; n *= 2 {
			want := m.TokensPerSec * sc.Rate(1, n)
			if got := sc.Rate(m.TokensPerSec, n); math.Abs(got-want) > 1e-9*want {
				return MakespanBound{}, fmt.Errorf("lower bound: model %s: the rate function is not proportional to the single-stream rate (%g vs %g at n=%d)", name, got, want, n)
			}
		}
	}
	// Each job's cost at its cheapest server, and the servers it may use.
	cost := make([]float64, len(sc.Jobs))
	elig := make([]string, len(sc.Jobs)) // a set of server indices, as a key
	sets := map[string][]int{}
	for i, j := range sc.Jobs {
		spec := sc.Models[j.Model]
		cost[i] = math.Inf(1)
		var key strings.Builder
		var set []int
		for g, s := range sc.Servers {
			if !s.offers(j.Model) || (j.Pinned != "" && j.Pinned != s.Name) || (!s.Static && spec.SizeGB > s.VRAMGB) {
				continue
			}
			c := float64(j.ReplyTokens)/spec.TokensPerSec/shapes[g].m + shapes[g].beta*sc.prefill(j)
			cost[i] = min(cost[i], c)
			fmt.Fprintf(&key, "%d,", g)
			set = append(set, g)
		}
		elig[i] = key.String()
		sets[elig[i]] = set
	}
	firstLoad := make([]float64, len(sc.Servers))
	for g, s := range sc.Servers {
		if s.Static || len(s.Preload) > 0 {
			continue
		}
		firstLoad[g] = math.Inf(1)
		for m := range sc.Models {
			if s.offers(m) && sc.Models[m].SizeGB <= s.VRAMGB {
				firstLoad[g] = min(firstLoad[g], sc.loadTime(s, m))
			}
		}
	}
	betaLoad := make([]float64, len(shapes))
	for g, sh := range shapes {
		betaLoad[g] = sh.betaLoad
	}
	lonely, held := loadsToMake(sc, betaLoad)
	all := make([]int, len(sc.Servers))
	for g := range all {
		all[g] = g
	}
	var work float64
	for _, c := range cost {
		work += c
	}
	total := subsetBound(work, all, firstLoad, costsWithin(lonely, all), costsWithin(held, all))
	// Jobs that only some servers may run (pins, offers, VRAM) must fit in
	// those servers' time: bound each such set of servers on its own.
	for _, set := range sets {
		in := map[int]bool{}
		for _, g := range set {
			in[g] = true
		}
		var w float64
		for i, c := range cost {
			if within(sets[elig[i]], in) {
				w += c
			}
		}
		total = max(total, subsetBound(w, set, firstLoad, costsWithin(lonely, set), costsWithin(held, set)))
	}
	g := float64(len(sc.Servers))
	return MakespanBound{Total: seconds(total), Work: seconds(work / g), Load: seconds(total - work/g)}, nil
}

// within reports whether every server in set lies in in.
func within(set []int, in map[int]bool) bool {
	for _, g := range set {
		if !in[g] {
			return false
		}
	}
	return true
}

// mustLoad finds the models that must be loaded at least once: a job asks
// for each, and no server that may run its jobs is static or starts with
// it. It maps each to those servers, in order.
func mustLoad(sc Scenario) map[string][]int {
	servers := map[string]map[int]bool{} // model -> the servers that may run a job of it
	for _, j := range sc.Jobs {
		if servers[j.Model] == nil {
			servers[j.Model] = map[int]bool{}
		}
		for g, s := range sc.Servers {
			if s.offers(j.Model) && (j.Pinned == "" || j.Pinned == s.Name) && (s.Static || sc.Models[j.Model].SizeGB <= s.VRAMGB) {
				servers[j.Model][g] = true
			}
		}
	}
	out := map[string][]int{}
	for m, in := range servers {
		set := slices.Sorted(maps.Keys(in))
		ok := len(set) > 0
		for _, g := range set {
			if s := sc.Servers[g]; s.Static || slices.Contains(s.Preload, m) {
				ok = false
			}
		}
		if ok {
			out[m] = set
		}
	}
	return out
}

// modelLoad is a model that must be loaded (mustLoad) and what its load
// costs at least, at the cheapest of the servers that may run its jobs.
//
// A lonely load fits beside no other model there: it first evicts
// everything and the server runs nothing until it ends, so it costs its
// whole load time. Any other (held) load may overlap other models' streams,
// but it holds one of the server's slots while it lasts (its warm-up, or
// the job waiting for it), so it costs at least β_load × its load time
// (see LowerBound).
type modelLoad struct {
	model   string
	servers []int // the servers that may run its jobs
	cost    float64
}

// loadsToMake splits the models that must be loaded into the lonely ones
// and the held ones, in model order.
func loadsToMake(sc Scenario, betaLoad []float64) (lonely, held []modelLoad) {
	must := mustLoad(sc)
	for _, m := range slices.Sorted(maps.Keys(must)) {
		set := must[m]
		l := modelLoad{model: m, servers: set, cost: math.Inf(1)}
		h := modelLoad{model: m, servers: set, cost: math.Inf(1)}
		alone := true
		for _, g := range set {
			s := sc.Servers[g]
			alone = alone && sc.fitsBesideNothing(s, m)
			l.cost = min(l.cost, sc.loadTime(s, m))
			h.cost = min(h.cost, betaLoad[g]*sc.loadTime(s, m))
		}
		if alone {
			lonely = append(lonely, l)
		} else {
			held = append(held, h)
		}
	}
	return lonely, held
}

// lonelyLoads finds the scenario's lonely loads (see modelLoad).
func lonelyLoads(sc Scenario) []modelLoad {
	lonely, _ := loadsToMake(sc, make([]float64, len(sc.Servers)))
	return lonely
}

// fitsBesideNothing reports whether m, loaded on s, leaves room for no
// other model s may hold.
func (sc *Scenario) fitsBesideNothing(s Server, m string) bool {
	size := sc.Models[m].SizeGB
	for x, spec := range sc.Models {
		if x != m && (s.offers(x) || slices.Contains(s.Preload, x)) && size+spec.SizeGB <= s.VRAMGB+1e-9 {
			return false
		}
	}
	return true
}

// costsWithin is the costs of the loads whose servers all lie in set:
// they must happen on a server of set.
func costsWithin(loads []modelLoad, set []int) []float64 {
	in := map[int]bool{}
	for _, g := range set {
		in[g] = true
	}
	var out []float64
	for _, l := range loads {
		if within(l.servers, in) {
			out = append(out, l.cost)
		}
	}
	return out
}

// subsetBound is the least T at which the servers of set have room for
// work once their dead time is taken out: each server's first load (L_g),
// and each lonely load (ℓ), all of which run nothing; and the capacity each
// held load costs (h: β_load × its load time). A server's first load may
// be a lonely load or a held one, counted twice then: what is given back
// is the most that f first loads can have counted twice (f the servers of
// set that have a first load), j of them lonely (at most k, the lonely
// loads) and the rest held:
//
//	|set|·T - Σ min(L_g, T) - Σ ℓ - Σ h
//	        + max over j ≤ k of ((the j largest min(L_g, T)) + (the f-j largest h)) ≥ work
func subsetBound(work float64, set []int, firstLoad, lonely, held []float64) float64 {
	if work <= 0 || len(set) == 0 {
		return 0
	}
	// The held loads' cost is the same at every T: each lies within the
	// makespan, on one server, one load at a time. top[i] is the sum of
	// the i largest.
	held = slices.Sorted(slices.Values(held))
	slices.Reverse(held)
	top := make([]float64, len(held)+1)
	for i, h := range held {
		top[i+1] = top[i] + h
	}
	firsts := 0
	for _, g := range set {
		if firstLoad[g] > 0 && !math.IsInf(firstLoad[g], 1) {
			firsts++
		}
	}
	capacity := func(t float64) float64 {
		c := float64(len(set))*t - top[len(held)]
		first := make([]float64, 0, len(set))
		for _, g := range set {
			first = append(first, min(firstLoad[g], t))
			c -= min(firstLoad[g], t)
		}
		for _, l := range lonely {
			// Not min(l, t): a lonely load ends before its model's jobs
			// run, so within the makespan; whole, it keeps capacity
			// growing with t, which the search below needs.
			c -= l
		}
		slices.Sort(first)
		slices.Reverse(first)
		// Given back: the j largest first loads (lonely there) and the
		// f-j largest held loads, j as gives the most. A j beyond what
		// can happen only gives more back: the bound stays valid, and
		// capacity still grows with t.
		var best, firstSum float64
		for j := 0; j <= min(len(lonely), len(first)); j++ {
			if j > 0 {
				firstSum += first[j-1]
			}
			best = max(best, firstSum+top[min(max(firsts-j, 0), len(held))])
		}
		return c + best
	}
	// capacity(work + every finite first load + every load) ≥ work: a
	// server of the set that can run the jobs has a finite first load.
	lo, hi := work/float64(len(set)), work+top[len(held)]
	for _, g := range set {
		if !math.IsInf(firstLoad[g], 1) {
			hi += firstLoad[g]
		}
	}
	for _, l := range lonely {
		hi += l
	}
	for range 200 {
		mid := (lo + hi) / 2
		if capacity(mid) >= work {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// batchShape returns M(S), the best aggregate solo-work rate of a server
// with s slots, β, what a prefilling request costs it, and β_load, what a
// load costs it (see LowerBound).
func batchShape(rate RateFunc, slots int) (m, beta, betaLoad float64, err error) {
	best := make([]float64, slots+1) // best[n] = M(n)
	for n := 1; n <= slots; n++ {
		a := float64(n) * rate(1, n)
		if !(a > 0) || math.IsInf(a, 0) {
			return 0, 0, 0, errors.New("the rate function gives no positive finite throughput")
		}
		best[n] = max(best[n-1], a)
	}
	m, beta = best[slots], math.Inf(1)
	for k := 1; k <= slots; k++ {
		beta = min(beta, (1-best[slots-k]/m)/float64(k))
	}
	// A load holds a slot: with k requests prefilling besides, at most
	// S-1-k decode. β_load is the most it can be charged so that
	// (solo progress)/M(S) + β·k + β_load ≤ 1 still holds at every k.
	betaLoad = math.Inf(1)
	for k := 0; k < slots; k++ {
		betaLoad = min(betaLoad, 1-beta*float64(k)-best[slots-1-k]/m)
	}
	return m, beta, max(betaLoad, 0), nil
}
