package compare

import (
	"math"
	"testing"
)

const z95 = 1.959963984540054

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestZForLevel(t *testing.T) {
	if z := zFor(0.95); !near(z, z95, 1e-12) {
		t.Fatalf("zFor(0.95) = %v, want %v", z, z95)
	}
}

// Hand-computed with centre = (k + z²/2)/(n + z²) and half = z/(n + z²) ·
// √(k(n−k)/n + z²/4), z² = 3.841459:
//
//	0/10:  centre = 1.920729/13.841459 = 0.138767, half = 0.141601·0.979982 = 0.138767
//	5/10:  centre = 0.5, half = 0.141601·√(2.5 + 0.960365) = 0.263407
//	15/15: centre = 16.920729/18.841459 = 0.898058, half = 0.104024·0.979982 = 0.101942
//	12/15: centre = 13.920729/18.841459 = 0.738835, half = 0.104024·√(2.4 + 0.960365) = 0.190690
func TestWilsonHandComputed(t *testing.T) {
	for _, tt := range []struct {
		k, n   int
		lo, hi float64
	}{
		{0, 10, 0, 0.277533},
		{5, 10, 0.236593, 0.763407},
		{10, 10, 0.722467, 1},
		{15, 15, 0.796117, 1},
		{12, 15, 0.548146, 0.929525},
		{0, 0, 0, 1}, // nothing decided: ignorance, not a result
	} {
		got := Wilson(tt.k, tt.n, z95)
		if !near(got.Lo, tt.lo, 1e-6) || !near(got.Hi, tt.hi, 1e-6) {
			t.Errorf("Wilson(%d, %d) = [%.6f, %.6f], want [%.6f, %.6f]", tt.k, tt.n, got.Lo, got.Hi, tt.lo, tt.hi)
		}
		if tt.n > 0 && !near(got.Value, float64(tt.k)/float64(tt.n), 1e-12) {
			t.Errorf("Wilson(%d, %d).Value = %v", tt.k, tt.n, got.Value)
		}
	}
}

func TestWilsonNarrowsWithN(t *testing.T) {
	small, large := Wilson(8, 10, z95), Wilson(80, 100, z95)
	if large.Hi-large.Lo >= small.Hi-small.Lo {
		t.Fatalf("80/100 %v is not narrower than 8/10 %v", large, small)
	}
}

// Exact cases: p = min(1, 2·Σ_{i≤min} C(n, i)/2ⁿ).
//
//	5 vs 0:  n = 5,  2·1/32 = 0.0625
//	6 vs 1:  n = 7,  2·(1+7)/128 = 0.125
//	10 vs 2: n = 12, 2·(1+12+66)/4096 = 158/4096
//	3 vs 3:  n = 6,  2·(1+6+15+20)/64 > 1, so 1
//	17 vs 7: n = 24, 2·(1+24+276+2024+10626+42504+134596+346104)/2²⁴ = 2·536155/16777216
//
// Chi-square cases, χ² = (|b−c|−1)²/(b+c), p = P(χ²₁ > χ²):
//
//	18 vs 7:  n = 25 (the first above the exact range), χ² = 10²/25 = 4, p = P(|Z| > 2) = 0.0455003
//	20 vs 8:  χ² = 11²/28 = 4.321429, p = 0.0376353
//	30 vs 10: χ² = 19²/40 = 9.025, p = 0.0026631
//	13 vs 12: χ² = 0 (the correction eats the difference of 1), p = 1
func TestMcNemarHandComputed(t *testing.T) {
	for _, tt := range []struct {
		b, c   int
		method string
		stat   float64
		p      float64
	}{
		{0, 0, MethodNone, 0, 1},
		{5, 0, MethodExact, 0, 0.0625},
		{0, 5, MethodExact, 0, 0.0625},
		{6, 1, MethodExact, 0, 0.125},
		{10, 2, MethodExact, 0, 158.0 / 4096},
		{3, 3, MethodExact, 0, 1},
		{17, 7, MethodExact, 0, 2 * 536155.0 / 16777216},
		{18, 7, MethodChi2, 4, 0.0455003},
		{20, 8, MethodChi2, 121.0 / 28, 0.0376353},
		{30, 10, MethodChi2, 9.025, 0.0026631},
		{13, 12, MethodChi2, 0, 1},
	} {
		got := McNemar(tt.b, tt.c)
		if got.Method != tt.method || !near(got.Statistic, tt.stat, 1e-9) || !near(got.P, tt.p, 5e-7) {
			t.Errorf("McNemar(%d, %d) = %s χ²=%v p=%v, want %s χ²=%v p=%v",
				tt.b, tt.c, got.Method, got.Statistic, got.P, tt.method, tt.stat, tt.p)
		}
		if got.OnlyA != tt.b || got.OnlyB != tt.c {
			t.Errorf("McNemar(%d, %d) kept %d, %d", tt.b, tt.c, got.OnlyA, got.OnlyB)
		}
	}
}

