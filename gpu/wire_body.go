package gpu

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

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
	dst = appendJSONString(dst, r.Model)
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
	dst = appendJSONString(dst, m.Role)
	if m.Content != "" {
		dst = append(dst, `,"content":`...)
		dst = appendJSONString(dst, m.Content)
	}
	if m.Name != "" {
		dst = append(dst, `,"name":`...)
		dst = appendJSONString(dst, m.Name)
	}
	if len(m.ToolCalls) > 0 {
		var err error
		if dst, err = appendField(dst, "tool_calls", m.ToolCalls); err != nil {
			return nil, err
		}
	}
	if m.ToolCallID != "" {
		dst = append(dst, `,"tool_call_id":`...)
		dst = appendJSONString(dst, m.ToolCallID)
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

const hexDigits = "0123456789abcdef"

// appendJSONString appends s quoted as encoding/json quotes a string: <, >
// and & escaped (HTML-safe), control characters as \n, \r, \t, \b, \f or
// \u00XX, invalid UTF-8 as \ufffd, and U+2028 and U+2029 escaped.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
