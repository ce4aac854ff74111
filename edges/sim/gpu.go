package sim

import (
	"fmt"
	"math"
	"net/http"
)

// GPUReading is one simulated GPU's telemetry, with the meanings of
// nvidia-smi's --query-gpu fields of the same names (percent, MiB, °C, W),
// so that pitwall's GPU panel reads the simulator as it reads real GPUs.
type GPUReading struct {
	Index          int     `json:"index"`
	UUID           string  `json:"uuid"`
	Name           string  `json:"name"`
	UtilizationGPU float64 `json:"utilization_gpu"`
	MemoryUsedMiB  float64 `json:"memory_used_mib"`
	MemoryTotalMiB float64 `json:"memory_total_mib"`
	TemperatureGPU float64 `json:"temperature_gpu"`
	PowerDrawW     float64 `json:"power_draw_w"`
}

// Power and temperature of a simulated GPU, idle and flat out.
const (
	idlePowerW = 22.0
	maxPowerW  = 450.0
	idleTempC  = 34.0
	maxTempC   = 78.0
	// vllmReserve is the share of VRAM vLLM takes at start (its
	// gpu_memory_utilization default) for weights and KV cache.
	vllmReserve = 0.9
	// kvTokensPerGB is how many tokens of KV cache a GB holds.
	kvTokensPerGB = 8192.0
)

// GPUs returns the server's GPU readings now. Utilization is the share of
// the GPUs' batched decode throughput in use (see StreamRate); memory is
// the resident and loading models, split over the GPUs by their VRAM.
func (s *Server) GPUs() []GPUReading {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.gen.eng
	util := 100 * aggregateShare(e.decoding, s.cfg.Slots)
	used := e.usedGBLocked()
	total := vramGB(s.cfg.Spec)
	switch s.cfg.Spec.Backend {
	case BackendVLLM:
		used = vllmReserve * total
	case BackendOpenAI:
		used = min(used, total)
	}
	out := make([]GPUReading, len(s.cfg.Spec.GPUs))
	for i, g := range s.cfg.Spec.GPUs {
		share := g.VRAMGB / total
		h := hashString(fmt.Sprintf("%s/%d", s.cfg.Name, i))
		out[i] = GPUReading{
			Index: i,
			UUID: fmt.Sprintf("GPU-%08x-%04x-%04x-%04x-%012x", uint32(h), uint16(h>>32), uint16(h>>48),
				uint16(splitmix64(h)), splitmix64(h^1)&0xffffffffffff),
			Name:           g.Name,
			UtilizationGPU: math.Round(util),
			MemoryUsedMiB:  math.Round(used * share * 1024),
			MemoryTotalMiB: math.Round(g.VRAMGB * 1024),
			TemperatureGPU: math.Round(idleTempC + (maxTempC-idleTempC)*util/100),
			PowerDrawW:     math.Round((idlePowerW+(maxPowerW-idlePowerW)*util/100)*100) / 100,
		}
	}
	return out
}

// handleGPUs serves GET /sim/gpus.
func (s *Server) handleGPUs(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.GPUs())
}

// kvUsageLocked is the share of vLLM's KV cache that requests in flight
// hold, 0..1.
func (e *engine) kvUsageLocked() float64 {
	capacity := (vllmReserve*vramGB(e.s.cfg.Spec) - e.usedGBLocked()) * kvTokensPerGB
	capacity = max(capacity, 1024)
	return min(1, float64(e.kvTokens)/capacity)
}
