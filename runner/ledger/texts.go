package ledger

import (
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
)

// Texts are stored once. A long text a row holds (a request's input,
// params, output, reasoning, tool calls and error; a cell's output,
// reasoning, tool calls, checks and error; a verdict's detail and error) is
// cut into pieces, each piece is a row of the texts table keyed by its
// hash, and the row's column holds a recipe of those pieces instead of the
// text. A judge template, a test's prompt sent to a hundred models, a
// candidate's answer quoted in the judge's prompt and a checks list that
// many cells share then cost their bytes once.
//
// The cut, a rule a reader can check against split:
//
//  1. A text shorter than inlineMax bytes is stored as itself (TEXT).
//  2. Otherwise it is read as lines. A line ends at a newline, or at the
//     two characters `\n` that stand for one inside a JSON string, so that
//     a reply and the same reply quoted in a JSON message array cut alike.
//  3. A line of at least lineMin bytes (its end left out) is a piece.
//  4. What lies between such lines (short lines and line ends) is a piece
//     when it is at least runMin bytes long, and written into the recipe as
//     it is otherwise.
//
// A piece's body is TEXT, or a BLOB of its raw DEFLATE (RFC 1951) when
// that is at least an eighth smaller (packBody): answers, judge replies
// and verdict details are prose and JSON that compress about twofold.
//
// A column holds TEXT (the text itself: short texts, and every row written
// before schema 6) or a BLOB recipe: the byte recipeV1, then entries, each
// a uvarint x followed by x>>1 bytes of text when x is even, or when x is
// odd by the 16-byte hash of a piece whose body is x>>1 bytes long. A hash
// is the first 16 bytes of the piece's SHA-256.
const (
	inlineMax = 48
	lineMin   = 128
	runMin    = 48
	recipeV1  = 1
	hashLen   = 16
	// packMin: shorter bodies are stored as they are; DEFLATE's framing
	// eats what it would save.
	packMin = 96
)

type textHash [hashLen]byte

func hashText(s string) textHash {
	sum := sha256.Sum256([]byte(s))
	return textHash(sum[:hashLen])
}

// piece is s[from:to]; ref says whether it is stored in texts.
type piece struct {
	from, to int
	ref      bool
}

// split cuts s by rules 2 to 4. Pieces cover s in order, with no gaps.
func split(s string) []piece {
	var out []piece
	run := 0 // where the current run of short lines starts
	emit := func(from, to int, ref bool) {
		if from < to {
			out = append(out, piece{from: from, to: to, ref: ref})
		}
	}
	endRun := func(to int) {
		emit(run, to, to-run >= runMin)
	}
	for at := 0; at <= len(s); {
		end, next := lineEnd(s, at)
		if end-at >= lineMin {
			endRun(at)
			emit(at, end, true)
			run = end
		}
		if next > len(s) || next == at {
			break
		}
		at = next
	}
	endRun(len(s))
	return out
}

// lineEnd finds the end of the line that starts at at: where its text ends
// and where the next line starts (len(s)+1 when none does).
func lineEnd(s string, at int) (end, next int) {
	for i := at; i < len(s); i++ {
		switch {
		case s[i] == '\n':
			return i, i + 1
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == 'n':
			return i, i + 2
		}
	}
	return len(s), len(s) + 1
}

// stored is a text as a row holds it: the column's value and the pieces
// the texts table must hold for it.
type stored struct {
	value  any // string or []byte (a recipe)
	pieces []string
	hashes []textHash
}

// encodeText makes s's column value by the rules above.
func encodeText(s string) stored {
	if len(s) < inlineMax {
		return stored{value: s}
	}
	ps := split(s)
	rec := make([]byte, 1, 1+len(ps)*(hashLen+3))
	rec[0] = recipeV1
	var st stored
	for _, p := range ps {
		n := uint64(p.to - p.from)
		if !p.ref {
			rec = binary.AppendUvarint(rec, n<<1)
			rec = append(rec, s[p.from:p.to]...)
			continue
		}
		h := hashText(s[p.from:p.to])
		rec = binary.AppendUvarint(rec, n<<1|1)
		rec = append(rec, h[:]...)
		st.pieces = append(st.pieces, s[p.from:p.to])
		st.hashes = append(st.hashes, h)
	}
	st.value = rec
	return st
}

