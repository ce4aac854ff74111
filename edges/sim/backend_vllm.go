package sim

import "net/http"

// vLLM's OpenAI server: /metrics, /health and /version beside /v1.

func (s *Server) vllmRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /metrics", s.handleVLLMMetrics)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
	})
	mux.HandleFunc("GET /version", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"version": "0.11.0"})
	})
}
