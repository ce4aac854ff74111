package ollama

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
)

// A minimal GGUF v3 writer, enough for a tiny LLaMA-architecture model that
// Ollama v0.17.4 creates, loads (through its llama.cpp runner) and samples
// from. Format: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md
//
//	magic "GGUF", version u32, tensor count u64, kv count u64,
//	kv*: key (u64 len + bytes), value type u32, value,
//	tensor info*: name, n_dims u32, ne[n_dims] u64 (innermost first), type u32, offset u64,
//	padding to general.alignment (32), tensor data (each tensor aligned).

// GGUF metadata value types.
const (
	ggufUint32  = 4
	ggufInt32   = 5
	ggufFloat32 = 6
	ggufBool    = 7
	ggufString  = 8
	ggufArray   = 9
)

// ggml tensor types.
const ggmlF32 = 0

// llama.cpp token types (tokenizer.ggml.token_type).
const (
	tokNormal  = 1
	tokUnknown = 2
	tokControl = 3
	tokByte    = 6
)

const ggufAlignment = 32

// tinyModel describes the random model to write.
type tinyModel struct {
	Name    string
	Seed    uint64 // different seeds give different files, hence different Ollama blobs
	Embd    int    // embedding width
	Heads   int
	HeadsKV int
	Layers  int
	FF      int // feed-forward width
	Ctx     int // llama.context_length
}

func defaultTinyModel(name string, seed uint64) tinyModel {
	return tinyModel{Name: name, Seed: seed, Embd: 64, Heads: 4, HeadsKV: 4, Layers: 2, FF: 128, Ctx: 256}
}

// tinyVocab is a SentencePiece ("llama") vocabulary: <unk> <s> </s>, the 256
// byte tokens llama.cpp's SPM tokenizer falls back to (it throws without
// them), and a few hundred word pieces so that replies are made of words.
func tinyVocab() (tokens []string, scores []float32, types []int32) {
	add := func(t string, score float32, typ int32) {
		tokens = append(tokens, t)
		scores = append(scores, score)
		types = append(types, typ)
	}
	add("<unk>", 0, tokUnknown)
	add("<s>", 0, tokControl)
	add("</s>", 0, tokControl)
	for b := 0; b < 256; b++ {
		add(fmt.Sprintf("<0x%02X>", b), 0, tokByte)
	}
	seen := map[string]bool{}
	piece := func(p string) {
		if !seen[p] {
			seen[p] = true
			add(p, -float32(len(seen)), tokNormal)
		}
	}
	words := []string{
		"the", "a", "is", "of", "to", "and", "in", "it", "you", "that", "for", "on", "with", "as",
		"are", "be", "this", "was", "have", "or", "by", "not", "what", "all", "were", "we", "when",
		"your", "can", "said", "there", "use", "an", "each", "which", "she", "do", "how", "their",
		"if", "will", "up", "other", "about", "out", "many", "then", "them", "these", "so", "some",
		"her", "would", "make", "like", "him", "into", "time", "has", "look", "two", "more", "write",
		"go", "see", "number", "no", "way", "could", "people", "my", "than", "first", "water",
		"been", "call", "who", "oil", "its", "now", "find", "long", "down", "day", "did", "get",
		"come", "made", "may", "part", "Paris", "Tokyo", "weather", "red", "green", "blue", "yes",
		"answer", "model", "tool", "JSON", "pit", "wall",
	}
	for _, w := range words {
		piece("\u2581" + w)
		piece(w)
	}
	for c := 'a'; c <= 'z'; c++ {
		piece(string(c))
	}
	for _, p := range []string{"\u2581", ".", ",", "!", "?", ":", "\"", "{", "}", "[", "]", "0", "1", "2", "3"} {
		piece(p)
	}
	return tokens, scores, types
}

type ggufWriter struct {
	w   *bufio.Writer
	err error
}

func (g *ggufWriter) put(v any) {
	if g.err == nil {
		g.err = binary.Write(g.w, binary.LittleEndian, v)
	}
}

func (g *ggufWriter) str(s string) {
	g.put(uint64(len(s)))
	if g.err == nil {
		_, g.err = g.w.WriteString(s)
	}
}

type kv struct {
	key string
	val any // uint32, int32, float32, bool, string, []string, []float32, []int32
}

func (g *ggufWriter) kv(k kv) {
	g.str(k.key)
	switch v := k.val.(type) {
	case uint32:
		g.put(uint32(ggufUint32))
		g.put(v)
	case int32:
		g.put(uint32(ggufInt32))
		g.put(v)
	case float32:
		g.put(uint32(ggufFloat32))
		g.put(v)
	case bool:
		g.put(uint32(ggufBool))
		g.put(v)
	case string:
		g.put(uint32(ggufString))
		g.str(v)
	case []string:
		g.put(uint32(ggufArray))
		g.put(uint32(ggufString))
		g.put(uint64(len(v)))
		for _, s := range v {
			g.str(s)
		}
	case []float32:
		g.put(uint32(ggufArray))
		g.put(uint32(ggufFloat32))
		g.put(uint64(len(v)))
		g.put(v)
	case []int32:
		g.put(uint32(ggufArray))
		g.put(uint32(ggufInt32))
		g.put(uint64(len(v)))
		g.put(v)
	default:
		g.err = fmt.Errorf("gguf: unsupported value %T for %s", v, k.key)
	}
}

