package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"pitwall/config"
	"pitwall/gpu"
	"pitwall/gpu/placement"
	"pitwall/gpu/sim"
	"pitwall/gpu/telemetry"
	"pitwall/runner/ledger"
	"pitwall/runner/setup"
	"pitwall/runner/state"
)

// env is what a run needs around it: the ledger, the simulated servers,
// the fleet and a log file. close releases them in reverse order.
type env struct {
	cfg     *config.Config
	led     *ledger.Ledger
	sims    *sim.Fleet
	fleet   *gpu.Fleet
	tel     *telemetry.Watcher
	log     *slog.Logger
	logPath string
	logFile *os.File
	runID   string
}

func (e *env) close() {
	if e.fleet != nil {
		e.fleet.Close()
	}
	if e.tel != nil {
		e.tel.Close()
	}
	if e.sims != nil {
		e.sims.Close()
	}
	if e.led != nil {
		e.led.Close()
	}
	if e.logFile != nil {
		e.logFile.Close()
	}
}

// openEnv opens the ledger and the log, starts simulated servers, builds the
// fleet and asks every server what it offers. Any error here stops the run
// before it starts (exit 2); what it returns must be closed.
func openEnv(ctx context.Context, cfg *config.Config, runID string, stderr io.Writer) (*env, error) {
	e := &env{cfg: cfg}
	led, err := ledger.Open(cfg.DB)
	if err != nil {
		return e, fmt.Errorf("opening the ledger: %w", err)
	}
	e.led = led
	e.logPath = filepath.Join(filepath.Dir(cfg.DB), "pitwall.log")
	if f, err := os.OpenFile(e.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
		e.logFile = f
		e.log = slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelInfo}))
	} else {
		e.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	e.runID = runID
	if e.runID == "" {
		e.runID = ledger.NewRunID(time.Now())
	}
	e.log = e.log.With("run", e.runID)

	sims, err := setup.StartSims(cfg, false)
	if err != nil {
		return e, err
	}
	e.sims = sims
	servers, err := setup.FleetServers(cfg, os.Getenv)
	if err != nil {
		return e, err
	}
	// GPU telemetry from nvidia-smi or rocm-smi, for real servers that say
	// which GPUs they run on; simulated servers report their own.
	for _, s := range servers {
		if s.Kind != "sim" && len(s.GPUs) > 0 {
			e.tel = telemetry.Start(ctx, telemetry.Options{Logger: e.log})
			break
		}
	}
	e.fleet = gpu.NewFleet(servers, gpu.Options{Logger: e.log, Models: modelViews(cfg), JudgeModels: judgeModels(cfg),
		Warmup: setup.RecordWarmups(led, e.runID), Telemetry: e.tel})

	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	errs := e.fleet.Discover(dctx)
	names := make([]string, 0, len(errs))
	for n := range errs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if errs[n] != nil {
			fmt.Fprintf(stderr, "pitwall: server %s is unreachable: %v\n", n, errs[n])
			e.log.Warn("server unreachable", "server", n, "err", errs[n])
		}
	}
	if len(names) > 0 && countNil(errs) == 0 {
		return e, fmt.Errorf("no server of %s answered; start one, or fix the urls in [[servers]]", cfg.Path)
	}
	// Only what reachable servers offer counts: a model (or a judge) whose
	// servers are all down would leave its cells waiting for ever.
	reachable := map[string][]string{}
	for name, models := range e.fleet.Offered() {
		if err, asked := errs[name]; !asked || err == nil {
			reachable[name] = models
		}
	}
	if err := config.CheckOffered(cfg, reachable); err != nil {
		return e, err
	}
	return e, nil
}

// modelViews is what the placement policy knows of the simulated models up
// front: size, and load time on the sim servers that offer them (their mean
// load bandwidth; the simulator's default is 1 GB/s).
func modelViews(cfg *config.Config) map[string]placement.ModelView {
	out := map[string]placement.ModelView{}
	for _, m := range cfg.Sim.Models {
		size := m.SizeGB
		if size <= 0 {
			size = 5 // the simulator's default
		}
		var bw float64
		n := 0
		for _, s := range cfg.Servers {
			if s.Kind != "sim" || !slices.Contains(s.Models, m.Name) {
				continue
			}
			g := 1.0
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

// failf prints an error the way every command does and returns exit 2.
func failf(stderr io.Writer, err error) int {
	msg := err.Error()
	if !strings.HasPrefix(msg, "pitwall") {
		msg = "pitwall: " + msg
	}
	fmt.Fprintln(stderr, msg)
	return state.ExitSetup
}
