package ollama

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// readGGUF parses what writeTinyGGUF writes, independently of it: the
// header, every key (with its scalar value, or its array length) and every
// tensor, and checks that the tensor data lies where the offsets say.
func readGGUF(b []byte) (kvs map[string]any, tensors map[string][]uint64, err error) {
	r := bytes.NewReader(b)
	rd := func(v any) {
		if err == nil {
			err = binary.Read(r, binary.LittleEndian, v)
		}
	}
	str := func() string {
		var n uint64
		rd(&n)
		if err != nil || n > uint64(r.Len()) {
			if err == nil {
				err = fmt.Errorf("string length %d past the end", n)
			}
			return ""
		}
		s := make([]byte, n)
		rd(s)
		return string(s)
	}
	sizes := map[uint32]int64{0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
	var scalar func(typ uint32) any
	scalar = func(typ uint32) any {
		switch typ {
		case ggufUint32:
			var v uint32
			rd(&v)
			return v
		case ggufFloat32:
			var v float32
			rd(&v)
			return v
		case ggufBool:
			var v bool
			rd(&v)
			return v
		case ggufString:
			return str()
		case ggufArray:
			var et uint32
			var n uint64
			rd(&et)
			rd(&n)
			for i := uint64(0); i < n && err == nil; i++ {
				if sz, ok := sizes[et]; ok {
					r.Seek(sz, 1)
				} else {
					scalar(et)
				}
			}
			return int(n)
		}
		if sz, ok := sizes[typ]; ok {
			r.Seek(sz, 1)
			return nil
		}
		err = fmt.Errorf("unknown value type %d", typ)
		return nil
	}
	var magic [4]byte
	var version uint32
	var nt, nkv uint64
	rd(&magic)
	rd(&version)
	rd(&nt)
	rd(&nkv)
	if err != nil {
		return nil, nil, err
	}
	if string(magic[:]) != "GGUF" || version != 3 {
		return nil, nil, fmt.Errorf("magic %q version %d, want GGUF 3", magic, version)
	}
	kvs = map[string]any{}
	for i := uint64(0); i < nkv && err == nil; i++ {
		k := str()
		var typ uint32
		rd(&typ)
		kvs[k] = scalar(typ)
	}
	tensors = map[string][]uint64{}
	type info struct {
		name   string
		elems  uint64
		offset uint64
	}
	var infos []info
	for i := uint64(0); i < nt && err == nil; i++ {
		name := str()
		var nd, typ uint32
		rd(&nd)
		ne := make([]uint64, nd)
		rd(ne)
		var off uint64
		rd(&typ)
		rd(&off)
		if typ != ggmlF32 {
			return nil, nil, fmt.Errorf("%s: type %d, want F32", name, typ)
		}
		elems := uint64(1)
		for _, d := range ne {
			elems *= d
		}
		tensors[name] = ne
		infos = append(infos, info{name, elems, off})
	}
	if err != nil {
		return nil, nil, err
	}
	pos := int64(len(b)) - int64(r.Len())
	dataStart := pos + padLen(pos, ggufAlignment)
	end := dataStart
	for _, in := range infos {
		if in.offset%ggufAlignment != 0 {
			return nil, nil, fmt.Errorf("%s: offset %d not aligned", in.name, in.offset)
		}
		if e := dataStart + int64(in.offset) + int64(in.elems)*4; e > end {
			end = e
		}
	}
	if end > int64(len(b)) {
		return nil, nil, fmt.Errorf("tensor data ends at %d, past the file's %d bytes", end, len(b))
	}
	return kvs, tensors, nil
}

// TestTinyGGUF checks the writer without Ollama: a valid GGUF v3 with the
// llama metadata and every tensor llama.cpp's LLaMA loader asks for, in the
// shapes it expects, under 2 MB.
func TestTinyGGUF(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	m := defaultTinyModel("tiny", 7)
	if err := writeTinyGGUF(path, m); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) >= 2<<20 {
		t.Errorf("file is %d bytes, want < 2 MB", len(b))
	}
	kvs, tensors, err := readGGUF(b)
	if err != nil {
		t.Fatal(err)
	}
	toks, _, _ := tinyVocab()
	nv := uint64(len(toks))
	for k, want := range map[string]any{
		"general.architecture": "llama", "llama.block_count": uint32(2), "llama.embedding_length": uint32(64),
		"llama.attention.head_count": uint32(4), "llama.context_length": uint32(256), "tokenizer.ggml.model": "llama",
		"tokenizer.ggml.tokens": len(toks), "tokenizer.ggml.scores": len(toks), "tokenizer.ggml.token_type": len(toks),
		"tokenizer.ggml.bos_token_id": uint32(1), "tokenizer.ggml.eos_token_id": uint32(2),
	} {
		if got := kvs[k]; got != want {
			t.Errorf("%s = %v (%T), want %v (%T)", k, got, got, want, want)
		}
	}
	want := map[string][]uint64{"token_embd.weight": {64, nv}, "output_norm.weight": {64}, "output.weight": {64, nv}}
	for l := 0; l < 2; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		for n, s := range map[string][]uint64{
			"attn_norm": {64}, "attn_q": {64, 64}, "attn_k": {64, 64}, "attn_v": {64, 64}, "attn_output": {64, 64},
			"ffn_norm": {64}, "ffn_gate": {64, 128}, "ffn_up": {64, 128}, "ffn_down": {128, 64},
		} {
			want[p+n+".weight"] = s
		}
	}
	for n, s := range want {
		if got, ok := tensors[n]; !ok {
			t.Errorf("no tensor %s", n)
		} else if fmt.Sprint(got) != fmt.Sprint(s) {
			t.Errorf("%s has shape %v, want %v", n, got, s)
		}
	}
	if len(tensors) != len(want) {
		t.Errorf("%d tensors, want %d", len(tensors), len(want))
	}
	// Different seeds, different files: Ollama stores one blob per digest.
	other := filepath.Join(t.TempDir(), "other.gguf")
	if err := writeTinyGGUF(other, defaultTinyModel("tiny", 8)); err != nil {
		t.Fatal(err)
	}
	if b2, _ := os.ReadFile(other); bytes.Equal(b, b2) {
		t.Error("seeds 7 and 8 wrote the same file")
	}
}
