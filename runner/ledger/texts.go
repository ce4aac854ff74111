package ledger

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Texts are stored once. A text column (a request's input, params, output,
// reasoning and tool calls; a cell's output, reasoning, tool calls and
// checks; a verdict's detail) is cut into pieces, each piece is a row of
// texts, found by its hash, and the row keeps, in the column's _ref twin,
// the list of its pieces. The same piece in a thousand rows is one row of
// texts: the judge template every judge request repeats, a reply that is
// also the cell's output and the candidate text of its judge request, the
// judge's reply quoted in the verdict's detail. The writer remembers which
// pieces it stored by their hash (textID); a process that meets a piece
// that another process stored, or that it has forgotten, stores it again.
//
// Pieces are cut at line ends, never inside a line, and a piece is stored
// as it was given, neither compressed nor escaped: a secret that reached
// the ledger can still be found by grepping the file's bytes (the secrets
// tests do). The rules, so that the same text cuts the same way wherever
// it appears:
//
//  1. A line ends at a newline byte, or at the two bytes \n (a newline
//     escaped in JSON, as in inputs and details). The ending is not part
//     of the piece: the reference carries it, so the line "4" of a reply
//     and the same line inside a JSON-escaped judge prompt are one piece.
//  2. A line of longLine bytes or more is a piece of its own.
//  3. Shorter lines are gathered, with the endings between them, into one
//     piece that ends after a line whose hash says so (one in four, decided
//     by the line's content alone, so runs of the same short lines are cut
//     alike once they have met one such line), before a long line, at the
//     end of the text, or once it holds maxPiece bytes.
//
// A reference is a list of uvarints, one per piece: the piece's id in
// texts shifted left by two, or'ed with its ending (0 none, 1 newline,
// 2 \n). Id 0 is the empty piece and has no row. A NULL reference means
// the text is in the column itself (rows written before schema 6, and
// empty texts).

const (
	longLine = 48
	maxPiece = 512
)

const (
	endNone = iota
	endNewline
	endEscaped
)

var endings = [...]string{endNone: "", endNewline: "\n", endEscaped: `\n`}

// pieces walks a text's pieces: for p.next() { p.body, p.end }.
type pieces struct {
	s    string
	at   int
	body string
	end  int
	// nl and bs are the first newline and backslash at or after some
	// position (len(s): none), so that the text is searched once for each
	// (IndexByte), not once a line; -1 before the first search.
	nl, bs int
}

func newPieces(s string) pieces { return pieces{s: s, nl: -1, bs: -1} }

func (p *pieces) next() bool {
	start, open := 0, false
	for p.at < len(p.s) {
		i := p.at
		lineEnd, end, after := p.lineAt(i)
		line := p.s[i:lineEnd]
		if len(line) >= longLine {
			if open {
				return true // the gathered lines first; this line comes next
			}
			p.at = after
			p.body, p.end = line, end
			return true
		}
		if !open {
			start, open = i, true
		}
		p.at = after
		p.body, p.end = p.s[start:lineEnd], end
		if end == endNone || cutAfter(line) || lineEnd-start >= maxPiece {
			return true
		}
	}
	return open
}

// lineAt finds the line that starts at i: where it ends, how, and where the
// next one starts.
func (p *pieces) lineAt(i int) (lineEnd, end, after int) {
	s := p.s
	for {
		if p.nl < i {
			p.nl = indexFrom(s, i, '\n')
		}
		if p.bs < i {
			p.bs = indexFrom(s, i, '\\')
		}
		if p.nl < p.bs {
			return p.nl, endNewline, p.nl + 1
		}
		j := p.bs
		if j == len(s) {
			return len(s), endNone, len(s)
		}
		if j+1 < len(s) && s[j+1] == 'n' {
			return j, endEscaped, j + 2
		}
		i = j + 1 // a backslash before something else: the line goes on
	}
}

// indexFrom is the first c in s at or after i, or len(s).
func indexFrom(s string, i int, c byte) int {
	if k := strings.IndexByte(s[i:], c); k >= 0 {
		return i + k
	}
	return len(s)
}

// cutAfter is rule 3's one in four: FNV-1a of the line, mixed.
func cutAfter(line string) bool {
	h := uint32(2166136261)
	for i := 0; i < len(line); i++ {
		h ^= uint32(line[i])
		h *= 16777619
	}
	return (h*0x9E3779B1)>>30 == 0
}

// textKey is what the writer remembers a piece by: the first 16 bytes of
// its SHA-256.
type textKey [16]byte

// knownTexts bounds the writer's memory of stored pieces: two generations
// of up to knownTexts/2 each. A piece found in the older one moves to the
// newer, so the pieces a run keeps repeating (templates, prompts) stay;
// the older generation is dropped when the newer fills.
var knownTexts = 1 << 16 // a variable for the tests

// ref stores the pieces of s that the writer does not remember storing
// and returns its reference; nil for an empty text, which stays in its
// column.
func (b *batch) ref(s string) ([]byte, error) {
	if s == "" {
		return nil, nil
	}
	out := make([]byte, 0, 8)
	p := newPieces(s)
	for p.next() {
		id, err := b.textID(p.body)
		if err != nil {
			return nil, err
		}
		out = binary.AppendUvarint(out, uint64(id)<<2|uint64(p.end))
	}
	return out, nil
}

// refs is ref for several texts; the first failure wins.
func (b *batch) refs(dst []*[]byte, texts ...string) error {
	for i, s := range texts {
		r, err := b.ref(s)
		if err != nil {
			return err
		}
		*dst[i] = r
	}
	return nil
}

// textID is the id of a piece, stored now unless the writer remembers it.
// Only memory is consulted, never the table: looking a piece up there
// costs more (an index, and a probe of it for every new reply) than
// storing it again costs the rare process that meets a piece another
// stored (a resume, a re-judge in a later process), once.
func (b *batch) textID(body string) (int64, error) {
	if body == "" {
		return 0, nil
	}
	w := b.w
	w.hashBuf = append(w.hashBuf[:0], body...)
	sum := sha256.Sum256(w.hashBuf)
	key := textKey(sum[:16])
	if id, ok := b.staged[key]; ok {
		return id, nil
	}
	if id, ok := w.known[key]; ok {
		return id, nil
	}
	if id, ok := w.older[key]; ok {
		b.stage(key, id) // kept in the newer generation once this commits
		return id, nil
	}
	hash := int64(binary.BigEndian.Uint64(sum[:8]))
	if w.l.d.pg {
		// The id is known before the piece is stored, so that the rows
		// that refer to it go in the same round trip (batch.send).
		id, err := b.textIDs()
		if err != nil {
			return 0, fmt.Errorf("store a text: %w", err)
		}
		// BYTEA: PostgreSQL's TEXT refuses some bytes a reply may hold.
		err = b.exec(stmtTextInsert, named("store a text"), nil, id, hash, []byte(body))
		if err != nil {
			return 0, err
		}
		b.stage(key, id)
		return id, nil
	}
	var id int64
	if err := b.insertID(stmtTextInsert, named("store a text"), &id, hash, body); err != nil {
		return 0, err
	}
	b.stage(key, id)
	return id, nil
}

// textIDBlock ids are taken from the texts' sequence at a time on
// PostgreSQL: one round trip for many pieces. Those a process does not
// use are gaps in the ids, which mean nothing.
const textIDBlock = 1024

// textIDs is the next id of a piece on PostgreSQL, from the writer's
// block, taking a new block when it is used up.
func (b *batch) textIDs() (int64, error) {
	w := b.w
	if len(w.freeIDs) == 0 {
		rows, err := b.tx.Query(`SELECT nextval(pg_get_serial_sequence('texts', 'id')) FROM generate_series(1, ?)`, textIDBlock)
		if err != nil {
			return 0, err
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return 0, err
			}
			w.freeIDs = append(w.freeIDs, id)
		}
		if err := rows.Err(); err != nil {
			return 0, err
		}
		if len(w.freeIDs) == 0 {
			return 0, errors.New("the texts' sequence gave no ids")
		}
	}
	id := w.freeIDs[0]
	w.freeIDs = w.freeIDs[1:]
	return id, nil
}

