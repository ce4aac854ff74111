package client

import (
	"encoding/json"
	"errors"
	"fmt"

	"pitwall/gpu/chat"

	openai "github.com/sashabaranov/go-openai"
)

// toOpenAI translates a chat.Request into go-openai's request. Temperature is left
// out on purpose: go-openai drops 0 (omitempty), so encodeChatBody writes it
// onto the wire instead (chatBody, wire_body.go).
func toOpenAI(r chat.Request) (openai.ChatCompletionRequest, error) {
	if r.Model == "" {
		return openai.ChatCompletionRequest{}, errors.New("request names no model")
	}
	out := openai.ChatCompletionRequest{
		Model:         r.Model,
		Messages:      make([]openai.ChatCompletionMessage, 0, len(r.Messages)),
		Seed:          r.Seed,
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
		ToolChoice:    r.ToolChoice,
	}
	//lint:ignore SA1019 local servers (Ollama, llama.cpp, vLLM) read max_tokens only; reasoning models get max_completion_tokens below
	out.MaxTokens = r.MaxTokens
	for _, m := range r.Messages {
		om := openai.ChatCompletionMessage{Role: m.Role, Content: m.Content, Name: m.Name, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			om.ToolCalls = append(om.ToolCalls, openai.ToolCall{
				ID: tc.ID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: tc.Name, Arguments: tc.Arguments},
			})
		}
		out.Messages = append(out.Messages, om)
	}
	for _, t := range r.Tools {
		typ := t.Type
		if typ == "" {
			typ = string(openai.ToolTypeFunction)
		}
		params := t.Function.Parameters
		if params == nil {
			// go-openai would send "parameters": null, which llama.cpp and
			// some vLLM versions reject; an empty object schema means the same.
			params = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		out.Tools = append(out.Tools, openai.Tool{
			Type: openai.ToolType(typ),
			Function: &openai.FunctionDefinition{
				Name: t.Function.Name, Description: t.Function.Description, Parameters: params,
			},
		})
	}
	if rf := r.ResponseFormat; rf != nil {
		f, err := toOpenAIFormat(rf)
		if err != nil {
			return openai.ChatCompletionRequest{}, err
		}
		out.ResponseFormat = f
	}
	// OpenAI's reasoning models refuse max_tokens (and go-openai refuses to
	// send it to them); local servers understand max_tokens only.
	if errors.Is(openai.NewReasoningValidator().Validate(out), openai.ErrReasoningModelMaxTokensDeprecated) {
		//lint:ignore SA1019 moving the deprecated field's value to its successor
		out.MaxCompletionTokens, out.MaxTokens = out.MaxTokens, 0
	}
	return out, nil
}

func toOpenAIFormat(rf *chat.ResponseFormat) (*openai.ChatCompletionResponseFormat, error) {
	switch rf.Type {
	case "", "text":
		return &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeText}, nil
	case "json_object":
		return &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}, nil
	case "json_schema":
		schema, err := json.Marshal(rf.Schema)
		if err != nil {
			return nil, fmt.Errorf("response_format schema: %w", err)
		}
		name := rf.Name
		if name == "" {
			name = "response" // OpenAI requires a name; local servers ignore it
		}
		return &openai.ChatCompletionResponseFormat{
			Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
				Name: name, Schema: json.RawMessage(schema), Strict: rf.Strict,
			},
		}, nil
	}
	return nil, fmt.Errorf("response_format type %q is not text, json_object or json_schema", rf.Type)
}

// streamChunk is one streamed chat.completion.chunk. pitwall decodes chunks itself
// rather than through go-openai's type so that it also reads the "reasoning"
// delta (Ollama, newer vLLM) next to "reasoning_content" (llama.cpp, LM Studio,
// DeepSeek), and decodes no fields it does not use.
type streamChunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Index        int    `json:"index"`
		FinishReason string `json:"finish_reason"`
		Delta        struct {
			Content          string          `json:"content"`
			ReasoningContent string          `json:"reasoning_content"`
			Reasoning        string          `json:"reasoning"`
			ToolCalls        []toolCallDelta `json:"tool_calls"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

type toolCallDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// toolCallAcc assembles streamed tool calls: each delta names the call it
// continues by index; its name and id come once, its arguments in pieces.
type toolCallAcc struct {
	calls []chat.ToolCall
	index map[int]int // delta index -> position in calls
}

func (t *toolCallAcc) add(d toolCallDelta) {
	pos := -1
	switch {
	case d.Index != nil:
		if p, ok := t.index[*d.Index]; ok {
			pos = p
		}
	case d.ID != "":
		// Some servers leave out index: an id names the call instead...
		for i := range t.calls {
			if t.calls[i].ID == d.ID {
				pos = i
			}
		}
	case len(t.calls) > 0:
		// ...and a delta with neither continues the last call.
		pos = len(t.calls) - 1
	}
	if pos < 0 {
		pos = len(t.calls)
		t.calls = append(t.calls, chat.ToolCall{})
		if d.Index != nil {
			if t.index == nil {
				t.index = make(map[int]int)
			}
			t.index[*d.Index] = pos
		}
	}
	c := &t.calls[pos]
	if c.ID == "" {
		c.ID = d.ID
	}
	if c.Name == "" {
		c.Name = d.Function.Name
	}
	c.Arguments += d.Function.Arguments
}
