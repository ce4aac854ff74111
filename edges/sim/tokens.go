package sim

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// maxTokenRunes caps a simulated token without spaces, so that JSON and
// long words count as several tokens, as with a real tokenizer.
const maxTokenRunes = 6

// nextToken returns the byte length of the first simulated token of s: the
// spaces before a word, then up to maxTokenRunes runes of it.
func nextToken(s string) int {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			break
		}
		i += n
	}
	for runes := 0; i < len(s) && runes < maxTokenRunes; runes++ {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			break
		}
		i += n
	}
	return i
}

// splitTokens cuts s into simulated tokens; joined, they give s back.
func splitTokens(s string) []string {
	var out []string
	for len(s) > 0 {
		n := nextToken(s)
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// countTokens is len(splitTokens(s)) without the slice.
func countTokens(s string) int {
	c := 0
	for len(s) > 0 {
		s = s[nextToken(s):]
		c++
	}
	return c
}

// promptTokens estimates a request's prompt size: its messages with a few
// tokens of chat template each, and its tool definitions.
func promptTokens(req *chatRequest) int {
	n := 3
	for _, m := range req.Messages {
		n += 4 + countTokens(m.text)
		for _, c := range m.ToolCalls {
			n += 1 + countTokens(c.Function.Arguments)
		}
	}
	for _, t := range req.Tools {
		n += 10 + countTokens(t.Function.Name) + countTokens(t.Function.Description) + 4*len(t.Function.Parameters)
	}
	return n
}

// requestHash identifies a request for the reply's PRNG: model, messages,
// seeds and temperature. Equal requests get equal replies.
func requestHash(model string, req *chatRequest, serverSeed int64) uint64 {
	h := fnv.New64a()
	var buf [8]byte
	write := func(s string) {
		_, _ = h.Write([]byte(s)) // hash.Hash writes never fail
		_, _ = h.Write([]byte{0})
	}
	write(model)
	for _, m := range req.Messages {
		write(m.Role)
		write(m.text)
		write(m.ToolCallID)
		for _, c := range m.ToolCalls {
			write(c.Function.Name)
			write(c.Function.Arguments)
		}
	}
	binary.LittleEndian.PutUint64(buf[:], uint64(serverSeed))
	_, _ = h.Write(buf[:])
	if req.Seed != nil {
		write("seed=" + strconv.FormatInt(*req.Seed, 10))
	}
	if req.Temperature != nil {
		binary.LittleEndian.PutUint64(buf[:], math.Float64bits(*req.Temperature))
		_, _ = h.Write(buf[:])
	}
	return h.Sum64()
}

// splitmix64 spreads a seed's bits; it derives independent PRNG streams.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// newRand is a PRNG determined by h.
func newRand(h uint64) *rand.Rand {
	return rand.New(rand.NewPCG(h, splitmix64(h)))
}

// unit maps a seed to [0,1).
func unit(x uint64) float64 {
	return float64(splitmix64(x)>>11) / (1 << 53)
}
