package client

import (
	"time"

	"pitwall/gpu/chat"
)

// The vocabulary of a provider's Batch API: a provider runs many chat
// requests within a completion window, at a lower price, and answers them
// in files. A Client makes the Batch API's calls (batches.go); the protocol
// over them (the JSONL going in and out, polling, finding a batch again) is
// an edge (edges/batchapi); the run engine reads these types and the fleet
// says which servers may offer one (gpu.Fleet.BatchClient).

// BatchStatus is where a batch stands, as the provider names it.
type BatchStatus string

const (
	BatchValidating BatchStatus = "validating"
	BatchInProgress BatchStatus = "in_progress"
	BatchFinalizing BatchStatus = "finalizing"
	BatchCompleted  BatchStatus = "completed"
	BatchFailed     BatchStatus = "failed"
	BatchExpired    BatchStatus = "expired"
	BatchCancelling BatchStatus = "cancelling"
	BatchCancelled  BatchStatus = "cancelled"
)

// Ended reports whether the batch will change no more: completed, or
// failed, expired or cancelled (each of which may have answered some of its
// requests before it ended).
func (s BatchStatus) Ended() bool {
	switch s {
	case BatchCompleted, BatchFailed, BatchExpired, BatchCancelled:
		return true
	}
	return false
}

// DefaultBatchWindow is the completion window asked for: the only one
// OpenAI offers.
const DefaultBatchWindow = "24h"

// Batch is a provider's batch as last seen.
type Batch struct {
	ID           string
	Status       BatchStatus
	InputFileID  string
	OutputFileID string // "" until there is one
	ErrorFileID  string
	Window       string
	Total        int // requests in it
	Completed    int
	Failed       int
	Metadata     map[string]string
	CreatedAt    time.Time
	// Errors says why a failed batch failed (its input refused, say),
	// credentials masked.
	Errors []string
}

// BatchLine is one request of a batch. CustomID names it in the results; it
// must be unique within the batch.
type BatchLine struct {
	CustomID string
	Request  chat.Request
}

// BatchResult is the answer to one request of a batch: a result, or the
// request's own failure (Err, a *chat.Error classed by the status the
// provider gave it).
type BatchResult struct {
	CustomID string
	Result   chat.Result
	Err      error
}

// BatchPoll paces the wait for a batch to end: the first look after Min,
// each next one twice as late up to Max while nothing changes, back to Min
// when the status moves. Failures is how many looks in a row may fail
// transiently before the wait gives up (default 5).
type BatchPoll struct {
	Min, Max time.Duration
	Failures int
}
