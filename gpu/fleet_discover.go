package gpu

import (
	"context"
	"sync"

	"pitwall/gpu/chat"
	"pitwall/gpu/probe"
)

// Discover asks every server for its models (GET /v1/models). A server
// configured without a model list learns it; one configured with a list
// keeps it, and the call only shows whether the server is there (any HTTP
// answer will do: some hosted APIs do not list models). It returns an entry
// per server: nil when it answered, else why not; a server that failed is
// marked down, and one that answered is up again. Queued jobs for a model
// that no server offers once the lists are known fail with a chat.ClassHTTP4xx
// error. A server that answered is probed too (Probe, within the probe
// timeout), so that the first placements see its resident models, VRAM and
// GPUs. It waits for every server's answer; ctx bounds the wait.
func (f *Fleet) Discover(ctx context.Context) map[string]error {
	out := make([]error, len(f.servers))
	lists := make([][]string, len(f.servers))
	probes := make([]*probe.Result, len(f.servers))
	vers := make([]uint64, len(f.servers))
	f.mu.Lock()
	for i, s := range f.servers {
		vers[i] = s.res.ver
	}
	f.mu.Unlock()
	var wg sync.WaitGroup
	for i, s := range f.servers {
		wg.Go(func() {
			lists[i], out[i] = s.client.Models(ctx)
			if out[i] == nil || chat.Answered(out[i]) {
				pctx, cancel := context.WithTimeout(ctx, f.probes.timeout)
				r := probe.Probe(pctx, f.hc, s.cfg.ProbeTarget())
				cancel()
				if r.Reachable {
					probes[i] = &r
				}
			}
		})
	}
	wg.Wait()

	errs := make(map[string]error, len(f.servers))
	changes := make([]healthChange, len(f.servers))
	f.mu.Lock()
	for i, s := range f.servers {
		err := out[i]
		switch {
		case err == nil:
			if s.cfg.Models == nil {
				s.setOffered(lists[i])
			}
			changes[i] = s.observeHealth(nil)
			f.adoptProbeLocked(s, probes[i], vers[i])
		case chat.ClassOf(err) == chat.ClassCanceled:
			errs[s.cfg.Name] = err // our own stop says nothing of the server
			continue
		case s.cfg.Models != nil && chat.Answered(err):
			changes[i] = s.observeHealth(nil)
			f.adoptProbeLocked(s, probes[i], vers[i])
			err = nil
		default:
			changes[i] = healthChange{changed: s.setDown(err.Error()), reason: err.Error()}
		}
		errs[s.cfg.Name] = err
	}
	failed := f.dropUnservableLocked()
	f.notifyLocked()
	f.mu.Unlock()

	for i, h := range changes {
		f.healthChanged(f.servers[i].cfg.Name, h)
	}
	for _, d := range failed {
		f.finish(d.q, chat.Result{}, d.err)
	}
	f.signal()
	return errs
}

// adoptProbeLocked takes in what Discover's probe of s saw, if it answered.
func (f *Fleet) adoptProbeLocked(s *fleetServer, r *probe.Result, ver uint64) {
	if r != nil && s.up {
		f.adoptLocked(s, *r, ver, false)
	}
}

type droppedJob struct {
	q   *fleetJob
	err *chat.Error
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
			out = append(out, droppedJob{q: q, err: &chat.Error{Class: chat.ClassHTTP4xx, Server: q.job.Pin, Model: model, Message: why}})
		}
	}
	return out
}
