package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"pitwall/config"
	"pitwall/edges/sim"
	"pitwall/gpu"
	"pitwall/gpu/chat"
	"pitwall/gpu/placement"
	"pitwall/gpu/telemetry"
	"pitwall/runner/ledger"
	"pitwall/runner/setup"
)

// app is what a run needs around it, shared by `run` and `show`: the
// ledger, a log file, the simulated servers, GPU telemetry and the fleet.
// Close releases them.
type app struct {
	cfg     *config.Config
	led     *ledger.Ledger
	logFile *os.File
	log     *slog.Logger
	logPath string
	runID   string
	sims    io.Closer
	tel     *telemetry.Watcher
	fleet   *gpu.Fleet
	cancel  context.CancelFunc // telemetry's and discovery's context
	purpose appFor
	intr    *interrupts // SIGINT and SIGTERM while the app is open (interrupts.go)
}

// appFor is what an app is opened for, which says what its servers must
// offer.
type appFor uint8

const (
	forRun     appFor = iota // inference and judging: the models and the judges
	forJudging               // judging alone (rejudge): the judges' models
)

// openApp opens the ledger and the log, starts simulated servers, builds
// the fleet and asks every server what it offers. runID "" makes a new id.
// Any error here stops the run before it starts (exit 2), and what was
// opened is closed again; otherwise the caller closes the app.
func openApp(cfg *config.Config, runID string, stderr io.Writer) (*app, error) {
	return openAppFor(cfg, runID, forRun, stderr)
}

// openAppFor is openApp for a purpose.
func openAppFor(cfg *config.Config, runID string, purpose appFor, stderr io.Writer) (*app, error) {
	ctx, cancel := context.WithCancel(context.Background())
	a := &app{cfg: cfg, cancel: cancel, purpose: purpose}
	a.intr = watchInterrupts(stderr)
	fitMemoryLimit(cfg)
	if err := a.open(ctx, runID, stderr); err != nil {
		a.Close()
		return nil, err
	}
	fleet, led := a.fleet, a.led // Close may be clearing the fields meanwhile
	way := &wayOut{closeAll: func() { fleet.Close(); _ = led.Flush() }}
	if purpose == forRun {
		way.resume = "pitwall resume " + a.runID
	}
	a.intr.way.Store(way)
	return a, nil
}

// simConfig is the config the simulated servers are started with. A new run
// gets cfg as it is, so the demo's seed makes it the same run to run. A run
// continued (resume, retry, rejudge) gets a seed of its own: the simulator
// draws a fault from the seed and the request (edges/sim/faults.go), so a
// fresh simulator with the run's seed would fail every ⚠️ cell that retry
// sends again in the same way, and retrying would show nothing.
func simConfig(cfg *config.Config, runID string, now time.Time) *config.Config {
	if runID == "" {
		return cfg
	}
	again := *cfg
	again.Run.Seed ^= int(now.UnixNano() & 0x7fffffff)
	return &again
}

func (a *app) open(ctx context.Context, runID string, stderr io.Writer) error {
	cfg := a.cfg
	led, err := ledger.Open(cfg.DB)
	if err != nil {
		return fmt.Errorf("opening the ledger: %w", err)
	}
	a.led = led
	_ = os.MkdirAll(logFolder(cfg.DB), 0o755)
	a.logPath = filepath.Join(logFolder(cfg.DB), "pitwall.log")
	if f, err := os.OpenFile(a.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
		a.logFile = f
		a.log = slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelInfo}))
	} else {
		a.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	a.runID = runID
	if a.runID == "" {
		a.runID = ledger.NewRunID(time.Now())
	}
	a.log = a.log.With("run", a.runID)

	if a.sims, err = setup.StartSims(simConfig(cfg, runID, time.Now()), false); err != nil {
		return err
	}
	servers, err := setup.FleetServers(cfg, os.Getenv)
	if err != nil {
		return err
	}
	// GPU telemetry from nvidia-smi or rocm-smi, for real servers that say
	// which GPUs they run on; simulated servers report their own.
	for _, s := range servers {
		if s.Kind != chat.KindSim && len(s.GPUs) > 0 {
			a.tel = telemetry.Start(ctx, telemetry.Options{Logger: a.log})
			break
		}
	}
	a.fleet = gpu.NewFleet(servers, gpu.Options{Logger: a.log, MaxWait: cfg.Run.MaxWait, Models: modelViews(cfg), JudgeModels: judgeModels(cfg),
		Warmup: setup.RecordWarmups(led, a.runID), Telemetry: a.tel})
	return a.discover(ctx, stderr)
}

