package telemetry

import (
	"context"
	"log/slog"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

// Telemetry sources, as Source reports them.
const (
	SourceNvidiaSMI = "nvidia-smi"
	SourceRocmSMI   = "rocm-smi"
	SourceSim       = "sim"
	SourceNone      = "none"
)

// DefaultInterval is how often GPUs are read when
// Options.Interval is zero.
const DefaultInterval = 500 * time.Millisecond

// Options configures Start. Zero values take defaults.
type Options struct {
	// Interval between readings (default DefaultInterval).
	Interval time.Duration
	// LookPath finds a program on PATH (default exec.LookPath); tests put a
	// fake nvidia-smi in its place.
	LookPath func(string) (string, error)
	// Logger receives the reasons telemetry is missing or degraded (default:
	// discarded, because the TUI owns the terminal).
	Logger *slog.Logger
	// Source picks where readings come from: "auto" or "" (nvidia-smi, else
	// rocm-smi, else none), "nvidia", "rocm", "none", or
	// "url:http://host:port/sim/gpus" to poll a simulator.
	Source string
}

// Watcher keeps the latest reading of each GPU on this machine, read by a
// child process (nvidia-smi or rocm-smi) or from a simulator. It is safe for
// concurrent use. Readings are never older than the process that made them,
// but they may stop changing if the source fails; GPUState.At tells their age.
type Watcher struct {
	source string
	log    *slog.Logger
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	gpus    map[int]GPUState
	changed chan struct{} // closed and replaced whenever a reading lands
	pid     int           // the current child's process id, 0 when none
	starts  int           // children started so far
}

// Start starts reading GPUs from the source opts names and returns
// at once. With no usable source it returns a Watcher that reports no GPUs;
// that is not an error, because a fleet of remote servers needs none.
//
// nvidia-smi runs as one long-lived child printing a line per GPU per tick;
// rocm-smi has no loop mode and is run once per interval. A child that dies
// on its own is started again after a pause. The child ends, and every
// goroutine with it, when ctx ends or Close is called.
func Start(ctx context.Context, opts Options) *Watcher {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.LookPath == nil {
		opts.LookPath = exec.LookPath
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(ctx)
	t := &Watcher{
		source:  SourceNone,
		log:     opts.Logger.With("component", "gpu-telemetry"),
		cancel:  cancel,
		done:    make(chan struct{}),
		gpus:    make(map[int]GPUState),
		changed: make(chan struct{}),
	}
	run := t.pick(opts)
	t.log.Info("GPU telemetry", "source", t.source, "interval", opts.Interval)
	if run == nil {
		close(t.done)
		return t
	}
	go func() {
		defer close(t.done)
		run(ctx)
	}()
	return t
}

// pick chooses the source and returns the loop that reads it, or nil when
// there is none.
func (t *Watcher) pick(opts Options) func(context.Context) {
	find := func(name string) string {
		path, err := opts.LookPath(name)
		if err != nil {
			t.log.Debug("not on PATH", "program", name, "err", err)
			return ""
		}
		return path
	}
	nvidia := func() func(context.Context) {
		if path := find("nvidia-smi"); path != "" {
			t.source = SourceNvidiaSMI
			return func(ctx context.Context) { t.watchNvidia(ctx, path, opts.Interval) }
		}
		return nil
	}
	rocm := func() func(context.Context) {
		if path := find("rocm-smi"); path != "" {
			t.source = SourceRocmSMI
			return func(ctx context.Context) { t.pollRocm(ctx, path, opts.Interval) }
		}
		return nil
	}
	src := strings.TrimSpace(opts.Source)
	switch {
	case src == "" || src == "auto":
		if run := nvidia(); run != nil {
			return run
		}
		return rocm()
	case src == "nvidia":
		run := nvidia()
		if run == nil {
			t.log.Warn("telemetry source nvidia asked for, but nvidia-smi is not on PATH")
		}
		return run
	case src == "rocm":
		run := rocm()
		if run == nil {
			t.log.Warn("telemetry source rocm asked for, but rocm-smi is not on PATH")
		}
		return run
	case src == "none":
		return nil
	case strings.HasPrefix(src, "url:"):
		url := strings.TrimPrefix(src, "url:")
		t.source = SourceSim
		return func(ctx context.Context) { t.pollSim(ctx, url, opts.Interval) }
	default:
		t.log.Warn("unknown telemetry source; reporting no GPUs", "source", src)
		return nil
	}
}

// GPUs returns the latest reading of each GPU, sorted by index.
func (t *Watcher) GPUs() []GPUState {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.gpus) == 0 {
		return nil
	}
	out := make([]GPUState, 0, len(t.gpus))
	for _, g := range t.gpus {
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b GPUState) int { return a.Index - b.Index })
	return out
}

// Source names where readings come from: "nvidia-smi", "rocm-smi", "sim" or
// "none".
func (t *Watcher) Source() string { return t.source }

// Close stops the source and returns when its child process has been waited
// for and every goroutine of this Watcher has returned. It is safe to call
// more than once; the last readings stay readable.
func (t *Watcher) Close() {
	t.cancel()
	<-t.done
}

// store records readings, stamping those without a time.
func (t *Watcher) store(states ...GPUState) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, s := range states {
		if s.At.IsZero() {
			s.At = now
		}
		t.gpus[s.Index] = s
	}
	close(t.changed)
	t.changed = make(chan struct{})
}

// Updated returns a channel that is closed when the next reading lands.
func (t *Watcher) Updated() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.changed
}

// telemetrySleep waits d or until ctx ends, and reports whether to go on.
func telemetrySleep(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}
