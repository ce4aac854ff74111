package ui

import (
	"charm.land/bubbles/v2/key"
)

// refreshKeys enables the keys that can act now, in every component's key
// map; footers leave the others out and the full help greys them.
func (m *model) refreshKeys() {
	k := m.c.keys
	have := m.run != nil
	ctrl := m.ctrl != nil
	judges := have && len(m.run.Plan.Choices()) > 0 && ctrl
	// With no judge in view (checks only) there is nothing to re-judge with.
	judging := judges && m.judge != ""
	cellT, cellM, onCell := m.grid.cursorCell()
	if m.screen == screenDetail {
		cellT, cellM, onCell = m.detail.t, m.detail.m, have
	}
	rejudge := judging && onCell && len(completedRefs(m.run, cellT, cellM)) > 0
	compare := have && (m.screen == screenGrid || m.rankingOpen() ||
		m.screen == screenHelp && m.back == screenGrid)
	// The moves scroll the key map too, run or not.
	moves := have || m.screen == screenHelp

	g := &k.Grid
	enable(have, &g.Left, &g.Right, &g.Figures, &g.Transpose, &g.Filter, &g.StatusFilter)
	enable(moves, &g.Up, &g.Down, &g.Top, &g.Bottom, &g.PageUp, &g.PageDown)
	g.Compare.SetEnabled(compare)
	g.Detail.SetEnabled(onCell)
	g.SideBySide.SetEnabled(onCell && m.screen != screenDetail)
	g.Versus.SetEnabled(onCell && m.screen != screenDetail && m.c.opts.hasLedger())
	g.Stop.SetEnabled(ctrl && (m.running() && !m.stopping || m.rejudging()))
	g.ClearFilter.SetEnabled(have && m.screen == screenGrid && m.grid.query != "")
	g.Rejudge.SetEnabled(rejudge)
	g.RejudgeAll.SetEnabled(judging && m.board.counts.Completed > 0)
	// The picker always has another choice: a judge, or none.
	g.Judge.SetEnabled(judges)
	g.Export.SetEnabled(have && ctrl && !m.exporting)

	d := &k.Detail
	enable(moves, &d.Up, &d.Down, &d.PageDown, &d.Top, &d.Bottom)
	d.Rejudge.SetEnabled(rejudge)
	d.Judge.SetEnabled(judges)

	k.Compare.scrollKeyMap.enable(moves)
	k.Compare.Compare.SetEnabled(compare)
	k.Help.scrollKeyMap.enable(moves)
	k.Side.scrollKeyMap.enable(moves)
	k.Versus.scrollKeyMap.enable(moves)
	k.Versus.Choose.SetEnabled(m.screen == screenVersus && m.versus.choosing() && len(m.versus.runs) > 0)
	k.Picker.Judge.SetEnabled(judges)
}

// enable enables bs, or disables them.
func enable(on bool, bs ...*key.Binding) {
	for _, b := range bs {
		b.SetEnabled(on)
	}
}

// enable enables every move of k, or disables them.
func (k *scrollKeyMap) enable(on bool) {
	enable(on, &k.Up, &k.Down, &k.PageUp, &k.PageDown, &k.Top, &k.Bottom)
}
