package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// postChat sends r as a streamed chat completion as go-openai's
// CreateChatCompletionStream would (its reasoning-model checks, its URL and
// headers, its errors for a non-2xx reply), but with the body encoded by
// encodeChatBody, which puts temp on the wire, 0 included (go-openai drops
// it). Two things differ: a model named as one of OpenAI's retired
// completion models (davinci, ada, text-davinci-003...) is sent, where
// go-openai refused it unsent (a local server may call a model anything),
// and a 3xx reply is an error, where go-openai read it as a stream. A 2xx response is returned open:
// its body, as the hook transport wraps it, is cl.body. The caller closes
// it.
//
// go-openai is not asked to send it: its request type cannot carry a
// temperature of 0, and sseLines reads the stream itself.
func (c *Client) postChat(ctx context.Context, cl *callInfo, r *openai.ChatCompletionRequest, temp *float64) (*http.Response, error) {
	r.Stream = true
	if err := openai.NewReasoningValidator().Validate(*r); err != nil {
		return nil, err
	}
	body, err := encodeChatBody(r, temp)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(withCall(ctx, cl), http.MethodPost, c.chatURL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	req.Header.Set("Connection", "keep-alive")
	if c.cfg.APIKey != "" { // Bearer only when the key is not empty, as go-openai
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	// Anything but a 2xx is an error, a 3xx too: a redirect the client did
	// not follow (no Location, a 300, a 304) has no stream to read (the
	// hook keeps 2xx bodies only), where go-openai took it for one.
	if resp.StatusCode < http.StatusOK || resp.StatusCode >= http.StatusMultipleChoices {
		defer func() { _ = resp.Body.Close() }()
		return nil, errorReply(resp)
	}
	return resp, nil
}

// errorReply is the error of a non-2xx reply, as go-openai makes it: an
// *openai.APIError where the body is OpenAI's {"error": {...}}, an
// *openai.RequestError holding the body otherwise (classify reads both).
func errorReply(resp *http.Response) error {
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("error, reading response body: %w", err)
	}
	var er openai.ErrorResponse
	err = json.Unmarshal(body, &er)
	if err != nil || er.Error == nil {
		re := &openai.RequestError{HTTPStatus: resp.Status, HTTPStatusCode: resp.StatusCode, Err: err, Body: body}
		if er.Error != nil {
			re.Err = er.Error
		}
		return re
	}
	er.Error.HTTPStatus, er.Error.HTTPStatusCode = resp.Status, resp.StatusCode
	return er.Error
}

// chatURL is where base's chat completions are posted, as go-openai joins
// them (the hook transport adds the base URL's query).
func chatURL(base string) string {
	return strings.TrimRight(base, "/") + "/chat/completions"
}
