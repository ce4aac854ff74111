package runner

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"pitwall/gpu/chat"
	"pitwall/gpu/client"
	"pitwall/runner/ledger"
)

// Judging through a provider's Batch API. A judge with batch = true whose
// server has one (a hosted API, the simulator's openai backend) sends its
// requests as one batch per judge per submission instead of through the
// fleet; pipelined judging, which submits cell by cell, gathers a judge's
// requests into one batch first (batch_gather.go). The rules:
//
//  1. Every request is a ledger row before anything is sent (judgeRequest
//     writes it, as for live requests); its custom id in the batch is its
//     judge cache key, which is also how a later process finds it again.
//     The row is running once its batch exists and names the batch when
//     it ends.
//  2. The batch carries the run and the judge in its metadata. A goroutine
//     per batch creates or polls it and posts what happened to the loop;
//     it ends when the batch ends or the run's judging is cancelled. A
//     stop leaves the batch running at the provider.
//  3. An answer settles its request as a live answer would; an error line
//     fails that sample alone (a judge error, not a run failure).
//  4. A request the batch left unanswered (it failed, expired or was
//     cancelled, or just has no line for it) gets a new attempt: in one
//     more batch, then live through the fleet.
//  5. A run whose earlier rows of a judge ended unanswered (a stop, a
//     crash) looks for that judge's batches of this run at the provider
//     before creating one: requests whose key a batch still running (or
//     ended, unread) holds wait for it instead of being sent again. A
//     batch some of whose answers the run has read is not taken again (a
//     re-judge asks afresh).
//  6. A server without /v1/batches (every local server) keeps the ordinary
//     path: its requests go to the fleet; so does every server in a build
//     with no Batch API registered (RegisterBatchAPI).

// batchPoll paces the polling of a batch: a batch takes minutes to hours.
var batchPoll = client.BatchPoll{Min: 2 * time.Second, Max: time.Minute}

// batchTries is how many batches a request goes through before it is sent
// live.
const batchTries = 2

// BatchTransport is a provider's Batch API as the batch path uses it, for
// one server. The protocol is an edge (edges/batchapi, whose Client has
// these methods); the engine only plans what goes into which batch and
// settles what comes back. Errors are *chat.Error, as the fleet's are.
type BatchTransport interface {
	// Server is the name of the server the batches run on.
	Server() string
	// BatchesOffered says whether the server has a Batch API at all; an
	// error is a failure to ask, not a no.
	BatchesOffered(ctx context.Context) (bool, error)
	// CreateBatch sends lines as one batch ("" window: the provider's
	// default) carrying meta.
	CreateBatch(ctx context.Context, lines []client.BatchLine, window string, meta map[string]string) (client.Batch, error)
	// FindBatches lists the batches created since then whose metadata
	// holds meta, newest first.
	FindBatches(ctx context.Context, meta map[string]string, since time.Time) ([]client.Batch, error)
	// BatchInput is the custom ids a batch holds, in order.
	BatchInput(ctx context.Context, b client.Batch) ([]string, error)
	// WaitBatch polls a batch until it ends or ctx does, calling seen
	// each time its status moves, and returns it as last seen.
	WaitBatch(ctx context.Context, id string, poll client.BatchPoll, seen func(client.Batch)) (client.Batch, error)
	// BatchResults is an ended batch's answers; a request with none was
	// never run, and is sent again.
	BatchResults(ctx context.Context, b client.Batch) ([]client.BatchResult, error)
}

// A BatchAPI gives the Batch API of the server c talks to. It is an edge
// (edges/batchapi) that cli registers: a build without one sends every
// judge's requests live.
type BatchAPI func(c *client.Client) BatchTransport

var (
	batchAPIMu sync.Mutex
	batchAPI   BatchAPI
)

// RegisterBatchAPI makes api the one batch judges send through; cli
// registers edges/batchapi. A second registration replaces the first.
func RegisterBatchAPI(api BatchAPI) {
	batchAPIMu.Lock()
	defer batchAPIMu.Unlock()
	batchAPI = api
}

func registeredBatchAPI() BatchAPI {
	batchAPIMu.Lock()
	defer batchAPIMu.Unlock()
	return batchAPI
}

// batchFleet is what the batch path needs of the fleet (gpu.Fleet has it).
type batchFleet interface {
	BatchClient(server string) (*client.Client, bool)
	// SendAs is the name server knows model by (chat.MatchModel): a batch
	// line goes to the provider as it is, not through the fleet.
	SendAs(server, model string) string
}