func (b *batch) stage(key textKey, id int64) {
	if b.staged == nil {
		b.staged = map[textKey]int64{}
	}
	b.staged[key] = id
}

// remember keeps what a committed batch stored (never what a batch rolled
// back: its ids are gone), so that later batches need not store it again.
func (w *writer) remember(staged map[textKey]int64) {
	for k, id := range staged {
		if len(w.known) >= knownTexts/2 {
			w.older, w.known = w.known, make(map[textKey]int64, len(w.known))
		}
		w.known[k] = id
	}
}

// textChunk bounds the ids one read of dialect.textsByID takes.
const textChunk = 500

// texts fills text columns read back: each add names where a column's
// text goes and its reference, and resolve reads every piece they need
// (each once) and writes the texts.
type texts struct {
	cols []textCol
	// recall hands the pieces read back to the writer to remember: a text
	// read to be quoted in a new one (a reply in its judge's prompt) then
	// costs nothing again, however long ago it was stored.
	recall bool
}

type textCol struct {
	dst *string
	ref []byte
}

// add schedules *dst to be filled from ref; a NULL ref leaves *dst (the
// column's inline text) as it is.
func (t *texts) add(dst *string, ref []byte) {
	if ref != nil {
		t.cols = append(t.cols, textCol{dst, ref})
	}
}