// recipeRefs lists the hashes a recipe names.
func recipeRefs(rec []byte, into []textHash) ([]textHash, error) {
	if len(rec) == 0 || rec[0] != recipeV1 {
		return into, fmt.Errorf("text recipe of format %d, which this pitwall does not know", firstByte(rec))
	}
	for at := 1; at < len(rec); {
		x, n := binary.Uvarint(rec[at:])
		if n <= 0 {
			return into, errors.New("text recipe cut short")
		}
		at += n
		if x&1 == 0 {
			at += int(x >> 1)
			continue
		}
		if at+hashLen > len(rec) {
			return into, errors.New("text recipe cut short")
		}
		into = append(into, textHash(rec[at:at+hashLen]))
		at += hashLen
	}
	return into, nil
}

// decodeRecipe rebuilds a text from its recipe and the bodies of its pieces.
func decodeRecipe(rec []byte, body func(textHash) (string, bool)) (string, error) {
	if len(rec) == 0 || rec[0] != recipeV1 {
		return "", fmt.Errorf("text recipe of format %d, which this pitwall does not know", firstByte(rec))
	}
	var b strings.Builder
	for at := 1; at < len(rec); {
		x, n := binary.Uvarint(rec[at:])
		if n <= 0 {
			return "", errors.New("text recipe cut short")
		}
		at += n
		size := int(x >> 1)
		if x&1 == 0 {
			if at+size > len(rec) {
				return "", errors.New("text recipe cut short")
			}
			b.Write(rec[at : at+size])
			at += size
			continue
		}
		if at+hashLen > len(rec) {
			return "", errors.New("text recipe cut short")
		}
		h := textHash(rec[at : at+hashLen])
		at += hashLen
		s, ok := body(h)
		if !ok {
			return "", fmt.Errorf("text piece %x is missing from the texts table", h[:])
		}
		if len(s) != size {
			return "", fmt.Errorf("text piece %x is %d bytes, its recipe says %d", h[:], len(s), size)
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

func firstByte(b []byte) int {
	if len(b) == 0 {
		return -1
	}
	return int(b[0])
}

// textCache holds recently used piece bodies (reads) or hashes known to be
// in the texts table (writes), within a budget: two generations, the older
// dropped when the newer fills, so what is used often stays and memory
// stays bounded.
type textCache struct {
	mu        sync.Mutex
	cur, prev map[textHash]string
	size      int // bytes (bodies) or entries (hashes) in cur
	budget    int // per generation
	cost      func(string) int
}

func newTextCache(budget int, cost func(string) int) *textCache {
	return &textCache{cur: map[textHash]string{}, budget: budget, cost: cost}
}

func (c *textCache) get(h textHash) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.cur[h]; ok {
		return s, true
	}
	s, ok := c.prev[h]
	if ok {
		c.putLocked(h, s)
	}
	return s, ok
}

func (c *textCache) put(h textHash, s string) {
	c.mu.Lock()
	c.putLocked(h, s)
	c.mu.Unlock()
}

func (c *textCache) putLocked(h textHash, s string) {
	if _, ok := c.cur[h]; ok {
		return
	}
	c.cur[h] = s
	c.size += c.cost(s)
	if c.size >= c.budget {
		c.prev, c.cur, c.size = c.cur, map[textHash]string{}, 0
	}
}

// Budgets: bodies read back, in bytes; hashes known written, in entries
// (about 80 bytes each with the map's overhead).
const (
	readCacheBytes   = 4 << 20
	knownTextEntries = 16 << 10
)

const insertTextSQL = `INSERT INTO texts (hash, body) VALUES (?, ?) ON CONFLICT (hash) DO NOTHING`

// textRef is a column value to resolve once its row is scanned: raw is
// what was scanned, dst where the text goes.
type textRef struct {
	dst *string
	rec []byte
}

// scanText is a Scan destination for a text column of either form.
type scanText struct {
	dst  *string
	refs *[]textRef
}

func (s scanText) Scan(v any) error {
	switch v := v.(type) {
	case nil:
		*s.dst = ""
	case string:
		*s.dst = v
	case []byte:
		*s.refs = append(*s.refs, textRef{dst: s.dst, rec: append([]byte(nil), v...)})
	default:
		return fmt.Errorf("text column holds %T", v)
	}
	return nil
}

// resolveTexts fills in every recipe scanned, reading the pieces it lacks
// from the texts table in a few queries.
func (l *Ledger) resolveTexts(q *sql.DB, refs []textRef) error {
	if len(refs) == 0 {
		return nil
	}
	var all []textHash
	var err error
	for _, r := range refs {
		if all, err = recipeRefs(r.rec, all); err != nil {
			return err
		}
	}
	found := map[textHash]string{}
	var missing []any
	seen := map[textHash]bool{}
	for _, h := range all {
		if seen[h] {
			continue
		}
		seen[h] = true
		if s, ok := l.bodies.get(h); ok {
			found[h] = s
			continue
		}
		missing = append(missing, h[:])
	}
	const per = 256
	for len(missing) > 0 {
		n := min(per, len(missing))
		rows, err := q.Query(`SELECT hash, body FROM texts WHERE hash IN (?`+strings.Repeat(",?", n-1)+`)`, missing[:n]...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var h []byte
			var stored any
			if err := rows.Scan(&h, &stored); err != nil {
				rows.Close()
				return err
			}
			body, err := unpackBody(stored)
			if err != nil {
				rows.Close()
				return fmt.Errorf("text piece %x: %w", h, err)
			}
			if len(h) == hashLen {
				found[textHash(h)] = body
				l.bodies.put(textHash(h), body)
			}
		}
		if err := rows.Close(); err != nil {
			return err
		}
		missing = missing[n:]
	}
	body := func(h textHash) (string, bool) { s, ok := found[h]; return s, ok }
	for _, r := range refs {
		s, err := decodeRecipe(r.rec, body)
		if err != nil {
			return err
		}
		*r.dst = s
	}
	return nil
}

// packer compresses piece bodies for the writer; only the goroutine
// committing a batch uses it.
type packer struct {
	buf bytes.Buffer
	fw  *flate.Writer
}

// packBody is what the texts table stores for s: s, or its DEFLATE when
// that is at least an eighth smaller.
func (p *packer) packBody(s string) any {
	if len(s) < packMin {
		return s
	}
	p.buf.Reset()
	if p.fw == nil {
		p.fw, _ = flate.NewWriter(&p.buf, flate.BestSpeed) // a valid level never fails
	} else {
		p.fw.Reset(&p.buf)
	}
	_, _ = io.WriteString(p.fw, s) // writes to a bytes.Buffer never fail
	_ = p.fw.Close()
	if p.buf.Len() > len(s)-len(s)/8 {
		return s
	}
	return bytes.Clone(p.buf.Bytes())
}

var inflaters sync.Pool // of io.ReadCloser that are flate.Resetter

// unpackBody reads a stored body back.
func unpackBody(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case []byte:
		r, _ := inflaters.Get().(io.ReadCloser)
		if r == nil {
			r = flate.NewReader(bytes.NewReader(v))
		} else if err := r.(flate.Resetter).Reset(bytes.NewReader(v), nil); err != nil {
			return "", err
		}
		defer inflaters.Put(r)
		var b strings.Builder
		if _, err := io.Copy(&b, r); err != nil {
			return "", fmt.Errorf("inflating: %w", err)
		}
		return b.String(), nil
	case nil:
		return "", nil
	}
	return "", fmt.Errorf("body is %T", v)
}
