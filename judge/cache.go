package judge

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"pitwall/gpu/chat"
	"pitwall/internal/textutil"
	"strconv"
)

// KeyInput is everything that decides a judge's answer to one sample, and so
// everything a cached verdict must match to be reused.
type KeyInput struct {
	BaseURL         string // the provider, so two servers' same-named models stay apart
	Model           string
	TemplateID      string
	TemplateVersion string
	TemplateHash    string
	Temperature     float64
	MaxTokens       int
	Seed            int
	Sample          int // the sample's index among k: each sample is its own vote
	Input           Input
}

// cacheKeyVersion changes when the key's encoding does, so that old keys
// stop matching rather than match the wrong thing.
const cacheKeyVersion = "pitwall-judge-cache-v2"

// CacheKey is the hex SHA-256 of every field of k. Each field is written with
// its length before it, so no two different inputs encode the same; tools
// are written as JSON (object keys sorted), and the candidate as the judge
// reads it (RenderCandidate), so a change to how it is neutralised is a
// change of key.
func CacheKey(k KeyInput) string {
	h := sha256.New()
	for _, f := range []string{
		cacheKeyVersion,
		k.BaseURL, k.Model, k.TemplateID, k.TemplateVersion, k.TemplateHash,
		strconv.FormatFloat(k.Temperature, 'g', -1, 64),
		strconv.Itoa(k.MaxTokens), strconv.Itoa(k.Seed), strconv.Itoa(k.Sample),
		k.Input.System, k.Input.Prompt, toolsJSON(k.Input.Tools),
		k.Input.candidateText(), k.Input.Criteria, k.Input.Reference,
	} {
		writeField(h, f)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func writeField(h hash.Hash, s string) {
	fmt.Fprintf(h, "%d:", len(s))
	h.Write([]byte(s))
}

// toolsJSON writes no tools (nil or empty) the same way.
func toolsJSON(tools []chat.Tool) string {
	if len(tools) == 0 {
		return ""
	}
	return textutil.JSON(tools)
}