func (t *texts) resolve(l *Ledger) error {
	if len(t.cols) == 0 {
		return nil
	}
	bodies := map[int64]string{0: ""}
	var want []int64
	for _, c := range t.cols {
		err := eachPiece(c.ref, func(id int64, _ int) {
			if _, ok := bodies[id]; !ok {
				bodies[id] = ""
				want = append(want, id)
			}
		})
		if err != nil {
			return err
		}
	}
	read := want
	for len(want) > 0 {
		n := min(len(want), textChunk)
		if err := l.readBodies(want[:n], bodies); err != nil {
			return err
		}
		want = want[n:]
	}
	if t.recall && l.wr != nil && len(read) > 0 {
		pieces := make(map[textKey]int64, len(read))
		for _, id := range read {
			pieces[keyOf(bodies[id])] = id
		}
		l.wr.recall(pieces)
	}
	for _, c := range t.cols {
		if v, n := binary.Uvarint(c.ref); n == len(c.ref) && v&3 == endNone {
			*c.dst = bodies[int64(v>>2)] // one piece: shared, not copied
			continue
		}
		var sb strings.Builder
		_ = eachPiece(c.ref, func(id int64, end int) {
			sb.WriteString(bodies[id])
			sb.WriteString(endings[end])
		})
		*c.dst = sb.String()
	}
	return nil
}

// readBodies reads the bodies of ids: a few one by one, more as a list.
func (l *Ledger) readBodies(ids []int64, into map[int64]string) error {
	if len(ids) <= 4 {
		q, err := l.read(readText)
		if err != nil {
			return fmt.Errorf("read texts: %w", err)
		}
		for _, id := range ids {
			var body string
			if err := q.QueryRow(id).Scan(&id, &body); err != nil {
				return fmt.Errorf("read text %d: %w", id, err)
			}
			into[id] = body
		}
		return nil
	}
	q, err := l.read(readTexts)
	if err != nil {
		return fmt.Errorf("read texts: %w", err)
	}
	buf := make([]byte, 0, 8*len(ids)+2)
	buf = append(buf, '[')
	for i, id := range ids {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = strconv.AppendInt(buf, id, 10)
	}
	buf = append(buf, ']')
	rows, err := q.Query(string(buf))
	if err != nil {
		return fmt.Errorf("read texts: %w", err)
	}
	defer rows.Close()
	found := 0
	for rows.Next() {
		var (
			id   int64
			body string
		)
		if err := rows.Scan(&id, &body); err != nil {
			return fmt.Errorf("read texts: %w", err)
		}
		into[id] = body
		found++
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read texts: %w", err)
	}
	if found != len(ids) {
		return fmt.Errorf("read texts: %d of %d pieces are missing from the texts table", len(ids)-found, len(ids))
	}
	return nil
}

var errBadRef = errors.New("a text reference is corrupt")

func eachPiece(ref []byte, f func(id int64, end int)) error {
	for len(ref) > 0 {
		v, n := binary.Uvarint(ref)
		if n <= 0 || v&3 > endEscaped {
			return errBadRef
		}
		f(int64(v>>2), int(v&3))
		ref = ref[n:]
	}
	return nil
}

// keyOf is the key the writer remembers a piece by.
func keyOf(body string) textKey {
	sum := sha256.Sum256([]byte(body))
	return textKey(sum[:16])
}

// recall has the next commit remember pieces a reader read back (see
// texts.recall); called by readers, so it only queues them.
func (w *writer) recall(pieces map[textKey]int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.recalled == nil {
		w.recalled = map[textKey]int64{}
	}
	for k, id := range pieces {
		if len(w.recalled) >= knownTexts/2 {
			return
		}
		w.recalled[k] = id
	}
}
