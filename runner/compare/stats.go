package compare

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Interval is an estimate with its confidence interval.
type Interval struct {
	Value float64 `json:"value"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
}

// Overlaps reports whether two intervals share a point.
func (a Interval) Overlaps(b Interval) bool { return a.Lo <= b.Hi && b.Lo <= a.Hi }

// zFor is the two-sided normal quantile of a confidence level (1.96 for 0.95).
func zFor(level float64) float64 { return math.Sqrt2 * math.Erfinv(level) }

// Wilson is the pass rate k/n with its Wilson score interval at the
// normal quantile z. Unlike the textbook p ± z·√(p(1−p)/n), it stays inside
// [0, 1] and does not collapse to a point at 0/n or n/n, which is what a
// 15-test battery mostly gives. n = 0 says nothing: rate 0, interval [0, 1].
//
//	centre = (k + z²/2) / (n + z²)
//	half   = z / (n + z²) · √(k(n−k)/n + z²/4)
func Wilson(k, n int, z float64) Interval {
	if n <= 0 {
		return Interval{Lo: 0, Hi: 1}
	}
	kf, nf, z2 := float64(k), float64(n), z*z
	centre := (kf + z2/2) / (nf + z2)
	half := z / (nf + z2) * math.Sqrt(kf*(nf-kf)/nf+z2/4)
	return Interval{Value: kf / nf, Lo: max(0, centre-half), Hi: min(1, centre+half)}
}

// McNemar methods.
const (
	MethodNone   = "none"       // no discordant pair: nothing to test
	MethodExact  = "exact"      // two-sided exact binomial test
	MethodChi2   = "chi-square" // with Edwards' continuity correction
	ExactBelow   = 25           // discordant pairs under which the exact test is used
	defaultLevel = 0.95
)

// McNemarTest is the result of McNemar's paired test of A against B over
// the items both were tried on.
type McNemarTest struct {
	OnlyA     int     `json:"only_a"` // pairs A passed and B did not
	OnlyB     int     `json:"only_b"` // pairs B passed and A did not
	Method    string  `json:"method"`
	Statistic float64 `json:"statistic,omitempty"` // χ² for the chi-square method
	P         float64 `json:"p"`                   // two-sided p-value
}

// McNemar tests whether A and B pass the same items equally often, from the
// pairs only one of them passed (onlyA, onlyB); pairs both or neither passed
// say nothing about the difference.
//
//  1. onlyA + onlyB = 0: p = 1 (method none).
//  2. onlyA + onlyB < ExactBelow: under the null each discordant pair is a
//     fair coin, so p = min(1, 2·P(X ≤ min(onlyA, onlyB))), X ~ Bin(n, ½).
//  3. Otherwise χ² = (|onlyA − onlyB| − 1)² / (onlyA + onlyB) with one degree
//     of freedom, p = erfc(√(χ²/2)).
func McNemar(onlyA, onlyB int) McNemarTest {
	t := McNemarTest{OnlyA: onlyA, OnlyB: onlyB, Method: MethodNone, P: 1}
	n := onlyA + onlyB
	switch {
	case n <= 0:
	case n < ExactBelow:
		t.Method = MethodExact
		t.P = min(1, 2*binomCDFHalf(min(onlyA, onlyB), n))
	default:
		t.Method = MethodChi2
		d := math.Abs(float64(onlyA-onlyB)) - 1
		if d < 0 {
			d = 0
		}
		t.Statistic = d * d / float64(n)
		t.P = math.Erfc(math.Sqrt(t.Statistic / 2))
	}
	return t
}

// binomCDFHalf is P(X ≤ k) for X ~ Bin(n, ½), summed in log space so that
// large n does not overflow.
func binomCDFHalf(k, n int) float64 {
	sum := 0.0
	for i := 0; i <= k; i++ {
		lc, _ := math.Lgamma(float64(n + 1))
		li, _ := math.Lgamma(float64(i + 1))
		lni, _ := math.Lgamma(float64(n - i + 1))
		sum += math.Exp(lc - li - lni - float64(n)*math.Ln2)
	}
	return sum
}

// Bootstrap estimates the mean of values grouped by test and its
// percentile interval at level, resampling whole groups with replacement:
// cells of one test (its repeats) rise and fall together, so tests, not
// cells, are the independent units. The generator is seeded, so the same
// groups, seed and resamples give the same interval. Empty groups are
// ignored; with no values the interval is [0, 1] around 0.
func Bootstrap(groups [][]float64, seed uint64, resamples int, level float64) Interval {
	var kept [][]float64
	sum, n := 0.0, 0
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		kept = append(kept, g)
		for _, v := range g {
			sum += v
		}
		n += len(g)
	}
	if n == 0 {
		return Interval{Lo: 0, Hi: 1}
	}
	mean := sum / float64(n)
	if resamples <= 0 {
		resamples = 2000
	}
	sums := make([]float64, len(kept))
	for i, g := range kept {
		for _, v := range g {
			sums[i] += v
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	means := make([]float64, resamples)
	for r := range means {
		s, c := 0.0, 0
		for range kept {
			i := rng.IntN(len(kept))
			s += sums[i]
			c += len(kept[i])
		}
		means[r] = s / float64(c)
	}
	slices.Sort(means)
	tail := (1 - level) / 2
	return Interval{Value: mean, Lo: quantileSorted(means, tail), Hi: quantileSorted(means, 1-tail)}
}

// quantileSorted is the q-quantile of sorted values by linear interpolation
// between closest ranks (Hyndman and Fan's type 7, as R and NumPy default).
func quantileSorted(x []float64, q float64) float64 {
	if len(x) == 0 {
		return 0
	}
	h := float64(len(x)-1) * q
	lo := int(math.Floor(h))
	if lo >= len(x)-1 {
		return x[len(x)-1]
	}
	if lo < 0 {
		return x[0]
	}
	return x[lo] + (h-float64(lo))*(x[lo+1]-x[lo])
}

// Spread is the median and 95th percentile of a measure over cells.
type Spread struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	P95    float64 `json:"p95"`
}

// spreadOf is the Spread of values (copied, not changed).
func spreadOf(values []float64) Spread {
	if len(values) == 0 {
		return Spread{}
	}
	x := slices.Clone(values)
	slices.Sort(x)
	return Spread{N: len(x), Median: quantileSorted(x, 0.5), P95: quantileSorted(x, 0.95)}
}