// judgeBatch is judge requests riding one provider batch, or on their way
// to one. The loop owns it; its goroutine reads only client, ctx and id.
type judgeBatch struct {
	judge   string
	client  BatchTransport
	ctx     context.Context
	try     int
	waiting map[string][]*readyJudge // by custom id (the cache key)
	id      string                   // the provider's batch, once there is one
}

// batchJudging starts a batch for the requests of each batch judge whose
// server may have a Batch API, and returns the others for the fleet.
func (b *batchingPart) batchJudging(ctx context.Context, jobs []*readyJudge) []*readyJudge {
	bf, ok := b.e.r.fleet.(batchFleet)
	api := registeredBatchAPI()
	if !ok || api == nil {
		return jobs
	}
	var live []*readyJudge
	byJudge := map[string][]*readyJudge{}
	for _, rj := range jobs {
		name := rj.a.judge.judge
		if !b.e.r.judges[name].Batch || rj.pin == "" {
			live = append(live, rj)
			continue
		}
		if _, ok := bf.BatchClient(rj.pin); !ok {
			live = append(live, rj) // a local server: it has no Batch API
			continue
		}
		byJudge[name] = append(byJudge[name], rj)
	}
	for _, name := range slices.Sorted(maps.Keys(byJudge)) {
		c, _ := bf.BatchClient(byJudge[name][0].pin)
		bt := api(c)
		if b.e.life == inferring {
			b.gatherBatch(ctx, bt, name, byJudge[name]) // pipelined: cell by cell
			continue
		}
		b.startBatch(ctx, bt, name, byJudge[name], 1)
	}
	return live
}

func newJudgeBatch(ctx context.Context, bt BatchTransport, name string, try int) *judgeBatch {
	return &judgeBatch{judge: name, client: bt, ctx: ctx, try: try, waiting: map[string][]*readyJudge{}}
}

// startBatch hands requests of one judge to a goroutine that finds or
// creates their batch; what it did arrives as batchPlanned.
func (b *batchingPart) startBatch(ctx context.Context, bt BatchTransport, name string, rjs []*readyJudge, try int) {
	jb := newJudgeBatch(ctx, bt, name, try)
	var lines []client.BatchLine
	for _, rj := range rjs {
		id := rj.a.key
		if jb.waiting[id] == nil {
			req := rj.req
			if bf, ok := b.e.r.fleet.(batchFleet); ok {
				req.Model = bf.SendAs(rj.pin, req.Model)
			}
			lines = append(lines, client.BatchLine{CustomID: id, Request: req})
		}
		jb.waiting[id] = append(jb.waiting[id], rj)
	}
	// Cells judged while inference runs (pipelined) are new to the run:
	// only phase 2 and later judging can meet rows a stop or crash left,
	// and reading the run's rows once per completed cell would grow with
	// the square of the battery.
	var look batchLook
	if b.e.life != inferring {
		look = b.batchesToFind(name)
	}
	meta := map[string]string{"pitwall_run": b.e.r.id, "pitwall_judge": name}
	b.spawn(func() func(*engine) {
		p, err := planBatch(ctx, bt, lines, meta, look, b.e.r.beforeSend)
		return func(e *engine) { e.batches.batchPlanned(jb, p, err) }
	})
}

// spawn runs work on a goroutine of its own, and the function work returns
// on the loop, as the goroutine's last act. The loop cannot close before
// it arrives: the requests that function settles count in jinflight.
func (b *batchingPart) spawn(work func() func(*engine)) {
	q := b.e.r.events
	go func() {
		fn := work()
		q.post(evCall{fn: func(e *engine) error { fn(e); return nil }, reply: make(chan error, 1)})
	}()
}

// batchLook is what a run left at the provider: since when to look for its
// batches (zero: nothing to look for), and the batches whose answers it
// has already read.
type batchLook struct {
	since time.Time
	read  map[string]bool
}

// batchesToFind reads the ledger for rows of the judge's that an earlier
// stop or crash left unanswered (rows in flight in this process aside).
func (b *batchingPart) batchesToFind(name string) batchLook {
	look := batchLook{read: map[string]bool{}}
	rows, err := b.e.r.led.Requests(b.e.r.id)
	if err != nil {
		return look
	}
	mine := b.e.sharing.rows()
	for _, q := range rows {
		if q.Purpose != ledger.PurposeJudge || q.Judge != name || mine[q.ID] {
			continue
		}
		switch q.Status {
		case ledger.StatusCompleted:
			if q.BatchID != "" {
				look.read[q.BatchID] = true
			}
		case ledger.StatusCanceled, ledger.StatusInterrupted, ledger.StatusQueued, ledger.StatusSubmitted, ledger.StatusRunning:
			if look.since.IsZero() || q.QueuedAt.Before(look.since) {
				look.since = q.QueuedAt
			}
		}
	}
	if !look.since.IsZero() {
		// A batch's created_at has whole seconds, from the provider's clock.
		look.since = look.since.Add(-time.Minute)
	}
	return look
}

