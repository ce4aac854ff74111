// Package batchapi speaks a provider's Batch API (OpenAI's, and the
// simulator's openai backend): it uploads a batch's requests as a JSONL
// file, creates, finds, polls and cancels batches, and reads the answers
// out of their output and error files. A request the batch never ran is
// left out of the answers, for the caller to send again.
//
// It is an edge: it imports the core (gpu/client's Batch API calls and
// vocabulary, whose requests share the chat client's reply caps, error
// classification and scrubbing) and nothing of the core imports it. Its
// Client has the methods of the run engine's runner.BatchTransport; cli
// registers it (runner.RegisterBatchAPI), and judges with batch = true
// send through it.
package batchapi
