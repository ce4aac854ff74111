package sim

import (
	"net/http"
	"time"
)

// Ollama's native API: /api/ps (loaded models), /api/tags (pulled models)
// and /api/version. Native errors are {"error":"..."}.

type ollamaDetails struct {
	ParentModel       string   `json:"parent_model"`
	Format            string   `json:"format"`
	Family            string   `json:"family"`
	Families          []string `json:"families"`
	ParameterSize     string   `json:"parameter_size"`
	QuantizationLevel string   `json:"quantization_level"`
}

type ollamaPS struct {
	Name          string        `json:"name"`
	Model         string        `json:"model"`
	Size          int64         `json:"size"`
	Digest        string        `json:"digest"`
	Details       ollamaDetails `json:"details"`
	ExpiresAt     time.Time     `json:"expires_at"`
	SizeVRAM      int64         `json:"size_vram"`
	ContextLength int           `json:"context_length"`
}

type ollamaTag struct {
	Name       string        `json:"name"`
	Model      string        `json:"model"`
	ModifiedAt time.Time     `json:"modified_at"`
	Size       int64         `json:"size"`
	Digest     string        `json:"digest"`
	Details    ollamaDetails `json:"details"`
}

// ollamaModified is when every simulated Ollama model was pulled.
var ollamaModified = time.Unix(1735689600, 0).UTC()

func (s *Server) ollamaRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/ps", s.handleOllamaPS)
	mux.HandleFunc("GET /api/tags", s.handleOllamaTags)
	mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"version": "0.17.0"})
	})
	mux.HandleFunc("/api/", s.notFound)
}

func (s *Server) ollamaDetails(name string) ollamaDetails {
	f := archOf(name)
	return ollamaDetails{Format: "gguf", Family: f, Families: []string{f},
		ParameterSize: paramSize(name, s.specs[name].SizeGB), QuantizationLevel: quantization}
}

// handleOllamaPS serves GET /api/ps: the models in memory, each with the
// time its keep-alive runs out (under Instant, models never expire).
func (s *Server) handleOllamaPS(w http.ResponseWriter, r *http.Request) {
	type entry struct {
		name     string
		lastUsed time.Time
	}
	s.mu.Lock()
	e := s.gen.eng
	now := time.Now()
	e.expireIdleLocked(now)
	var inMem []entry
	for _, name := range s.cfg.Models {
		if m := e.models[name]; m.res == loaded {
			last := m.lastUsed
			if m.active > 0 {
				last = now
			}
			inMem = append(inMem, entry{name, last})
		}
	}
	s.mu.Unlock()
	keep := s.keepAlive()
	if s.clock.instant {
		keep = 100 * 365 * 24 * time.Hour
	}
	out := struct {
		Models []ollamaPS `json:"models"`
	}{Models: make([]ollamaPS, 0, len(inMem))}
	for _, l := range inMem {
		size := sizeBytes(s.specs[l.name].SizeGB)
		out.Models = append(out.Models, ollamaPS{
			Name: l.name, Model: l.name, Size: size, Digest: digest(l.name),
			Details: s.ollamaDetails(l.name), ExpiresAt: l.lastUsed.Add(keep),
			SizeVRAM: size, ContextLength: s.contextOf(l.name),
		})
	}
	writeJSON(w, http.StatusOK, out)
}

// handleOllamaTags serves GET /api/tags: every offered model is pulled.
func (s *Server) handleOllamaTags(w http.ResponseWriter, r *http.Request) {
	out := struct {
		Models []ollamaTag `json:"models"`
	}{Models: make([]ollamaTag, 0, len(s.cfg.Models))}
	for _, name := range s.cfg.Models {
		out.Models = append(out.Models, ollamaTag{
			Name: name, Model: name, ModifiedAt: ollamaModified,
			Size: sizeBytes(s.specs[name].SizeGB), Digest: digest(name), Details: s.ollamaDetails(name),
		})
	}
	writeJSON(w, http.StatusOK, out)
}
