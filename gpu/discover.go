package gpu

import (
	"context"
	"sync"
)

// Discover asks servers for their models (GET /v1/models): those configured
// without a model list, to learn it, and those marked down, to see whether
// they are back. It returns the errors of the servers that failed, by
// name; each of those is marked down. Queued jobs for a model that no
// server offers once the lists are known fail with a ClassHTTP4xx error.
func (f *Fleet) Discover(ctx context.Context) map[string]error {
	type outcome struct {
		s      *fleetServer
		models []string
		err    error
	}
	f.mu.Lock()
	var ask []*fleetServer
	for _, s := range f.servers {
		if s.cfg.Models == nil || !s.up {
			ask = append(ask, s)
		}
	}
	f.mu.Unlock()

	out := make([]outcome, len(ask))
	var wg sync.WaitGroup
	for i, s := range ask {
		wg.Go(func() {
			models, err := s.client.Models(ctx)
			out[i] = outcome{s: s, models: models, err: err}
		})
	}
	wg.Wait()

	errs := map[string]error{}
	var changes []healthChange
	var names []string
	f.mu.Lock()
	for _, o := range out {
		var h healthChange
		if o.err != nil {
			errs[o.s.cfg.Name] = o.err
			h = healthChange{changed: o.s.setDown(o.err.Error()), reason: o.err.Error()}
		} else {
			if o.s.cfg.Models == nil {
				o.s.setOffered(o.models)
			}
			h = o.s.observeHealth(nil)
		}
		changes, names = append(changes, h), append(names, o.s.cfg.Name)
	}
	failed := f.dropUnservableLocked()
	f.mu.Unlock()

	for i, h := range changes {
		f.logHealth(names[i], h)
	}
	for _, d := range failed {
		f.finish(d.q, Result{}, d.err)
	}
	f.signal()
	return errs
}

type droppedJob struct {
	q   *fleetJob
	err *Error
}

// dropUnservableLocked takes out of the queue the jobs that can never run
// now that more servers' models are known.
func (f *Fleet) dropUnservableLocked() []droppedJob {
	var out []droppedJob
	for _, q := range f.queue {
		if q.gone {
			continue
		}
		model := q.job.Request.Model
		if why := f.unservableLocked(model, q.job.Pin); why != "" {
			f.leaveQueueLocked(q, true)
			out = append(out, droppedJob{q: q, err: &Error{Class: ClassHTTP4xx, Server: q.job.Pin, Model: model, Message: why}})
		}
	}
	return out
}
