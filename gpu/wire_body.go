package gpu

import (
	"encoding/json"
	"strconv"

	"pitwall/gpu/chat"

	openai "github.com/sashabaranov/go-openai"
)

// appendChatBody appends the JSON body of r to dst: the bytes go-openai's
// json.Marshal writes for it, with "temperature" first when temp is set
// (go-openai drops 0: omitempty). It writes the fields toOpenAI sets, in
// go-openai's order; the everyday ones (model, messages, max_tokens, seed,
// stream) by hand, since go-openai's reflection, each message's own
// MarshalJSON and the compaction after it were most of what a request cost
// this process to send; tools, tool_choice, response_format and tool calls,
// which few requests carry, through encoding/json. TestChatBodyIsGoOpenAIs
// holds it to go-openai's bytes.
func appendChatBody(dst []byte, r *openai.ChatCompletionRequest, temp *float64) ([]byte, error) {
	dst = append(dst, '{')
	if temp != nil {
		dst = append(dst, `"temperature":`...)
		dst = strconv.AppendFloat(dst, *temp, 'g', -1, 64)
		dst = append(dst, ',')
	}
	dst = append(dst, `"model":`...)
	dst = chat.AppendJSONString(dst, r.Model)
	dst = append(dst, `,"messages":`...)
	if r.Messages == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i := range r.Messages {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendMessage(dst, &r.Messages[i]); err != nil {
				return nil, err
			}
		}
		dst = append(dst, ']')
	}
	//lint:ignore SA1019 local servers read max_tokens only (toOpenAI)
	if n := r.MaxTokens; n != 0 {
		dst = append(dst, `,"max_tokens":`...)
		dst = strconv.AppendInt(dst, int64(n), 10)
	}
	if n := r.MaxCompletionTokens; n != 0 {
		dst = append(dst, `,"max_completion_tokens":`...)
		dst = strconv.AppendInt(dst, int64(n), 10)
	}
	dst = append(dst, `,"stream":`...)
	dst = strconv.AppendBool(dst, r.Stream)
	var err error
	if r.ResponseFormat != nil {
		if dst, err = appendField(dst, "response_format", r.ResponseFormat); err != nil {
			return nil, err
		}
	}
	if r.Seed != nil {
		dst = append(dst, `,"seed":`...)
		dst = strconv.AppendInt(dst, int64(*r.Seed), 10)
	}
	if len(r.Tools) > 0 {
		if dst, err = appendField(dst, "tools", r.Tools); err != nil {
			return nil, err
		}
	}
	if r.ToolChoice != nil {
		if dst, err = appendField(dst, "tool_choice", r.ToolChoice); err != nil {
			return nil, err
		}
	}
	if o := r.StreamOptions; o != nil {
		dst = append(dst, `,"stream_options":{`...)
		if o.IncludeUsage {
			dst = append(dst, `"include_usage":true`...)
		}
		dst = append(dst, '}')
	}
	return append(dst, '}'), nil
}

// appendMessage appends m as go-openai's MarshalJSON writes it: a message
// of the fields toOpenAI sets by hand; any other (parts, a refusal,
// reasoning, a function call) by go-openai.
func appendMessage(dst []byte, m *openai.ChatCompletionMessage) ([]byte, error) {
	if m.MultiContent != nil || m.Refusal != "" || m.ReasoningContent != "" || m.FunctionCall != nil {
		b, err := json.Marshal(m) // go-openai's own, and its refusals
		if err != nil {
			return nil, err
		}
		return append(dst, b...), nil
	}
	dst = append(dst, `{"role":`...)
	dst = chat.AppendJSONString(dst, m.Role)
	if m.Content != "" {
		dst = append(dst, `,"content":`...)
		dst = chat.AppendJSONString(dst, m.Content)
	}
	if m.Name != "" {
		dst = append(dst, `,"name":`...)
		dst = chat.AppendJSONString(dst, m.Name)
	}
	if len(m.ToolCalls) > 0 {
		var err error
		if dst, err = appendField(dst, "tool_calls", m.ToolCalls); err != nil {
			return nil, err
		}
	}
	if m.ToolCallID != "" {
		dst = append(dst, `,"tool_call_id":`...)
		dst = chat.AppendJSONString(dst, m.ToolCallID)
	}
	return append(dst, '}'), nil
}

// appendField appends ,"key": and v as encoding/json writes it.
func appendField(dst []byte, key string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dst = append(dst, ',', '"')
	dst = append(dst, key...)
	dst = append(dst, '"', ':')
	return append(dst, b...), nil
}