// batchPlan is where a batch's requests went: batches found again, each
// with the custom ids it holds of theirs, then the one created for the
// rest. offered is false when the server has no Batch API.
type batchPlan struct {
	offered bool
	parts   []batchPart
}

type batchPart struct {
	batch client.Batch
	ids   []string
	found bool
}

// planBatch runs on the batch's goroutine: it asks whether the server has
// a Batch API, takes the batches of this run and judge it finds for the
// requests they hold, and creates one for the rest.
func planBatch(ctx context.Context, c BatchTransport, lines []client.BatchLine, meta map[string]string, look batchLook, gate func(context.Context) error) (batchPlan, error) {
	var p batchPlan
	ok, err := c.BatchesOffered(ctx)
	if err != nil || !ok {
		return p, err
	}
	p.offered = true
	rest := lines
	if !look.since.IsZero() {
		found, err := c.FindBatches(ctx, meta, look.since)
		if err != nil {
			// Creating one blind could pay for the same answers twice.
			return p, err
		}
		for _, b := range found {
			switch b.Status {
			case client.BatchFailed, client.BatchExpired, client.BatchCancelled, client.BatchCancelling:
				continue
			}
			if look.read[b.ID] || len(rest) == 0 {
				continue
			}
			held, err := c.BatchInput(ctx, b)
			if err != nil {
				return p, err
			}
			in := map[string]bool{}
			for _, id := range held {
				in[id] = true
			}
			part := batchPart{batch: b, found: true}
			rest = slices.DeleteFunc(slices.Clone(rest), func(l client.BatchLine) bool {
				if in[l.CustomID] {
					part.ids = append(part.ids, l.CustomID)
					return true
				}
				return false
			})
			if len(part.ids) > 0 {
				p.parts = append(p.parts, part)
			}
		}
	}
	if len(rest) == 0 {
		return p, nil
	}
	// A batch is requests sent: the run's owner must still be this process.
	if err := gate(ctx); err != nil {
		return p, err
	}
	b, err := c.CreateBatch(ctx, rest, "", meta)
	if err != nil {
		return p, err
	}
	part := batchPart{batch: b}
	for _, l := range rest {
		part.ids = append(part.ids, l.CustomID)
	}
	p.parts = append(p.parts, part)
	return p, nil
}

// batchPlanned takes what a batch's goroutine did: each batch its requests
// ride is polled by a goroutine of its own; requests that found no batch
// go live when the server has no Batch API, and are put back otherwise.
func (b *batchingPart) batchPlanned(jb *judgeBatch, p batchPlan, err error) {
	for _, part := range p.parts {
		sub := &judgeBatch{judge: jb.judge, client: jb.client, ctx: jb.ctx, try: jb.try,
			waiting: map[string][]*readyJudge{}, id: part.batch.ID}
		for _, id := range part.ids {
			sub.waiting[id] = jb.waiting[id]
			delete(jb.waiting, id)
		}
		verb := "created"
		if part.found {
			verb = "found again"
		}
		b.e.r.log.Info("judge batch "+verb, "judge", jb.judge, "batch", sub.id, "requests", len(part.ids), "try", jb.try)
		if jb.ctx.Err() != nil {
			b.batchCancelled(sub)
			continue
		}
		for _, rjs := range sub.waiting {
			for _, rj := range rjs {
				b.e.judges.dispatched(rj.a, jb.client.Server())
			}
		}
		b.pollBatch(sub)
	}
	switch {
	case len(jb.waiting) == 0:
	case jb.ctx.Err() != nil:
		b.batchCancelled(jb)
	case !p.offered && err == nil:
		b.e.r.log.Info("judge batch: the server has no Batch API; sending live", "judge", jb.judge, "server", jb.client.Server())
		b.e.judges.sendJudging(jb.ctx, jb.all())
	default:
		b.batchUnanswered(jb, "sending the batch: "+chat.MessageOf(err))
	}
}

// all is every request the batch waits on, in custom id order.
func (jb *judgeBatch) all() []*readyJudge {
	var out []*readyJudge
	for _, id := range slices.Sorted(maps.Keys(jb.waiting)) {
		out = append(out, jb.waiting[id]...)
	}
	return out
}