// discover asks every server what it offers and checks that what the
// config needs is offered by a server that answered.
func (a *app) discover(ctx context.Context, stderr io.Writer) error {
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	errs := a.fleet.Discover(dctx)
	names := make([]string, 0, len(errs))
	for n := range errs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if errs[n] != nil {
			fmt.Fprintf(stderr, "pitwall: server %s is unreachable: %v\n", n, errs[n])
			a.log.Warn("server unreachable", "server", n, "err", errs[n])
		}
	}
	if len(names) > 0 && countNil(errs) == 0 {
		return fmt.Errorf("no server of %s answered; start one, or fix the urls in [[servers]]", a.cfg.Path)
	}
	// Only what reachable servers offer counts: a model (or a judge) whose
	// servers are all down would leave its cells waiting for ever.
	reachable := map[string][]string{}
	for name, models := range a.fleet.Offered() {
		if err, asked := errs[name]; !asked || err == nil {
			reachable[name] = models
		}
	}
	if a.purpose == forJudging {
		// No inference is sent: the run's models need not be served (an
		// imported run's seldom are); the judges' must be.
		c := *a.cfg
		c.Models = nil
		return config.CheckOffered(&c, reachable)
	}
	return config.CheckOffered(a.cfg, reachable)
}

// Close releases what openApp opened, in reverse order: the fleet (its
// queued and in-flight work is cancelled), telemetry, the simulated
// servers, the ledger, and last the log file, which records what failed to
// close. A run on the app must be closed first. Close may be called again;
// it does nothing more.
func (a *app) Close() error {
	var errs []error
	if a.fleet != nil {
		a.fleet.Close()
		a.fleet = nil
	}
	if a.tel != nil {
		a.tel.Close()
		a.tel = nil
	}
	if a.sims != nil {
		errs = append(errs, a.sims.Close())
		a.sims = nil
	}
	if a.led != nil {
		if err := a.led.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing the ledger: %w", err))
		}
		a.led = nil
	}
	if a.cancel != nil {
		a.cancel()
	}
	err := errors.Join(errs...)
	if err != nil && a.log != nil {
		a.log.Error("closing", "err", err)
	}
	if a.logFile != nil {
		errs = append(errs, a.logFile.Close())
		a.logFile = nil
		err = errors.Join(errs...)
	}
	a.intr.close() // the ledger is closed: an interrupt may end the process again
	a.intr = nil
	return err
}

// modelViews is what the placement policy knows of the simulated models up
// front: size, and load time on the sim servers that offer them (their mean
// load bandwidth; the simulator's default is 1 GB/s).
func modelViews(cfg *config.Config) map[string]placement.ModelView {
	out := map[string]placement.ModelView{}
	for _, m := range cfg.Sim.Models {
		size := m.SizeGB
		if size <= 0 {
			size = sim.DefaultSizeGB
		}
		var bw float64
		n := 0
		for _, s := range cfg.Servers {
			if s.Kind != chat.KindSim || !slices.Contains(s.Models, m.Name) {
				continue
			}
			g := sim.DefaultLoadGBps
			if s.Sim != nil && s.Sim.LoadGBps > 0 {
				g = s.Sim.LoadGBps
			}
			bw += g
			n++
		}
		v := placement.ModelView{SizeGB: size}
		if n > 0 {
			scale := cfg.SimTimeScale()
			v.LoadTime = time.Duration(size / (bw / float64(n)) * scale * float64(time.Second))
		}
		out[m.Name] = v
	}
	return out
}

func judgeModels(cfg *config.Config) map[string]bool {
	out := map[string]bool{}
	for _, j := range cfg.Scoring.Judges {
		out[j.Model] = true
	}
	return out
}

func countNil(m map[string]error) int {
	n := 0
	for _, err := range m {
		if err == nil {
			n++
		}
	}
	return n
}
