package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// errKind is what went wrong, before a backend gives it its own words.
type errKind int

const (
	errBadRequest errKind = iota
	errModelNotFound
	errServer
	errRateLimit
	errUnavailable
	errNotFound // no such route
)

// apiError is one error reply.
type apiError struct {
	kind    errKind
	message string
	model   string // for errModelNotFound
	param   string // the request field at fault, where OpenAI names one
}

// errorReply renders e as the backend does: the status and the JSON body.
// Every body is {"error":{"message","type","code"...}}; code is a string
// (OpenAI, LM Studio), an integer (llama.cpp, vLLM) or null (Ollama), as the
// real servers send, so that clients are tested against all three.
func errorReply(backend string, e apiError) (int, []byte) {
	status := e.status(backend)
	msg := e.message
	var typ string
	var code any
	switch backend {
	case BackendLlamaCpp:
		code = status
		typ = map[errKind]string{
			errBadRequest: "invalid_request_error", errModelNotFound: "invalid_request_error",
			errServer: "server_error", errRateLimit: "unavailable_error",
			errUnavailable: "unavailable_error", errNotFound: "not_found_error",
		}[e.kind]
		if e.kind == errModelNotFound {
			msg = fmt.Sprintf("model '%s' not found", e.model)
		}
	case BackendVLLM:
		code = status
		typ = map[errKind]string{
			errBadRequest: "BadRequestError", errModelNotFound: "NotFoundError",
			errServer: "InternalServerError", errRateLimit: "RateLimitError",
			errUnavailable: "ServiceUnavailableError", errNotFound: "NotFoundError",
		}[e.kind]
		if e.kind == errModelNotFound {
			msg = fmt.Sprintf("The model `%s` does not exist.", e.model)
		}
	case BackendOllama:
		// Ollama's OpenAI layer types the errors it finds itself (a bad
		// body) invalid_request_error, and every error of the server behind
		// it api_error, whatever the status (v0.17.4: a missing model is a
		// 404 of type api_error).
		code = nil
		typ = "api_error"
		if e.kind == errBadRequest {
			typ = "invalid_request_error"
		}
		if e.kind == errModelNotFound {
			msg = fmt.Sprintf("model '%s' not found", e.model)
		}
	default: // openai, lmstudio
		typ = map[errKind]string{
			errBadRequest: "invalid_request_error", errModelNotFound: "invalid_request_error",
			errServer: "server_error", errRateLimit: "rate_limit_error",
			errUnavailable: "server_error", errNotFound: "invalid_request_error",
		}[e.kind]
		code = map[errKind]any{
			errBadRequest: nil, errModelNotFound: "model_not_found",
			errServer: nil, errRateLimit: "rate_limit_exceeded",
			errUnavailable: nil, errNotFound: "unknown_url",
		}[e.kind]
		if e.kind == errModelNotFound {
			if backend == BackendLMStudio {
				msg = fmt.Sprintf("Model %q not found. Please specify a valid model.", e.model)
			} else {
				msg = fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", e.model)
			}
		}
	}
	var param any
	if e.param != "" && (backend == BackendOpenAI || backend == BackendLMStudio) {
		param = e.param
	}
	body := map[string]any{"error": map[string]any{
		"message": msg, "type": typ, "param": param, "code": code,
	}}
	b, _ := json.Marshal(body) // plain maps of strings and numbers always marshal
	return status, b
}

func (e apiError) status(backend string) int {
	switch e.kind {
	case errBadRequest:
		return http.StatusBadRequest
	case errModelNotFound:
		if backend == BackendLlamaCpp {
			return http.StatusBadRequest
		}
		return http.StatusNotFound
	case errRateLimit:
		return http.StatusTooManyRequests
	case errUnavailable:
		return http.StatusServiceUnavailable
	case errNotFound:
		return http.StatusNotFound
	}
	return http.StatusInternalServerError
}

// writeError sends e in the server's backend dialect. Ollama answers a
// route it does not have as its router does, in plain text.
func (s *Server) writeError(w http.ResponseWriter, e apiError) {
	if e.kind == errNotFound && s.cfg.Spec.Backend == BackendOllama {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("404 page not found"))
		return
	}
	status, body := errorReply(s.cfg.Spec.Backend, e)
	writeJSONBytes(w, status, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSONBytes(w, status, b)
}

func writeJSONBytes(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
