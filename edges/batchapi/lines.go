package batchapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"pitwall/gpu/chat"
	"pitwall/gpu/client"
	"pitwall/internal/textutil"
)

// The JSONL of the Batch API. A line of the input file:
//
//	{"custom_id": "...", "method": "POST", "url": "/v1/chat/completions", "body": {...}}
//
// and of the output and error files:
//
//	{"id": "...", "custom_id": "...", "response": {"status_code": 200, "body": {...}}, "error": null}
//	{"id": "...", "custom_id": "...", "response": null, "error": {"code": "batch_expired", "message": "..."}}

type inputLine struct {
	CustomID string          `json:"custom_id"`
	Method   string          `json:"method"`
	URL      string          `json:"url"`
	Body     json.RawMessage `json:"body"`
}

// encodeBatch renders lines as the JSONL of a batch input file. Custom ids
// must be set and unique: they are all that ties an answer to its request.
func encodeBatch(lines []client.BatchLine) ([]byte, error) {
	if len(lines) == 0 {
		return nil, errors.New("a batch needs at least one request")
	}
	seen := make(map[string]bool, len(lines))
	var buf bytes.Buffer
	for i, l := range lines {
		switch {
		case l.CustomID == "":
			return nil, fmt.Errorf("request %d has no custom_id", i+1)
		case seen[l.CustomID]:
			return nil, fmt.Errorf("custom_id %q is used twice", l.CustomID)
		}
		seen[l.CustomID] = true
		body, err := client.ChatBody(l.Request)
		if err != nil {
			return nil, fmt.Errorf("request %s: %w", l.CustomID, err)
		}
		b, err := json.Marshal(inputLine{CustomID: l.CustomID, Method: http.MethodPost,
			URL: chatEndpoint, Body: body})
		if err != nil {
			return nil, fmt.Errorf("request %s: %w", l.CustomID, err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}

// chatEndpoint is the endpoint pitwall's batches run.
const chatEndpoint = "/v1/chat/completions"

// eachLine hands each non-blank line of r to fn, numbered from 1. A line
// may be as long as a whole reply (maxLine, client.DefaultMaxReplyBytes when 0).
func eachLine(r io.Reader, maxLine int64, fn func(int, []byte) error) error {
	if maxLine <= 0 {
		maxLine = client.DefaultMaxReplyBytes
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), int(maxLine))
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if err := fn(n, line); err != nil {
			return err
		}
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return fmt.Errorf("line %d is longer than %s", n+1, textutil.ByteSize(maxLine))
	}
	return sc.Err()
}

func inputID(line []byte) (string, error) {
	var in inputLine
	if err := json.Unmarshal(line, &in); err != nil {
		return "", fmt.Errorf("not a batch request: %w", err)
	}
	if in.CustomID == "" {
		return "", errors.New("no custom_id")
	}
	return in.CustomID, nil
}

type resultLine struct {
	CustomID string `json:"custom_id"`
	Response *struct {
		StatusCode int             `json:"status_code"`
		Body       json.RawMessage `json:"body"`
	} `json:"response"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// notRun are the codes of an error line for a request the batch never ran.
var notRun = map[string]bool{"batch_expired": true, "batch_cancelled": true}

// decodeResult reads one line of an output or error file. ok is false for
// a request the batch never ran; err is set when the line is not one.
func (c *Client) decodeResult(line []byte) (client.BatchResult, bool, error) {
	var l resultLine
	if err := json.Unmarshal(line, &l); err != nil {
		return client.BatchResult{}, false, fmt.Errorf("not a batch result: %w", err)
	}
	if l.CustomID == "" {
		return client.BatchResult{}, false, errors.New("a batch result with no custom_id")
	}
	r := client.BatchResult{CustomID: l.CustomID, Result: chat.Result{Server: c.Server()}}
	switch {
	case l.Error != nil && notRun[l.Error.Code]:
		return r, false, nil
	case l.Error != nil:
		r.Err = c.c.ReportedError(lineErrorClass(l.Error.Code), l.Error.Code+": "+l.Error.Message)
	case l.Response == nil:
		r.Err = c.malformed("a batch result with neither response nor error")
	case l.Response.StatusCode < 200 || l.Response.StatusCode > 299:
		r.Err = c.c.StatusError(l.Response.StatusCode, l.Response.Body)
	default:
		res, err := completionResult(l.Response.Body)
		if err != nil {
			r.Err = c.malformed("batch answer: " + err.Error())
			break
		}
		res.Server = c.Server()
		r.Result = res
	}
	return r, true, nil
}

func (c *Client) malformed(msg string) *chat.Error {
	return &chat.Error{Class: chat.ClassMalformed, Server: c.Server(), Message: msg}
}

// lineErrorClass classes an error line by its code.
func lineErrorClass(code string) chat.ErrorClass {
	switch code {
	case "rate_limit_exceeded":
		return chat.ClassRateLimit
	case "server_error", "internal_error":
		return chat.ClassHTTP5xx
	}
	return chat.ClassHTTP4xx
}

// completion is the part of a non-streamed chat.completion pitwall reads;
// reasoning comes as reasoning_content or reasoning, as in streams.
type completion struct {
	Model   string `json:"model"`
	Choices []struct {
		Index        int    `json:"index"`
		FinishReason string `json:"finish_reason"`
		Message      struct {
			Content          *string `json:"content"`
			ReasoningContent string  `json:"reasoning_content"`
			Reasoning        string  `json:"reasoning"`
			ToolCalls        []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

func completionResult(body []byte) (chat.Result, error) {
	var c completion
	if err := json.Unmarshal(body, &c); err != nil {
		return chat.Result{}, err
	}
	res := chat.Result{Model: c.Model}
	if c.Usage != nil {
		res.PromptTokens, res.CompletionTokens = c.Usage.PromptTokens, c.Usage.CompletionTokens
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // pitwall asks for one choice
		}
		m := ch.Message
		if m.Content != nil {
			res.Content = *m.Content
		}
		res.Reasoning = m.ReasoningContent + m.Reasoning
		res.FinishReason = ch.FinishReason
		for _, tc := range m.ToolCalls {
			res.ToolCalls = append(res.ToolCalls, chat.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		return res, nil
	}
	return res, errors.New("no choice in the completion")
}
