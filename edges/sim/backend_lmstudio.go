package sim

import "net/http"

// LM Studio's REST API (beta): /api/v0/models lists every downloaded model
// with its state.

type lmsModel struct {
	ID                string `json:"id"`
	Object            string `json:"object"`
	Type              string `json:"type"`
	Publisher         string `json:"publisher"`
	Arch              string `json:"arch"`
	CompatibilityType string `json:"compatibility_type"`
	Quantization      string `json:"quantization"`
	State             string `json:"state"` // loaded | not-loaded
	MaxContextLength  int    `json:"max_context_length"`
}

func (s *Server) lmstudioRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/v0/models", s.handleLMStudioModels)
}

// handleLMStudioModels serves GET /api/v0/models. LM Studio knows only
// loaded and not-loaded: a model still loading is not-loaded.
func (s *Server) handleLMStudioModels(w http.ResponseWriter, r *http.Request) {
	res := s.residency()
	out := struct {
		Object string     `json:"object"`
		Data   []lmsModel `json:"data"`
	}{Object: "list", Data: make([]lmsModel, 0, len(s.cfg.Models))}
	for _, name := range s.cfg.Models {
		state := "not-loaded"
		if res[name] == "loaded" {
			state = "loaded"
		}
		out.Data = append(out.Data, lmsModel{
			ID: name, Object: "model", Type: "llm", Publisher: "pitwall-sim",
			Arch: archOf(name), CompatibilityType: "gguf", Quantization: quantization,
			State: state, MaxContextLength: maxContextLength,
		})
	}
	writeJSON(w, http.StatusOK, out)
}
