package sim

import (
	"context"
	"errors"
	"io"
	"net/http"
	"pitwall/gpu/simspec"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// go-openai is what pitwall's client is built on: what the raw tests check
// byte by byte must also read cleanly through it, for every backend.

func openaiClient(t *testing.T, s *Server) *openai.Client {
	cfg := openai.DefaultConfig("sk-sim")
	cfg.BaseURL = s.URL()
	cfg.HTTPClient = client(t)
	return openai.NewClientWithConfig(cfg)
}

func TestGoOpenAIReadsStreamsAndToolCalls(t *testing.T) {
	for _, backend := range []string{BackendOpenAI, BackendLMStudio, BackendOllama, BackendLlamaCpp, BackendVLLM} {
		t.Run(backend, func(t *testing.T) {
			cfg := instant("m")
			cfg.Spec.Backend = backend
			cfg.Catalog = map[string]simspec.Model{"m": {Skill: 1}}
			cfg.Answers = map[string]Answer{"Weather in Oslo?": {ToolName: "get_weather", ToolArgs: map[string]any{"city": "Oslo"}}}
			s := start(t, cfg)
			c := openaiClient(t, s)
			ctx := context.Background()
			stream, err := c.CreateChatCompletionStream(ctx, openai.ChatCompletionRequest{
				Model:         "m",
				Messages:      []openai.ChatCompletionMessage{{Role: "user", Content: "Weather in Oslo?"}},
				Tools:         []openai.Tool{{Type: "function", Function: &openai.FunctionDefinition{Name: "get_weather"}}},
				ToolChoice:    "required",
				Stream:        true,
				StreamOptions: &openai.StreamOptions{IncludeUsage: true},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer stream.Close()
			var name, args, finish string
			var usage *openai.Usage
			for {
				r, err := stream.Recv()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if r.Usage != nil {
					usage = r.Usage
				}
				for _, ch := range r.Choices {
					for _, tc := range ch.Delta.ToolCalls {
						name += tc.Function.Name
						args += tc.Function.Arguments
					}
					if ch.FinishReason != "" {
						finish = string(ch.FinishReason)
					}
				}
			}
			if name != "get_weather" || args != `{"city":"Oslo"}` || finish != "tool_calls" || usage == nil || usage.CompletionTokens == 0 {
				t.Errorf("call %s(%s), finish %q, usage %+v", name, args, finish, usage)
			}
		})
	}
}

func TestGoOpenAIReadsEveryErrorBody(t *testing.T) {
	for _, backend := range []string{BackendOpenAI, BackendLMStudio, BackendOllama, BackendLlamaCpp, BackendVLLM} {
		t.Run(backend, func(t *testing.T) {
			cfg := instant("m")
			cfg.Spec.Backend = backend
			s := start(t, cfg)
			_, err := openaiClient(t, s).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
				Model: "nope", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}},
			})
			var apiErr *openai.APIError
			if !errors.As(err, &apiErr) || apiErr.Message == "" || apiErr.HTTPStatusCode < 400 {
				t.Fatalf("error %#v", err)
			}
			if want := map[string]int{BackendLlamaCpp: http.StatusBadRequest}[backend]; want != 0 && apiErr.HTTPStatusCode != want {
				t.Errorf("status %d", apiErr.HTTPStatusCode)
			}
		})
	}
}
