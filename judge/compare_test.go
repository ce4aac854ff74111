package judge

import (
	"pitwall/judge/scoring"
	"testing"
)

func TestCompare(t *testing.T) {
	P, F, W, E := scoring.Pass, scoring.Fail, scoring.Warn, scoring.Error
	tests := []struct {
		name      string
		a, b      []scoring.Verdict
		n         int
		agreement float64
		kappa     float64
	}{
		{"perfect agreement", []scoring.Verdict{P, F, P, F}, []scoring.Verdict{P, F, P, F}, 4, 1, 1},
		{"perfect disagreement", []scoring.Verdict{P, F, P, F}, []scoring.Verdict{F, P, F, P}, 4, 0, -1},
		// po = 0.6; pa(P) = pb(P) = 0.6, so pe = 0.36+0.16 = 0.52 and κ = 0.08/0.48.
		{"textbook", []scoring.Verdict{P, P, P, F, F}, []scoring.Verdict{P, P, F, P, F}, 5, 0.6, (0.6 - 0.52) / 0.48},
		{"both constant and equal", []scoring.Verdict{P, P, P}, []scoring.Verdict{P, P, P}, 3, 1, 1},
		{"both constant and different", []scoring.Verdict{P, P}, []scoring.Verdict{F, F}, 2, 0, 0},
		{"one constant", []scoring.Verdict{P, P, P, P}, []scoring.Verdict{P, F, P, F}, 4, 0.5, 0},
		{"warn is a category", []scoring.Verdict{W, P}, []scoring.Verdict{W, P}, 2, 1, 1},
		{"errors and unjudged left out", []scoring.Verdict{P, E, F, "", P}, []scoring.Verdict{P, P, F, F, E}, 2, 1, 1},
		{"lengths differ", []scoring.Verdict{P, F, P}, []scoring.Verdict{P, F}, 2, 1, 1},
		{"nothing to compare", []scoring.Verdict{E}, []scoring.Verdict{P}, 0, 0, 0},
		{"empty", nil, nil, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := CompareVerdicts(tt.a, tt.b)
			if c.N != tt.n || !near(c.Agreement, tt.agreement) || !near(c.Kappa, tt.kappa) {
				t.Errorf("got n %d agreement %v κ %v; want %d %v %v", c.N, c.Agreement, c.Kappa, tt.n, tt.agreement, tt.kappa)
			}
			agreement, kappa := Compare(tt.a, tt.b)
			if agreement != c.Agreement || kappa != c.Kappa {
				t.Errorf("Compare = %v, %v; CompareVerdicts = %v, %v", agreement, kappa, c.Agreement, c.Kappa)
			}
			if ra, rk := Compare(tt.b, tt.a); !near(ra, agreement) || !near(rk, kappa) {
				t.Errorf("not symmetric: %v %v vs %v %v", agreement, kappa, ra, rk)
			}
		})
	}
}
