package telemetry

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// simGPU is one GPU as the simulator's GET /sim/gpus reports it.
type simGPU struct {
	Index          int     `json:"index"`
	UUID           string  `json:"uuid"`
	Name           string  `json:"name"`
	UtilizationGPU float64 `json:"utilization_gpu"`
	MemoryUsedMiB  float64 `json:"memory_used_mib"`
	MemoryTotalMiB float64 `json:"memory_total_mib"`
	TemperatureGPU float64 `json:"temperature_gpu"`
	PowerDrawW     float64 `json:"power_draw_w"`
}

// PollSim reads the simulator's GET /sim/gpus once: a JSON array of
// {index, uuid, name, utilization_gpu, memory_used_mib, memory_total_mib,
// temperature_gpu, power_draw_w}. A nil hc means http.DefaultClient.
func PollSim(ctx context.Context, hc *http.Client, url string) ([]GPUState, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("sim gpus %s: %w", url, err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("sim gpus: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("sim gpus %s: HTTP %d", url, resp.StatusCode)
	}
	var raw []simGPU
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&raw); err != nil {
		return nil, fmt.Errorf("sim gpus %s: %w", url, err)
	}
	now := time.Now()
	out := make([]GPUState, len(raw))
	for i, g := range raw {
		out[i] = GPUState{
			Index:       g.Index,
			UUID:        g.UUID,
			Name:        g.Name,
			UtilPct:     g.UtilizationGPU,
			MemUsedMiB:  g.MemoryUsedMiB,
			MemTotalMiB: g.MemoryTotalMiB,
			TempC:       g.TemperatureGPU,
			PowerW:      g.PowerDrawW,
			At:          now,
		}
	}
	return out, nil
}

// pollSim reads a simulator's GPUs once per interval until ctx ends.
func (t *Watcher) pollSim(ctx context.Context, url string, interval time.Duration) {
	hc := &http.Client{}
	defer hc.CloseIdleConnections()
	backoff := restartBackoff{base: interval}
	failing := false
	for ctx.Err() == nil {
		rctx, cancel := context.WithTimeout(ctx, max(2*interval, time.Second))
		gpus, err := PollSim(rctx, hc, url)
		cancel()
		if ctx.Err() != nil {
			return
		}
		pause := interval
		if err != nil {
			pause = backoff.next()
			if !failing {
				t.log.Warn("simulator GPUs unreadable", "url", url, "err", err)
			}
			failing = true
		} else {
			backoff.reset()
			failing = false
			t.store(gpus...)
		}
		if !telemetrySleep(ctx, pause) {
			return
		}
	}
}