// pollBatch waits on a batch from a goroutine and posts its end.
func (bp *batchingPart) pollBatch(jb *judgeBatch) {
	log := bp.e.r.log
	bp.spawn(func() func(*engine) {
		b, err := jb.client.WaitBatch(jb.ctx, jb.id, batchPoll, func(b client.Batch) {
			log.Info("judge batch", "batch", b.ID, "status", b.Status, "done", b.Completed, "failed", b.Failed, "of", b.Total)
		})
		var res []client.BatchResult
		if err == nil {
			res, err = jb.client.BatchResults(jb.ctx, b)
		}
		return func(e *engine) { e.batches.batchEnded(jb, b, res, err) }
	})
}

// batchEnded settles what a batch answered and puts back what it did not.
func (bp *batchingPart) batchEnded(jb *judgeBatch, b client.Batch, res []client.BatchResult, err error) {
	if jb.ctx.Err() != nil {
		bp.batchCancelled(jb)
		return
	}
	for _, r := range res {
		rjs := jb.waiting[r.CustomID]
		delete(jb.waiting, r.CustomID)
		for _, rj := range rjs {
			if rj.a.row != nil {
				rj.a.row.BatchID = jb.id
			}
			r.Result.Server = cmp.Or(r.Result.Server, jb.client.Server())
			bp.e.judges.settled(rj.a, r.Result, r.Err)
		}
	}
	if len(jb.waiting) == 0 {
		return
	}
	why := fmt.Sprintf("batch %s %s without answering it", jb.id, b.Status)
	switch {
	case err != nil:
		why = fmt.Sprintf("batch %s: %s", jb.id, chat.MessageOf(err))
	case b.Status == client.BatchExpired:
		why = fmt.Sprintf("batch %s expired before answering it (completion window %s)", jb.id, cmp.Or(b.Window, client.DefaultBatchWindow))
	case len(b.Errors) > 0:
		why = fmt.Sprintf("batch %s failed: %s", jb.id, strings.Join(b.Errors, "; "))
	}
	bp.batchUnanswered(jb, why)
}

// batchUnanswered ends the rows of the requests a batch left unanswered
// and sends each again as a new attempt: in one more batch, then live.
func (b *batchingPart) batchUnanswered(jb *judgeBatch, why string) {
	b.e.r.log.Warn("judge batch left requests unanswered", "judge", jb.judge, "batch", jb.id, "n", len(jb.waiting), "why", why, "try", jb.try)
	failed := &chat.Error{Class: chat.ClassUnavailable, Server: jb.client.Server(), Message: why}
	var again []*readyJudge
	for _, rj := range jb.all() {
		a := rj.a
		if a.row != nil {
			a.row.BatchID = jb.id
			a.row.End(b.e.r.now(), chat.Result{Server: jb.client.Server()}, failed)
			b.e.r.led.QueueFinish(a.row, b.e.ack)
		}
		again = append(again, b.requeue(a)...)
	}
	if len(again) == 0 {
		return
	}
	if jb.try < batchTries {
		b.startBatch(jb.ctx, jb.client, jb.judge, again, jb.try+1)
		return
	}
	b.e.judges.sendJudging(jb.ctx, again)
}

// requeue makes the next attempt of a judge request whose attempt a went
// unanswered, leading whatever waited on a, as retry does; it returns
// the requests to send (none when the ledger answered them).
func (b *batchingPart) requeue(a *judgeAttempt) []*readyJudge {
	if a.ctx.Err() != nil {
		b.e.judges.settled(a, chat.Result{}, &chat.Error{Class: chat.ClassCanceled, Message: "stopped before retry"})
		return nil
	}
	fs := b.e.sharing.release(a)
	next := newJudgeAttempt(a.part, a.judge, a.n+1, a.batched+1, a.ctx)
	if rj := b.e.judges.judgeRequest(next, nil); rj != nil {
		b.e.sharing.adopt(next, fs)
		return b.e.judges.written([]*readyJudge{rj})
	}
	var out []*readyJudge
	for _, f := range fs {
		if rj := b.e.judges.judgeRequest(f, nil); rj != nil {
			out = append(out, rj)
		}
	}
	return b.e.judges.written(out)
}

// batchCancelled settles a batch's requests as cancelled: the run stopped
// while the batch ran. The batch goes on at the provider, and its rows name
// it, for a resumed run to find.
func (b *batchingPart) batchCancelled(jb *judgeBatch) {
	msg := "stopped while waiting for the provider's batch"
	if jb.id != "" {
		msg = fmt.Sprintf("stopped while batch %s ran at the provider (`pitwall resume` collects it)", jb.id)
	}
	for _, rj := range jb.all() {
		if rj.a.row != nil && jb.id != "" {
			rj.a.row.BatchID = jb.id
		}
		b.e.judges.settled(rj.a, chat.Result{}, &chat.Error{Class: chat.ClassCanceled, Server: jb.client.Server(), Message: msg})
	}
	jb.waiting = map[string][]*readyJudge{}
}
