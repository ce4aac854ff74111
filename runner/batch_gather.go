package runner

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"time"
)

// Pipelined judging submits each completed cell on its own. A batch per
// cell would be a file upload and a batch per cell, which providers cap,
// and would give up what a batch is for. So while inference runs, a batch
// judge's requests gather, and go as one batch when the first of these
// comes:
//
//  1. batchGatherMax requests have gathered;
//  2. batchGatherWindow has passed since the first of them (a timer posts
//     the flush to the loop, so a lull in inference does not hold them);
//  3. inference ends, or the run stops (advance calls flushBatches).
//
// Gathered requests are ledger rows already (queued) and count in
// jinflight, so the run cannot end with any still gathering. Phase 2 and
// later judging hand over a whole phase at once and do not gather, and a
// batch's second try is already a batch's worth: both go straight to
// startBatch.
var (
	batchGatherMax    = 1000
	batchGatherWindow = time.Minute
)

// gatherKey is one judge on one server: the requests one batch can hold.
type gatherKey struct{ judge, server string }

// batchGather is the requests of one judge waiting for their batch.
type batchGather struct {
	client BatchTransport
	ctx    context.Context
	rjs    []*readyJudge
	opened time.Time
	timer  *time.Timer // the window's end; nil with no window
}

// gatherBatch adds a judge's requests to its gathering, and sends the
// gathering as one batch once it is full or its window has passed.
func (b *batchingPart) gatherBatch(ctx context.Context, client BatchTransport, name string, rjs []*readyJudge) {
	if b.gathers == nil {
		b.gathers = map[gatherKey]*batchGather{}
	}
	k := gatherKey{judge: name, server: client.Server()}
	g := b.gathers[k]
	if g == nil {
		g = &batchGather{client: client, ctx: ctx, opened: b.e.r.now()}
		b.gathers[k] = g
		if batchGatherWindow > 0 {
			q := b.e.r.events
			g.timer = time.AfterFunc(batchGatherWindow, func() {
				q.post(evCall{fn: func(e *engine) error {
					if e.batches.gathers[k] == g { // not flushed meanwhile
						e.batches.flushGather(k)
					}
					return nil
				}, reply: make(chan error, 1)})
			})
		}
	}
	g.rjs = append(g.rjs, rjs...)
	if len(g.rjs) >= batchGatherMax || b.e.r.now().Sub(g.opened) >= batchGatherWindow {
		b.flushGather(k)
	}
}

// flushBatches sends every gathering judge's requests: inference is over,
// or the run is stopping (their context is done, and they settle as
// cancelled without a batch).
func (bp *batchingPart) flushBatches() {
	if len(bp.gathers) == 0 {
		return
	}
	for _, k := range slices.SortedFunc(maps.Keys(bp.gathers), func(a, b gatherKey) int {
		return cmp.Or(cmp.Compare(a.judge, b.judge), cmp.Compare(a.server, b.server))
	}) {
		bp.flushGather(k)
	}
}

// flushGather sends one gathering as one batch.
func (b *batchingPart) flushGather(k gatherKey) {
	g := b.gathers[k]
	if g == nil {
		return
	}
	delete(b.gathers, k)
	if g.timer != nil {
		g.timer.Stop()
	}
	if g.ctx.Err() != nil {
		jb := newJudgeBatch(g.ctx, g.client, k.judge, 1)
		for _, rj := range g.rjs {
			jb.waiting[rj.a.key] = append(jb.waiting[rj.a.key], rj)
		}
		b.batchCancelled(jb)
		return
	}
	b.startBatch(g.ctx, g.client, k.judge, g.rjs, 1)
}
