package gpu

import (
	"context"
	"net/http"
	"time"

	"pitwall/gpu/chat"
	"pitwall/gpu/probe"
	"pitwall/gpu/telemetry"
)

// Probing: the fleet's monitor reads each server's state (Probe) about once
// a second while it is up, and with backoff while it is down, until it
// answers again. It also wakes the dispatcher when a server's Retry-After
// ends. Probes run beside dispatch and never hold the fleet's lock while
// they wait on the network.

const (
	// DefaultProbeInterval is how often an up server is probed.
	DefaultProbeInterval = time.Second
	// DefaultProbeTimeout bounds one probe.
	DefaultProbeTimeout = 2 * time.Second
	// DefaultProbeBackoffMin and DefaultProbeBackoffMax bound the wait
	// between probes of a down server, which doubles after each failure.
	DefaultProbeBackoffMin = 250 * time.Millisecond
	DefaultProbeBackoffMax = 10 * time.Second
)

// probeDownAfter is how many probes in a row must find an up server
// unreachable to mark it down. One request failing and a ping after it
// finding nothing is enough (confirmDown).
const probeDownAfter = 2

// probeSched is one server's probing: when next, and how it went.
type probeSched struct {
	next     time.Time // wall time of the next probe; zero: as soon as may be
	backoff  time.Duration
	inflight bool
	fails    int // unreachable probes in a row while up
	// epoch changes when the server goes down, so that a probe that started
	// before cannot bring it back with what it saw then.
	epoch uint64
}

// down restarts the schedule for a server just marked down: probe it soon.
func (p *probeSched) down() {
	p.epoch++
	p.backoff, p.fails, p.next = 0, 0, time.Time{}
}

func (p *probeSched) rejoined() { p.backoff, p.fails = 0, 0 }

// probeDone is one probe's result, for the monitor.
type probeDone struct {
	s     *fleetServer
	r     probe.Result
	ver   uint64
	epoch uint64
}

// probeTimes are the fleet's probing settings with defaults filled.
type probeTimes struct {
	interval, timeout, backoffMin, backoffMax time.Duration
}

func newProbeTimes(o Options) probeTimes {
	t := probeTimes{interval: o.ProbeInterval, timeout: o.ProbeTimeout,
		backoffMin: o.ProbeBackoffMin, backoffMax: o.ProbeBackoffMax}
	if t.interval == 0 {
		t.interval = DefaultProbeInterval
	}
	if t.timeout <= 0 {
		t.timeout = DefaultProbeTimeout
	}
	if t.backoffMin <= 0 {
		t.backoffMin = DefaultProbeBackoffMin
	}
	if t.backoffMax <= 0 {
		t.backoffMax = DefaultProbeBackoffMax
	}
	t.backoffMax = max(t.backoffMax, t.backoffMin)
	return t
}

// monitor is the fleet's probing goroutine; it ends when the fleet closes.
// Each probe runs in a goroutine of its own, so that a server that hangs
// delays no other server's probe; at most one per server is in flight, and
// each ends with its timeout or the fleet.
func (f *Fleet) monitor() {
	defer f.wg.Done()
	results := make(chan probeDone, len(f.servers)) // one in flight per server: sends never block
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		wait := min(f.startProbes(results), f.giveUpStranded())
		timer.Reset(wait)
		select {
		case <-f.ctx.Done():
			return
		case d := <-results:
			f.applyProbe(d)
		case <-timer.C:
			f.signal() // a Retry-After may have ended
		case <-f.monitorWake:
		}
	}
}

// startProbes starts the probes that are due and returns how long the
// monitor may sleep: until the next probe, the end of a Retry-After or of
// an agent loop's hold.
func (f *Fleet) startProbes(results chan<- probeDone) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	now, clock := time.Now(), f.now()
	wait := time.Hour
	for _, s := range f.servers {
		if end := s.holdEnd(clock); clock.Before(end) {
			wait = min(wait, end.Sub(clock))
		}
		end, ok, dropped := s.nextHoldEnd(clock)
		if ok {
			wait = min(wait, end.Sub(clock))
		}
		if dropped {
			f.signal() // a dispatch that still saw the hold may have passed
		}
		if f.probes.interval < 0 || s.probe.inflight {
			continue
		}
		if d := s.probe.next.Sub(now); d > 0 {
			wait = min(wait, d)
			continue
		}
		s.probe.inflight = true
		d := probeDone{s: s, ver: s.res.ver, epoch: s.probe.epoch}
		cfg := s.cfg
		cfg.Kind = s.kind // detected once, not on every probe
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			ctx, cancel := context.WithTimeout(f.ctx, f.probes.timeout)
			d.r = probe.Probe(ctx, f.hc, cfg.ProbeTarget())
			cancel()
			results <- d
		}()
	}
	return max(wait, time.Millisecond)
}

// applyProbe takes in what one probe found and schedules the next.
func (f *Fleet) applyProbe(d probeDone) {
	if f.ctx.Err() != nil {
		return // the fleet closed under the probe: it says nothing
	}
	s, r := d.s, d.r
	var h healthChange
	var dropped []droppedJob
	f.mu.Lock()
	s.probe.inflight = false
	switch {
	case d.epoch != s.probe.epoch:
		// The server went down while this probe ran: it says nothing of now.
	case !r.Reachable:
		if s.up {
			if s.probe.fails++; s.probe.fails >= probeDownAfter {
				h = healthChange{changed: s.setDown(r.Error), reason: r.Error}
			}
		} else {
			s.downReason = r.Error
		}
	case !s.up:
		if !rejoinable(s.cfg, r) {
			s.downReason = r.Error
			break
		}
		s.markUp()
		h = healthChange{changed: true, up: true}
		if s.offered == nil && s.cfg.Models == nil && len(r.Models) > 0 {
			// A server that was down from the start is discovered now.
			s.setOffered(r.Models)
			dropped = f.dropUnservableLocked()
		}
		f.adoptLocked(s, r, d.ver, true)
	default:
		s.probe.fails = 0
		f.adoptLocked(s, r, d.ver, false)
	}
	f.scheduleLocked(s)
	f.notifyLocked()
	f.mu.Unlock()

	f.healthChanged(s.cfg.Name, h)
	for _, x := range dropped {
		f.finish(x.q, chat.Result{}, x.err)
	}
	f.signal() // residency, VRAM or health may have changed
}

