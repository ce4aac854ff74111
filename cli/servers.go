package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"pitwall/gpu"
	"pitwall/gpu/probe"
	"pitwall/gpu/telemetry"
	"pitwall/runner/setup"
	"pitwall/runner/state"
)

func cmdServers(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("servers", "pitwall servers [CONFIG] [--json]",
		"Probes every server of the fleet: reachable, kind, models offered and resident, slots, GPU readings.", stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	cfg, sims, code, ok := loadFleetConfig(fs, args, stderr)
	if !ok {
		return code
	}
	if sims != nil {
		defer sims.Close()
	}
	servers, err := setup.FleetServers(cfg, os.Getenv)
	if err != nil {
		return failf(stderr, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	results := probeAll(ctx, servers)
	tel := telemetry.Start(ctx, telemetry.Options{Interval: 500 * time.Millisecond})
	defer tel.Close()
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(probeJSON(results, tel)); err != nil {
			return failf(stderr, err)
		}
	} else {
		printProbes(stdout, results, tel)
	}
	for _, r := range results {
		if r.Reachable {
			return 0
		}
	}
	return state.ExitSetup
}

// probeAll probes every server at once.
func probeAll(ctx context.Context, servers []gpu.ServerConfig) []probe.Result {
	return probeAllWith(ctx, &http.Client{Timeout: 5 * time.Second}, servers)
}

// probeAllWith probes every server at once with hc.
func probeAllWith(ctx context.Context, hc *http.Client, servers []gpu.ServerConfig) []probe.Result {
	results := make([]probe.Result, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Go(func() { results[i] = probe.Probe(ctx, hc, s.ProbeTarget()) })
	}
	wg.Wait()
	for i := range results {
		r := &results[i]
		// A server that does not say how many requests it runs at once
		// (Ollama has no endpoint for OLLAMA_NUM_PARALLEL) runs what the
		// config says it does.
		if r.Slots == 0 {
			r.Slots = servers[i].Slots
		}
		slices.Sort(r.Models)
		slices.Sort(r.Resident)
	}
	return results
}

// known is a count the server told, or "?" when it does not tell.
func known(n *int) string {
	if n == nil {
		return "?"
	}
	return fmt.Sprint(*n)
}

func printProbes(w io.Writer, results []probe.Result, tel *telemetry.Watcher) {
	printServers(w, results)
	fmt.Fprintf(w, "\nlocal GPU telemetry: %s\n", tel.Source())
	for _, g := range tel.GPUs() {
		fmt.Fprintf(w, "  gpu%d %s  util %.0f%%  vram %.0f/%.0f MiB  %.0f W  %.0f°C\n", g.Index, g.Name, g.UtilPct, g.MemUsedMiB, g.MemTotalMiB, g.PowerW, g.TempC)
	}
}

// printServers is the table of what each server's probe found.
func printServers(w io.Writer, results []probe.Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tKIND\tSTATUS\tSLOTS\tRUN/WAIT\tMODELS\tRESIDENT\tGPUS")
	for _, r := range results {
		status := "up " + r.Latency.Round(time.Millisecond).String()
		if !r.Reachable {
			status = "DOWN: " + r.Error
		}
		slots := "-"
		if r.Slots > 0 {
			slots = fmt.Sprint(r.Slots)
		}
		var gpus []string
		for _, g := range r.GPUs {
			gpus = append(gpus, fmt.Sprintf("%s %.0f%% %.1f/%.0fGB", g.Name, g.UtilPct, g.MemUsedMiB/1024, g.MemTotalMiB/1024))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s/%s\t%s\t%s\t%s\n", r.Server, r.Kind, status, slots, known(r.Running), known(r.Waiting),
			strings.Join(r.Models, ","), strings.Join(r.Resident, ","), strings.Join(gpus, "; "))
	}
	tw.Flush()
}

type gpuJSON struct {
	Index       int     `json:"index"`
	Name        string  `json:"name"`
	UUID        string  `json:"uuid,omitempty"`
	UtilPct     float64 `json:"utilization_pct"`
	MemUsedMiB  float64 `json:"memory_used_mib"`
	MemTotalMiB float64 `json:"memory_total_mib"`
	TempC       float64 `json:"temperature_c"`
	PowerW      float64 `json:"power_w"`
}

type serverJSON struct {
	Server     string    `json:"server"`
	URL        string    `json:"url"`
	Reachable  bool      `json:"reachable"`
	Error      string    `json:"error,omitempty"`
	Kind       string    `json:"kind"`
	Models     []string  `json:"models"`
	Resident   []string  `json:"resident"`
	Slots      int       `json:"slots"`
	Running    *int      `json:"running"` // null: the server does not tell
	Waiting    *int      `json:"waiting"`
	KVCachePct float64   `json:"kv_cache_pct"`
	LatencyMS  float64   `json:"latency_ms"`
	GPUs       []gpuJSON `json:"gpus"`
}

func gpusJSON(gs []telemetry.GPUState) []gpuJSON {
	out := make([]gpuJSON, 0, len(gs))
	for _, g := range gs {
		out = append(out, gpuJSON{Index: g.Index, Name: g.Name, UUID: g.UUID, UtilPct: g.UtilPct, MemUsedMiB: g.MemUsedMiB,
			MemTotalMiB: g.MemTotalMiB, TempC: g.TempC, PowerW: g.PowerW})
	}
	return out
}

// probeJSON is `servers --json`: snake_case names and units in the names,
// as the export has them.
func probeJSON(results []probe.Result, tel *telemetry.Watcher) any {
	servers := make([]serverJSON, 0, len(results))
	for _, r := range results {
		servers = append(servers, serverJSON{Server: r.Server, URL: serverWhere(r.Kind, r.URL), Reachable: r.Reachable, Error: r.Error,
			Kind: string(r.Kind), Models: r.Models, Resident: r.Resident, Slots: r.Slots, Running: r.Running, Waiting: r.Waiting,
			KVCachePct: r.KVCachePct, LatencyMS: float64(r.Latency.Microseconds()) / 1000, GPUs: gpusJSON(r.GPUs)})
	}
	return map[string]any{"servers": servers, "telemetry": tel.Source(), "local_gpus": gpusJSON(tel.GPUs())}
}
