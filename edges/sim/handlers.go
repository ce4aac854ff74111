package sim

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// routes is the HTTP surface of one generation: the OpenAI endpoints, the
// backend's own endpoints and the simulator's /sim ones.
func (s *Server) routes(g *generation) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", s.handleModels)
	mux.HandleFunc("GET /v1/models/{id...}", s.handleModel)
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		s.handleChat(g, w, r)
	})
	mux.HandleFunc("GET /sim/gpus", s.handleGPUs)
	mux.HandleFunc("GET /sim/state", s.handleState)
	switch s.cfg.Spec.Backend {
	case BackendOpenAI:
		s.batchRoutes(mux) // batch.go
	case BackendLMStudio:
		s.lmstudioRoutes(mux)
	case BackendOllama:
		s.ollamaRoutes(mux)
	case BackendLlamaCpp:
		s.llamacppRoutes(mux)
	case BackendVLLM:
		s.vllmRoutes(mux)
	}
	mux.HandleFunc("/", s.notFound)
	return mux
}

// handleModels serves the OpenAI model list: every offered model (LM
// Studio with JIT loading and Ollama list what they could load, too).
func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	list := modelList{Object: "list", Data: make([]modelItem, 0, len(s.cfg.Models))}
	var status map[string]string
	if s.cfg.Spec.Backend == BackendLlamaCpp {
		status = s.residency()
	}
	for _, name := range s.cfg.Models {
		it := s.modelItem(name)
		if status != nil {
			v := status[name]
			if v == "not-loaded" {
				v = "unloaded"
			}
			it.Status = &modelStatus{Value: v}
		}
		list.Data = append(list.Data, it)
	}
	writeJSON(w, http.StatusOK, list)
}

// modelItem is one model as the model list and GET /v1/models/{id} show it.
// Its created time is fixed for the server's life (Ollama's is the time
// the model was pulled), so that the two agree.
func (s *Server) modelItem(name string) modelItem {
	created := s.started.Unix()
	if s.cfg.Spec.Backend == BackendOllama {
		created = ollamaModified.Unix()
	}
	return modelItem{ID: name, Object: "model", Created: created, OwnedBy: ownedBy(s.cfg.Spec.Backend, name)}
}

// handleModel serves GET /v1/models/{id}, which the OpenAI SDKs' models
// retrieve calls. An id may hold "/" (LM Studio's publisher/model), sent
// as is by the Python SDK and as %2F by the Node one, and ":" (Ollama's
// tags). Backends without the endpoint answer as for any unknown route,
// and so does Ollama for an id with a slash.
func (s *Server) handleModel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	switch {
	case !dialectOf(s.cfg.Spec.Backend).retrieve,
		s.cfg.Spec.Backend == BackendOllama && strings.Contains(id, "/"): // its route takes one path segment
		s.notFound(w, r)
		return
	}
	if _, ok := s.specs[id]; !ok || id == "" {
		s.writeError(w, apiError{kind: errModelNotFound, model: id})
		return
	}
	writeJSON(w, http.StatusOK, s.modelItem(id))
}

// notFound answers a route the backend does not serve.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	s.writeError(w, apiError{kind: errNotFound, message: fmt.Sprintf("Unexpected endpoint or method. (%s %s)", r.Method, r.URL.Path)})
}

// residency maps each offered model to loaded, loading or not-loaded.
func (s *Server) residency() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.gen.eng
	e.expireIdleLocked(time.Now())
	out := make(map[string]string, len(e.models))
	for name, m := range e.models {
		out[name] = m.res.String()
	}
	return out
}

// handleChat serves POST /v1/chat/completions: it checks the request,
// injects the fault it draws, waits for a slot and for the model to be
// resident, waits the time to first token, and answers.
func (s *Server) handleChat(g *generation, w http.ResponseWriter, r *http.Request) {
	g.eng.enter()
	defer g.eng.leave()
	req, err := decodeChat(r.Body)
	if err != nil {
		s.writeError(w, apiError{kind: errBadRequest, message: err.Error()})
		return
	}
	m, ok := g.eng.models[req.Model] // the map is fixed at creation; only its values change
	if !ok {
		s.writeError(w, apiError{kind: errModelNotFound, model: req.Model})
		return
	}
	prompt := promptTokens(req)
	nctx := s.contextOf(req.Model)
	switch {
	case s.cfg.Spec.Backend == BackendLlamaCpp && prompt > nctx:
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{
			"code": http.StatusBadRequest, "type": "exceed_context_size_error",
			"message":         "the request exceeds the available context size, try increasing it",
			"n_prompt_tokens": prompt, "n_ctx": nctx,
		}})
		return
	case s.cfg.Spec.Backend == BackendOllama && prompt > nctx:
		// Ollama keeps the prompt's end and says nothing but its count.
		prompt = nctx
	}
	n, bad := s.choices(req)
	if bad != nil {
		s.writeError(w, *bad)
		return
	}
	ctx := r.Context()
	fault, restartAfter := s.admit(g, req.Model, requestHash(req.Model, req, s.cfg.Seed))
	switch fault {
	case faultCrash:
		s.crashByFault(restartAfter)
		panic(http.ErrAbortHandler) // the connection dies with the process
	case faultError:
		s.writeError(w, apiError{kind: errServer, message: "simulated GPU fault"})
		return
	case faultRateLimit:
		s.writeRateLimit(w)
		return
	case faultHang:
		<-ctx.Done()
		g.abandon()
		return
	}
	plans := make([]plan, n)
	budget := req.maxTokens(dialectOf(s.cfg.Spec.Backend).maxCompletionTokens)
	for i := range plans {
		plans[i] = planReply(s.compose(m.ms, req, i), budget, callIDs(s.cfg.Spec.Backend, i, loopTurn(req)))
	}

	if err := g.eng.acquireSlot(ctx, m); err != nil {
		g.abandon()
		return
	}
	defer g.eng.releaseSlot()
	if err := g.eng.acquireModel(ctx, m); err != nil {
		g.abandon()
		return
	}
	defer g.eng.releaseModel(m)
	s.mu.Lock()
	s.counters.promptTokens[req.Model] += int64(prompt)
	s.mu.Unlock()
	prefill := seconds(float64(prompt) / m.ms.PrefillTPS)
	if s.clock.sleep(ctx, m.ms.TTFT+prefill) != nil {
		g.abandon()
		return
	}
	a := answer{s: s, e: g.eng, m: m, req: req, plans: plans, prompt: prompt, prefill: prefill, fault: fault}
	var done bool
	if req.Stream {
		done = a.stream(ctx, w)
	} else {
		done = a.respond(ctx, w)
	}
	if !done {
		g.abandon()
		return
	}
	s.mu.Lock()
	s.counters.served[req.Model]++
	s.mu.Unlock()
}

// abandon ends a request that stopped waiting: when the server went down
// under it, the connection is dropped rather than answered with an empty
// 200; when the client went away, there is no one to answer.
func (g *generation) abandon() {
	if g.ctx.Err() != nil {
		panic(http.ErrAbortHandler)
	}
}
