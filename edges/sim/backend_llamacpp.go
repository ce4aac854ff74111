package sim

import "net/http"

// llama-server in router mode: /health, /slots, /metrics and /models.

type llamaSlot struct {
	ID           int  `json:"id"`
	IDTask       int  `json:"id_task"`
	NCtx         int  `json:"n_ctx"`
	Speculative  bool `json:"speculative"`
	IsProcessing bool `json:"is_processing"`
}

func (s *Server) llamacppRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /health", s.handleLlamaHealth)
	mux.HandleFunc("GET /v1/health", s.handleLlamaHealth)
	mux.HandleFunc("GET /slots", s.handleLlamaSlots)
	mux.HandleFunc("GET /metrics", s.handleLlamaCppMetrics)
	mux.HandleFunc("GET /models", s.handleModels)
}

// handleLlamaHealth is 503 while a model loads, as llama-server answers
// until its model is ready, and 200 otherwise.
func (s *Server) handleLlamaHealth(w http.ResponseWriter, r *http.Request) {
	for _, v := range s.residency() {
		if v == "loading" {
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"error": map[string]any{
				"code": http.StatusServiceUnavailable, "message": "Loading model", "type": "unavailable_error",
			}})
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// handleLlamaSlots serves GET /slots: one entry per parallel slot.
func (s *Server) handleLlamaSlots(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	busy := s.gen.eng.busy
	s.mu.Unlock()
	out := make([]llamaSlot, s.cfg.Slots)
	for i := range out {
		out[i] = llamaSlot{ID: i, IDTask: -1, NCtx: contextLength, IsProcessing: i < busy}
		if out[i].IsProcessing {
			out[i].IDTask = i
		}
	}
	writeJSON(w, http.StatusOK, out)
}
