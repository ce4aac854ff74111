package gpu

import (
	"time"

	"pitwall/gpu/chat"
)

// A hosted API's rate limits are kept, not hit: a server's budget says
// when the next request may start, from the limits the config gives (rpm,
// tpm) and from what the API's headers said with its last reply (requests
// or tokens left, and when they come back). A server over its budget takes
// nothing new until then, as one that answered 429 with Retry-After; the
// dispatcher holds every request of the run to it, inference and judging
// alike (placement gives inference the slot first).

// budgetWindow is the window rpm and tpm count over.
const budgetWindow = time.Minute

// budget is one server's rate-limit budget. The fleet's lock guards it.
type budget struct {
	rpm, tpm int // configured; 0: none
	starts   []time.Time
	tokens   []tokenUse
	// From the API's headers with the last reply: nothing is started while
	// a budget it names is spent, until its reset.
	reqsLeft, toksLeft int // -1: not said
	reqsBack, toksBack time.Time
	// inflight counts the requests started and not ended: a reply's count
	// may not hold those the API had not seen when it answered.
	inflight int
}

type tokenUse struct {
	at time.Time
	n  int
}

func newBudget(rpm, tpm int) budget {
	return budget{rpm: rpm, tpm: tpm, reqsLeft: -1, toksLeft: -1}
}

// wait is how long from now before a request may start on the server: 0
// when one may start now.
func (b *budget) wait(now time.Time) time.Duration {
	b.forget(now)
	var until time.Time
	later := func(t time.Time) {
		if t.After(until) {
			until = t
		}
	}
	if b.rpm > 0 && len(b.starts) >= b.rpm {
		later(b.starts[len(b.starts)-b.rpm].Add(budgetWindow))
	}
	if b.tpm > 0 {
		used, i := 0, 0
		for _, u := range b.tokens {
			used += u.n
		}
		for used >= b.tpm && i < len(b.tokens) {
			used -= b.tokens[i].n
			later(b.tokens[i].at.Add(budgetWindow))
			i++
		}
	}
	if b.reqsLeft == 0 && b.reqsBack.After(now) {
		later(b.reqsBack)
	}
	if b.toksLeft == 0 && b.toksBack.After(now) {
		later(b.toksBack)
	}
	if !until.After(now) {
		return 0
	}
	return until.Sub(now)
}

// forget drops what left the window.
func (b *budget) forget(now time.Time) {
	cut := now.Add(-budgetWindow)
	i := 0
	for i < len(b.starts) && !b.starts[i].After(cut) {
		i++
	}
	b.starts = b.starts[i:]
	i = 0
	for i < len(b.tokens) && !b.tokens[i].at.After(cut) {
		i++
	}
	b.tokens = b.tokens[i:]
}

// started counts a request that starts now; one the headers counted down
// to none left holds what follows until they come back.
func (b *budget) started(now time.Time) {
	if b.rpm > 0 {
		b.starts = append(b.starts, now)
	}
	if b.reqsLeft > 0 {
		b.reqsLeft--
	}
	b.inflight++
}

// ended counts what a request spent, and takes what the API said is left
// with its reply, less the other requests in flight (the API may not have
// counted them when it answered); within the window the fleet last heard
// of, its own count stands where it is lower. So the budget errs short:
// no request starts past what the API allows.
func (b *budget) ended(now time.Time, tokens int, rl *chat.RateLimit) {
	b.inflight = max(b.inflight-1, 0)
	if b.tpm > 0 && tokens > 0 {
		b.tokens = append(b.tokens, tokenUse{now, tokens})
	}
	if rl == nil {
		return
	}
	b.reqsLeft = lower(b.reqsLeft, rl.Requests, b.inflight, b.reqsBack, now)
	b.toksLeft = lower(b.toksLeft, rl.Tokens, 0, b.toksBack, now)
	if rl.RequestsReset > 0 {
		b.reqsBack = now.Add(rl.RequestsReset)
	}
	if rl.TokensReset > 0 {
		b.toksBack = now.Add(rl.TokensReset)
	}
}

// lower is what is left of one budget: what the API said (-1: nothing),
// less unseen, and no more than the fleet's own count (mine, -1 when it
// has none) while the window it counts in (until back) lasts.
func lower(mine, said, unseen int, back, now time.Time) int {
	if said < 0 {
		return mine
	}
	said = max(said-unseen, 0)
	if mine < 0 || !now.Before(back) {
		return said
	}
	return min(mine, said)
}
