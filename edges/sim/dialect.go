package sim

import (
	"fmt"
	"strings"
)

// dialect is what one backend makes of the request fields that real
// servers treat differently, and how it signs its replies. Each entry
// follows the server's own source or documentation; where a server drops a
// field, the simulator drops it too, so that a client is tested against
// what it will meet:
//
//   - OpenAI honours tool_choice (a named function must be among the tools)
//     and n (1..128), serves GET /v1/models/{id}, signs replies with a
//     system_fingerprint "fp_…", and with include_usage sends "usage": null
//     on every chunk before the usage chunk.
//   - vLLM honours tool_choice and n; it serves GET /v1/models only, so
//     GET /v1/models/{id} is its 404; its system_fingerprint is null.
//   - llama-server reads tool_choice only as a string (auto, none,
//     required; an object falls back to "auto" with a warning in its log)
//     and serves n up to its parallel slots (more is a 400 asking for a
//     larger -np); no GET /v1/models/{id}.
//   - Ollama's OpenAI layer has no tool_choice, n or max_completion_tokens
//     field: all three are ignored (seen on v0.17.4; ollama/ollama#17921).
//     It serves GET /v1/models/{id} for ids without a slash, with the
//     model's namespace as owner; its fingerprint is "fp_ollama". Its
//     chunks carry role "assistant" on every delta (there is no separate
//     role chunk) and a tool call whole in one delta; a message beside tool
//     calls has content "" and its calls carry their index.
//   - LM Studio honours tool_choice as OpenAI does and ignores n; its
//     OpenAI-compatible API lists models but has no GET /v1/models/{id}.
//     (Less certain than the others: from its documentation, not its source.)
type dialect struct {
	toolChoice choicePolicy
	n          nPolicy
	retrieve   bool // serves GET /v1/models/{id}
	// maxCompletionTokens: reads max_completion_tokens beside max_tokens.
	maxCompletionTokens bool
	// ollamaChunks: role on every delta, whole tool calls, "" content and
	// indexed calls in a message (see above).
	ollamaChunks bool
}

// choicePolicy is how a backend reads tool_choice.
type choicePolicy int

const (
	choiceHonoured choicePolicy = iota // auto, none, required and a named function
	choiceStrings                      // auto, none, required; an object reads as auto
	choiceIgnored                      // not read at all: always auto
)

// nPolicy is how a backend reads n.
type nPolicy int

const (
	nChoices   nPolicy = iota // n choices, 1..maxN
	nUpToSlots                // n choices, 1..the server's slots
	nIgnored                  // one choice whatever n says
)

// maxN is the largest n OpenAI accepts.
const maxN = 128

func dialectOf(backend string) dialect {
	switch backend {
	case BackendVLLM:
		return dialect{toolChoice: choiceHonoured, n: nChoices, maxCompletionTokens: true}
	case BackendLlamaCpp:
		return dialect{toolChoice: choiceStrings, n: nUpToSlots, maxCompletionTokens: true}
	case BackendOllama:
		return dialect{toolChoice: choiceIgnored, n: nIgnored, retrieve: true, ollamaChunks: true}
	case BackendLMStudio:
		return dialect{toolChoice: choiceHonoured, n: nIgnored, maxCompletionTokens: true}
	}
	return dialect{toolChoice: choiceHonoured, n: nChoices, retrieve: true, maxCompletionTokens: true}
}

// choices checks the request's n and tool_choice against the backend and
// returns how many choices to answer with.
func (s *Server) choices(req *chatRequest) (int, *apiError) {
	d := dialectOf(s.cfg.Spec.Backend)
	if err := checkToolChoice(d, req); err != nil {
		return 0, err
	}
	if req.N == nil || d.n == nIgnored {
		return 1, nil
	}
	n := *req.N
	switch d.n {
	case nUpToSlots:
		if n > s.cfg.Slots {
			return 0, &apiError{kind: errBadRequest, message: "n_cmpl cannot be greater than the number of slots, please increase -np"}
		}
		if n < 1 {
			return 0, &apiError{kind: errBadRequest, message: fmt.Sprintf("n_cmpl must be at least 1, got %d", n)}
		}
	default:
		if n < 1 || n > maxN {
			return 0, &apiError{kind: errBadRequest, param: "n",
				message: fmt.Sprintf("Invalid 'n': %d is not between 1 and %d.", n, maxN)}
		}
	}
	return n, nil
}

// checkToolChoice refuses a tool_choice the backend would refuse: a string
// it does not know, or a named function that is not among the tools.
func checkToolChoice(d dialect, req *chatRequest) *apiError {
	if d.toolChoice == choiceIgnored {
		return nil
	}
	mode, fn := req.toolChoice()
	switch mode {
	case "auto", "none", "required":
		return nil
	case "function":
		if d.toolChoice == choiceStrings || req.tool(fn) != nil {
			return nil
		}
		return &apiError{kind: errBadRequest, param: "tool_choice",
			message: fmt.Sprintf("Invalid 'tool_choice': function %q is not among the tools offered.", fn)}
	}
	if d.toolChoice == choiceStrings {
		return &apiError{kind: errBadRequest, message: "Invalid tool_choice: " + mode}
	}
	return &apiError{kind: errBadRequest, param: "tool_choice",
		message: fmt.Sprintf("Invalid 'tool_choice': %q is not one of none, auto, required or a named function.", mode)}
}

// effectiveToolChoice is the tool_choice the backend acts on: "auto",
// "none", "required", or "function" with the named function.
func effectiveToolChoice(d dialect, req *chatRequest) (mode, fn string) {
	mode, fn = req.toolChoice()
	switch {
	case d.toolChoice == choiceIgnored:
		return "auto", ""
	case d.toolChoice == choiceStrings && mode == "function":
		return "auto", ""
	}
	return mode, fn
}

// systemFingerprint is what the backend puts in system_fingerprint: a
// string, or nil for a JSON null.
func (s *Server) systemFingerprint(model string) any {
	switch s.cfg.Spec.Backend {
	case BackendOpenAI:
		return fmt.Sprintf("fp_%010x", hashString(s.cfg.Name+"/"+model)&0xffffffffff)
	case BackendOllama:
		return "fp_ollama"
	case BackendLlamaCpp:
		return "b6000-" + digest(s.cfg.Name)[:8] // llama.cpp's build number and commit
	case BackendLMStudio:
		return model
	}
	return nil
}

// ownedBy is the owned_by of a model in the backend's model list.
func ownedBy(backend, model string) string {
	switch backend {
	case BackendLMStudio:
		return "organization_owner"
	case BackendOllama:
		return ollamaNamespace(model)
	case BackendLlamaCpp:
		return "llamacpp"
	case BackendVLLM:
		return "vllm"
	}
	return "system"
}

// ollamaNamespace is the namespace of an Ollama model name
// ([host/][namespace/]model[:tag]): "library" when it names none.
func ollamaNamespace(name string) string {
	parts := strings.Split(name, "/")
	if len(parts) < 2 {
		return "library"
	}
	return parts[len(parts)-2]
}
