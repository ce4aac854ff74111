package runner

import (
	"sync"

	"pitwall/gpu/chat"
)

// queue is the loop's inbox: unbounded, so that a sender never blocks (the
// fleet may call Done inside SubmitAll, on the loop's own goroutine), and
// drained whole each time the loop wakes.
type queue struct {
	mu     sync.Mutex
	items  []any
	ready  chan struct{} // holds one signal while items is not empty
	closed bool
}

func newQueue() *queue { return &queue{ready: make(chan struct{}, 1)} }

// post adds an event; false once the loop has stopped taking them.
func (q *queue) post(ev any) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.items = append(q.items, ev)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
	return true
}

// take returns every event posted so far, in order.
func (q *queue) take() []any {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = nil
	return items
}

// close refuses further events and returns those not yet taken.
func (q *queue) close() []any {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	items := q.items
	q.items = nil
	return items
}

// The events the loop takes. Fleet callbacks carry the attempt they report
// on, so a late report of an attempt already given up on is recognised.
type (
	evDispatched struct {
		a       request
		server  string
		loading bool
	}
	evDone struct {
		a   request
		res chat.Result
		err error
	}
	evRetry struct{ a request } // a retry's wait is over
	evStop  struct{}
	evClose struct{}
	// evCall runs fn on the loop and sends its error to reply.
	evCall struct {
		fn    func(e *engine) error
		reply chan error
	}
)
