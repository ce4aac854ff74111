package runner

import (
	"context"
	"pitwall/gpu/chat"
	"pitwall/runner/ledger"
	"time"
)

// attempt is what every request of a cell keeps, whichever part sent it:
// which try it is, what it was submitted under, its ledger row and its
// backoff. The loop owns it.
type attempt struct {
	cell    cellPos
	n       int             // 1 for the first try
	ctx     context.Context // what the request was submitted under
	row     *ledger.Request // its ledger row, once written
	started bool            // the ledger knows it was dispatched
	timer   *time.Timer     // while it waits out a backoff
}

// request is an attempt of one kind, as the loop sees it: fleet callbacks
// name it in their events, and the loop hands each event to it, so that
// handling an event never asks which kind it is.
type request interface {
	base() *attempt
	dispatched(server string, loading bool)
	done(res chat.Result, err error)
	// retry sends the next attempt once this one's backoff is over.
	retry()
	// settled ends the attempt with res or err, as if the fleet had
	// answered so.
	settled(res chat.Result, err error)
}

// inferAttempt is one try of a cell's inference request (one step of an
// agent test's loop).
type inferAttempt struct {
	attempt
	loop *agentLoop // an agent test's tool loop (agent.go)
	part *inferencePart
}

// newInferAttempt is try n of cell p's inference, a step of loop when
// the test is an agent's.
func newInferAttempt(in *inferencePart, p cellPos, n int, loop *agentLoop) *inferAttempt {
	return &inferAttempt{attempt: attempt{cell: p, n: n}, loop: loop, part: in}
}

func (a *inferAttempt) base() *attempt                         { return &a.attempt }
func (a *inferAttempt) dispatched(server string, loading bool) { a.part.dispatched(a, server, loading) }
func (a *inferAttempt) done(res chat.Result, err error)        { a.part.done(a, res, err) }
func (a *inferAttempt) retry()                                 { a.part.retry(a) }
func (a *inferAttempt) settled(res chat.Result, err error)     { a.part.settled(a, res, err) }

// judgeAttempt is one try of a judge sample's request.
type judgeAttempt struct {
	attempt
	judge *judgeJob
	key   string // its cache key
	// candidate is the reply judged, as the server gave it: a line of the
	// judge's answer that is verbatim one of its lines is not the judge's.
	candidate string
	batched   int // of the n-1 tries before, those a judge batch left unanswered
	part      *judgingPart
}

// newJudgeAttempt is try n of judge job j's request, of which batched
// tries before went unanswered by a batch, sent under ctx.
func newJudgeAttempt(jp *judgingPart, j *judgeJob, n, batched int, ctx context.Context) *judgeAttempt {
	return &judgeAttempt{attempt: attempt{cell: j.cell, n: n, ctx: ctx}, judge: j, batched: batched, part: jp}
}

func (a *judgeAttempt) base() *attempt                   { return &a.attempt }
func (a *judgeAttempt) dispatched(server string, _ bool) { a.part.dispatched(a, server) }
func (a *judgeAttempt) done(res chat.Result, err error)  { a.part.done(a, res, err) }
func (a *judgeAttempt) retry()                           { a.part.retry(a) }
func (a *judgeAttempt) settled(res chat.Result, err error) {
	a.part.settled(a, res, err)
}
