package gpu

import (
	"context"
	"time"

	"pitwall/gpu/telemetry"
)

// State returns each server's state, in configuration order, for the fleet
// panel: health and why it is down, slots, the jobs waiting that could run
// there, resident and loading models, memory, and GPUs (from the
// simulator's probe, else from Options.Telemetry).
func (f *Fleet) State() []telemetry.ServerState {
	f.mu.Lock()
	out := f.stateLocked()
	f.mu.Unlock()
	f.fillTelemetry(out)
	return out
}

// WaitState waits until cond holds for the fleet's state and returns that
// state. It is woken by every change the fleet sees (a job queued, placed
// or ended, a probe, a server going down or coming back), so a caller waits
// on the state itself rather than on time; ctx bounds the wait. GPU
// readings from telemetry do not wake it.
func (f *Fleet) WaitState(ctx context.Context, cond func([]telemetry.ServerState) bool) ([]telemetry.ServerState, error) {
	for {
		f.mu.Lock()
		st := f.stateLocked()
		ch := f.changed
		f.mu.Unlock()
		f.fillTelemetry(st)
		if cond(st) {
			return st, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return st, ctx.Err()
		}
	}
}

func (f *Fleet) stateLocked() []telemetry.ServerState {
	now := f.now()
	out := make([]telemetry.ServerState, len(f.servers))
	for i, s := range f.servers {
		out[i] = s.state(now, f.models)
		for _, q := range f.queue {
			if q.gone || !s.couldRun(q) || s.offered == nil {
				continue
			}
			out[i].Queue++
			if !s.up && f.strandedLocked(q) {
				out[i].Stranded++
			}
		}
	}
	return out
}

// fillTelemetry gives servers that no probe told of their GPUs the
// telemetry of the GPUs they are configured on.
func (f *Fleet) fillTelemetry(st []telemetry.ServerState) {
	if f.opts.Telemetry == nil {
		return
	}
	for i, s := range f.servers {
		if len(st[i].GPUs) == 0 {
			st[i].GPUs = f.serverGPUs(s)
		}
	}
}

// notifyLocked wakes WaitState callers.
func (f *Fleet) notifyLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// healthChanged reports a server going down or coming back: in the log, and
// to the monitor, which probes a down server soon.
func (f *Fleet) healthChanged(name string, h healthChange) {
	switch {
	case !h.changed:
		return
	case h.up:
		f.log.Info("fleet: server is back", "server", name)
	default:
		f.log.Warn("fleet: server marked down", "server", name, "reason", h.reason)
	}
	f.wakeMonitor()
}

// meanAcc is a running mean.
type meanAcc struct {
	sum time.Duration
	n   int
}

// noteJobTimeLocked folds one job's time holding its slot (request sent to
// last token: load excluded) into its model's placement.ModelView.JobTime, the mean
// so far, as the discrete-event simulation measures it.
func (f *Fleet) noteJobTimeLocked(model string, d time.Duration) {
	if d <= 0 {
		return
	}
	a := f.jobTimes[model]
	a.sum += d
	a.n++
	f.jobTimes[model] = a
	mv := f.models[model]
	mv.JobTime = a.sum / time.Duration(a.n)
	f.models[model] = mv
}