type tensor struct {
	name string
	ne   []uint64 // innermost dimension first, as GGUF stores it
	data []float32
}

func padLen(n, align int64) int64 { return (align - n%align) % align }

// writeTinyGGUF writes m to path as GGUF v3 with F32 tensors.
func writeTinyGGUF(path string, m tinyModel) error {
	tokens, scores, types := tinyVocab()
	nVocab := len(tokens)
	rng := rand.New(rand.NewPCG(m.Seed, 0x9e3779b97f4a7c15))
	randn := func(n int, std float64) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = float32(rng.NormFloat64() * std)
		}
		return out
	}
	ones := func(n int) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = 1
		}
		return out
	}
	e, ff, kvDim := m.Embd, m.FF, m.Embd/m.Heads*m.HeadsKV
	tensors := []tensor{{"token_embd.weight", []uint64{uint64(e), uint64(nVocab)}, randn(e*nVocab, 1)}}
	for l := 0; l < m.Layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		w := 1 / math.Sqrt(float64(e))
		tensors = append(tensors,
			tensor{p + "attn_norm.weight", []uint64{uint64(e)}, ones(e)},
			tensor{p + "attn_q.weight", []uint64{uint64(e), uint64(e)}, randn(e*e, w)},
			tensor{p + "attn_k.weight", []uint64{uint64(e), uint64(kvDim)}, randn(e*kvDim, w)},
			tensor{p + "attn_v.weight", []uint64{uint64(e), uint64(kvDim)}, randn(e*kvDim, w)},
			tensor{p + "attn_output.weight", []uint64{uint64(e), uint64(e)}, randn(e*e, w)},
			tensor{p + "ffn_norm.weight", []uint64{uint64(e)}, ones(e)},
			tensor{p + "ffn_gate.weight", []uint64{uint64(e), uint64(ff)}, randn(e*ff, w)},
			tensor{p + "ffn_up.weight", []uint64{uint64(e), uint64(ff)}, randn(e*ff, w)},
			tensor{p + "ffn_down.weight", []uint64{uint64(ff), uint64(e)}, randn(ff*e, 1/math.Sqrt(float64(ff)))},
		)
	}
	// The output projection: word pieces get large random rows, so that their
	// logits (about ±8 after the final RMS norm) dwarf those of the control
	// and byte tokens, whose rows are zero. A greedy reply is then words, not
	// stray bytes that are not UTF-8, and rarely an immediate </s>.
	out := make([]float32, e*nVocab)
	for t := 0; t < nVocab; t++ {
		if types[t] != tokNormal {
			continue
		}
		for i := 0; i < e; i++ {
			out[t*e+i] = float32(rng.NormFloat64())
		}
	}
	tensors = append(tensors,
		tensor{"output_norm.weight", []uint64{uint64(e)}, ones(e)},
		tensor{"output.weight", []uint64{uint64(e), uint64(nVocab)}, out},
	)

	kvs := []kv{
		{"general.architecture", "llama"},
		{"general.name", m.Name},
		{"general.file_type", uint32(0)}, // ALL_F32
		{"general.alignment", uint32(ggufAlignment)},
		{"llama.vocab_size", uint32(nVocab)},
		{"llama.context_length", uint32(m.Ctx)},
		{"llama.embedding_length", uint32(e)},
		{"llama.block_count", uint32(m.Layers)},
		{"llama.feed_forward_length", uint32(ff)},
		{"llama.attention.head_count", uint32(m.Heads)},
		{"llama.attention.head_count_kv", uint32(m.HeadsKV)},
		{"llama.attention.layer_norm_rms_epsilon", float32(1e-5)},
		{"llama.rope.dimension_count", uint32(e / m.Heads)},
		{"llama.rope.freq_base", float32(10000)},
		{"tokenizer.ggml.model", "llama"},
		{"tokenizer.ggml.tokens", tokens},
		{"tokenizer.ggml.scores", scores},
		{"tokenizer.ggml.token_type", types},
		{"tokenizer.ggml.bos_token_id", uint32(1)},
		{"tokenizer.ggml.eos_token_id", uint32(2)},
		{"tokenizer.ggml.unknown_token_id", uint32(0)},
		{"tokenizer.ggml.add_bos_token", true},
		{"tokenizer.ggml.add_eos_token", false},
	}

	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	cw := &countingWriter{w: f}
	g := &ggufWriter{w: bufio.NewWriter(cw)}
	g.put([]byte("GGUF"))
	g.put(uint32(3))
	g.put(uint64(len(tensors)))
	g.put(uint64(len(kvs)))
	for _, k := range kvs {
		g.kv(k)
	}
	var offset int64
	for _, t := range tensors {
		g.str(t.name)
		g.put(uint32(len(t.ne)))
		g.put(t.ne)
		g.put(uint32(ggmlF32))
		g.put(uint64(offset))
		n := int64(len(t.data)) * 4
		offset += n + padLen(n, ggufAlignment)
	}
	if g.err != nil {
		return g.err
	}
	if err := g.w.Flush(); err != nil {
		return err
	}
	zeros := make([]byte, ggufAlignment)
	g.put(zeros[:padLen(cw.n, ggufAlignment)])
	for _, t := range tensors {
		g.put(t.data)
		n := int64(len(t.data)) * 4
		g.put(zeros[:padLen(n, ggufAlignment)])
	}
	if g.err != nil {
		return g.err
	}
	if err := g.w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
