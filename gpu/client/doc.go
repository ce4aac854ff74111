// Package client is pitwall's OpenAI-compatible client: chat completions
// streamed over SSE, the model list, and the Batch API's files and batches,
// all in go-openai's types and, but for the chat body, through go-openai's
// client. The chat body is go-openai's request marshalled by encoding/json
// with pitwall's temperature beside it, so that a temperature of 0 is on the
// wire (go-openai's omitempty would drop it).
//
// A Client reads a reply under caps (max_reply_bytes, first-byte and stall
// limits), tells a prompt an Ollama cut silently (its context lengths, read
// through gpu/probe), and classifies every failure once into a *chat.Error
// with the server's name and every credential masked (internal/redact).
// It holds no fleet state: one Client talks to one server, and the fleet
// (gpu) decides what to send where.
package client
