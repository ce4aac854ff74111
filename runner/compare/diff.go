package compare

import (
	"cmp"
	"slices"
)

// Diff is what changed from a base run to another run, over the cells both
// decided.
type Diff struct {
	Base        string `json:"base"`  // run id
	Other       string `json:"other"` // run id
	SameBattery bool   `json:"same_battery"`
	Shared      int    `json:"shared"` // cells (model, test, repeat) both runs decided

	Fixed   []Change `json:"fixed"`   // not passed, then passed
	Broke   []Change `json:"broke"`   // passed, then not
	Flipped []Change `json:"flipped"` // another change of outcome: fail → warn, error → fail…

	// Models tests each model of both runs, base (A) against other (B),
	// on the cells both decided.
	Models []Paired `json:"models"`
	// Cross tests, when the runs have no model in common, each model of the
	// base against each model of the other on the (test, repeat) both
	// decided: two runs of one battery with one model each.
	Cross []Paired `json:"cross,omitempty"`
}

// Change is one cell whose outcome differs between two runs.
type Change struct {
	Model     string  `json:"model"`
	Test      string  `json:"test"`
	Repeat    int     `json:"repeat"`
	From      Outcome `json:"from"`
	To        Outcome `json:"to"`
	FromScore float64 `json:"from_score"`
	ToScore   float64 `json:"to_score"`
}

func diffRuns(base, other *Run, o Options) Diff {
	d := Diff{Base: base.ID, Other: other.ID, SameBattery: sameSet(base.Tests, other.Tests)}
	at := make(map[cellKey]*Cell, len(other.Cells))
	for i := range other.Cells {
		c := &other.Cells[i]
		at[cellKey{c.Model, c.Test, c.Repeat}] = c
	}
	for i := range base.Cells {
		a := &base.Cells[i]
		b := at[cellKey{a.Model, a.Test, a.Repeat}]
		if b == nil || !a.Outcome.Decided() || !b.Outcome.Decided() {
			continue
		}
		d.Shared++
		if a.Outcome == b.Outcome {
			continue
		}
		ch := Change{Model: a.Model, Test: a.Test, Repeat: a.Repeat, From: a.Outcome, To: b.Outcome,
			FromScore: a.Score, ToScore: b.Score}
		switch {
		case b.Outcome == Pass:
			d.Fixed = append(d.Fixed, ch)
		case a.Outcome == Pass:
			d.Broke = append(d.Broke, ch)
		default:
			d.Flipped = append(d.Flipped, ch)
		}
	}
	byModel := func(r *Run) (map[string][]*Cell, []string) {
		m := map[string][]*Cell{}
		var order []string
		for i := range r.Cells {
			c := &r.Cells[i]
			if _, ok := m[c.Model]; !ok {
				order = append(order, c.Model)
			}
			m[c.Model] = append(m[c.Model], c)
		}
		return m, order
	}
	ba, aorder := byModel(base)
	bb, border := byModel(other)
	for _, m := range aorder {
		if cells, ok := bb[m]; ok {
			p := paired(base.ID, other.ID, m, outcomesOf(ba[m]), outcomesOf(cells), o.Level)
			d.Models = append(d.Models, p)
		}
	}
	if len(d.Models) == 0 {
		for _, ma := range aorder {
			for _, mb := range border {
				d.Cross = append(d.Cross, paired(ma, mb, "", outcomesOf(ba[ma]), outcomesOf(bb[mb]), o.Level))
			}
		}
	}
	order := func(x, y Change) int {
		return cmp.Or(cmp.Compare(x.Model, y.Model), cmp.Compare(x.Test, y.Test), cmp.Compare(x.Repeat, y.Repeat))
	}
	slices.SortFunc(d.Fixed, order)
	slices.SortFunc(d.Broke, order)
	slices.SortFunc(d.Flipped, order)
	return d
}

func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}