func TestBootstrapIsDeterministic(t *testing.T) {
	groups := [][]float64{{1, 0.8}, {0}, {0.5, 0.7}, {1}, {0.2}, {0.9, 1}, {0}, {0.6}}
	a := Bootstrap(groups, 7, 1000, 0.95)
	b := Bootstrap(groups, 7, 1000, 0.95)
	if a != b {
		t.Fatalf("same seed, different intervals: %v and %v", a, b)
	}
	c := Bootstrap(groups, 8, 1000, 0.95)
	if c == a {
		t.Fatalf("seeds 7 and 8 drew the same interval %v: is the seed used?", a)
	}
	const mean = (1 + 0.8 + 0 + 0.5 + 0.7 + 1 + 0.2 + 0.9 + 1 + 0 + 0.6) / 11
	if !near(a.Value, mean, 1e-12) {
		t.Errorf("Value = %v, want the plain mean %v", a.Value, mean)
	}
	if !(a.Lo < a.Value && a.Value < a.Hi) {
		t.Errorf("interval %v does not hold the mean strictly inside", a)
	}
}

func TestBootstrapResamplesTestsNotCells(t *testing.T) {
	// One test passed every repeat, one failed every repeat. Resampling
	// tests, a quarter of draws are all-fail and a quarter all-pass, so the
	// 95% interval is [0, 1]; resampling the 20 cells would claim ±0.22.
	groups := [][]float64{{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}
	got := Bootstrap(groups, 1, 2000, 0.95)
	if got.Value != 0.5 || got.Lo != 0 || got.Hi != 1 {
		t.Fatalf("Bootstrap = %+v, want 0.5 in [0, 1]", got)
	}
}

func TestBootstrapDegenerate(t *testing.T) {
	if got := Bootstrap([][]float64{{0.7, 0.7}, {0.7}}, 1, 100, 0.95); !near(got.Lo, 0.7, 1e-12) || !near(got.Hi, 0.7, 1e-12) {
		t.Errorf("constant scores: %+v, want [0.7, 0.7]", got)
	}
	if got := Bootstrap(nil, 1, 100, 0.95); got != (Interval{Lo: 0, Hi: 1}) {
		t.Errorf("no scores: %+v, want 0 in [0, 1]", got)
	}
}

func TestSpreadQuantiles(t *testing.T) {
	// Type 7: h = (n−1)q; 4 values, q = 0.95: h = 2.85, 3 + 0.85·(4−3).
	got := spreadOf([]float64{4, 1, 3, 2})
	if got.N != 4 || got.Median != 2.5 || !near(got.P95, 3.85, 1e-12) {
		t.Fatalf("spreadOf = %+v, want median 2.5, p95 3.85", got)
	}
	if one := spreadOf([]float64{9}); one.Median != 9 || one.P95 != 9 {
		t.Errorf("one value: %+v", one)
	}
}