// scheduleLocked sets when s is probed next: at the interval while it is
// up, with doubling backoff while it is down.
func (f *Fleet) scheduleLocked(s *fleetServer) {
	now := time.Now()
	if s.up {
		s.probe.next = now.Add(f.probes.interval)
		return
	}
	s.probe.backoff = min(max(2*s.probe.backoff, f.probes.backoffMin), f.probes.backoffMax)
	s.probe.next = now.Add(s.probe.backoff)
}

// adoptLocked takes in a probe's reading of an answering server: its kind
// when it was left to detect, GPUs, VRAM (else from telemetry), and
// residency (see adoptResidency).
func (f *Fleet) adoptLocked(s *fleetServer, r probe.Result, ver uint64, force bool) {
	fresh := false
	if s.cfg.Kind == "" && r.Kind != "" {
		s.kind = r.Kind
		s.client.Detected(r.Kind)
		if s.jit != s.kind.JIT() && s.busy == 0 && len(s.loads) == 0 {
			// Only while idle: a job under way was placed as the other kind.
			// The fleet followed no load of a server it took for static, so
			// this very reading is the first picture of what it holds: take
			// it whatever the version (a reset alone would make the reading
			// stale, and the first decisions would see nothing resident).
			s.jit = s.kind.JIT()
			s.res.reset(nil)
			fresh = true
		}
	}
	s.seen.gpus = r.GPUs
	s.seen.vramTotalGB, s.seen.vramUsedGB = r.VRAMTotalGB, r.VRAMUsedGB
	if r.VRAMTotalGB <= 0 {
		s.seen.vramTotalGB, s.seen.vramUsedGB = telemetryVRAM(f.serverGPUs(s))
	}
	if force {
		for i := range s.slots {
			s.slots[i].served = ""
		}
	}
	s.adoptResidency(s.fleetNames(r.Resident), ver, force || fresh)
}

// rejoinable reports whether a down server's probe shows it serving again:
// /models answered 2xx, or, for a server whose models are configured (a
// hosted API may not list them), with any answer but unavailable.
func rejoinable(cfg ServerConfig, r probe.Result) bool {
	switch {
	case !r.Reachable || r.Status == 0:
		return false
	case r.Status >= 200 && r.Status < 300:
		return true
	}
	return cfg.Models != nil && r.Status != http.StatusServiceUnavailable
}

// suspect reports whether a failure of class c may mean the server died:
// a refused or dropped connection, a stream cut off, no answer in time.
func suspect(c chat.ErrorClass) bool {
	return c == chat.ClassUnavailable || c == chat.ClassMalformed || c == chat.ClassCut || c == chat.ClassTimeout
}

// confirmDown is called when a request on s failed in a way a dead server
// would cause: it pings s (GET /models, with the probe timeout) and marks
// it down at once when nothing answers. Jobs that fail together share one
// ping. It reports whether s is down, and why.
func (f *Fleet) confirmDown(s *fleetServer) (bool, string) {
	f.mu.Lock()
	if !s.up {
		why := s.downReason
		f.mu.Unlock()
		return true, why
	}
	if ch := s.check; ch != nil {
		f.mu.Unlock()
		<-ch
		f.mu.Lock()
		defer f.mu.Unlock()
		return !s.up, s.downReason
	}
	ch := make(chan struct{})
	s.check = ch
	epoch := s.probe.epoch
	f.mu.Unlock()

	ctx, cancel := context.WithTimeout(f.ctx, f.probes.timeout)
	err := probe.Ping(ctx, f.hc, s.cfg.URL, s.cfg.APIKey)
	cancel()

	var h healthChange
	f.mu.Lock()
	s.check = nil
	close(ch)
	if err != nil && f.ctx.Err() == nil && s.up && epoch == s.probe.epoch {
		why := err.Error()
		h = healthChange{changed: s.setDown(why), reason: why}
		f.notifyLocked()
	}
	down, why := !s.up, s.downReason
	f.mu.Unlock()
	f.healthChanged(s.cfg.Name, h)
	return down, why
}

// serverGPUs is the telemetry of the GPUs a server runs on (its
// ServerConfig.GPUs), when the fleet has telemetry.
func (f *Fleet) serverGPUs(s *fleetServer) []telemetry.GPUState {
	if f.opts.Telemetry == nil || len(s.cfg.GPUs) == 0 {
		return nil
	}
	var out []telemetry.GPUState
	for _, g := range f.opts.Telemetry.GPUs() {
		for _, i := range s.cfg.GPUs {
			if g.Index == i {
				out = append(out, g)
			}
		}
	}
	return out
}

// telemetryVRAM sums GPUs' memory in GB; 0, 0 when none reports it.
func telemetryVRAM(gpus []telemetry.GPUState) (total, used float64) {
	for _, g := range gpus {
		total += g.MemTotalMiB / 1024
		used += g.MemUsedMiB / 1024
	}
	return total, used
}
