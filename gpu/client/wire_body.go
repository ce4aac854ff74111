package client

import (
	"encoding/json"

	openai "github.com/sashabaranov/go-openai"
)

// chatBody is a chat request as it goes on the wire: go-openai's request,
// encoded by encoding/json, with the temperature pitwall sets in place of
// go-openai's own field, whose omitempty drops 0. The outer field is the
// shallower one, so encoding/json writes it and leaves the inner one out.
type chatBody struct {
	Temperature *float64 `json:"temperature,omitempty"`
	*openai.ChatCompletionRequest
}

// encodeChatBody is r's body with temp on the wire, 0 included.
func encodeChatBody(r *openai.ChatCompletionRequest, temp *float64) ([]byte, error) {
	return json.Marshal(chatBody{Temperature: temp, ChatCompletionRequest: r})
}
