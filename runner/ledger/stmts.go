package ledger

import (
	"database/sql"
	"strings"
)

// The statements the ledger prepares once: the writer's, on its
// connection, and the reads made per cell or per judge request, on the
// readers' pool.

// The writer's statements, prepared once on its connection.
const (
	stmtInsertRequest = iota
	stmtInsertPending
	stmtStartRequest
	stmtFinishRequest
	stmtFinishStarted
	stmtPutCell
	stmtPutVerdict
	stmtTextInsert
	numStmts
)

var stmtSQL = [numStmts]string{
	stmtInsertRequest: insertRequestSQL,
	stmtInsertPending: insertPendingSQL,
	stmtStartRequest:  startRequestSQL,
	stmtFinishRequest: finishRequestSQL,
	stmtFinishStarted: finishStartedSQL,
	stmtPutCell:       putCellSQL,
	stmtPutVerdict:    putVerdictSQL,
	stmtTextInsert:    `INSERT INTO texts (hash, body) VALUES (?, ?)`,
}

// returnsID are the statements that give back the id of the row they
// insert on PostgreSQL (RETURNING id: batch.insertID); SQLite's give
// LastInsertId. PostgreSQL's pieces come with their ids (batch.textIDs).
var returnsID = [numStmts]bool{stmtInsertRequest: true, stmtInsertPending: true}

// pgTextInsertSQL stores a piece under an id taken from the sequence.
const pgTextInsertSQL = `INSERT INTO texts (id, hash, body) VALUES (?, ?, ?)`

func (l *Ledger) prepare() error {
	for i, q := range stmtSQL {
		if l.d.pg {
			if i == stmtTextInsert {
				q = pgTextInsertSQL
			}
			if returnsID[i] {
				q += " RETURNING id"
			}
			l.pgStmts[i] = l.d.sql(q)
			continue
		}
		s, err := l.w.Prepare(q)
		if err != nil {
			return l.wrap("prepare", err)
		}
		l.stmts[i] = s
	}
	if !l.d.pg {
		s, err := l.w.Prepare(fenceSQL)
		if err != nil {
			return l.wrap("prepare", err)
		}
		l.fenceStmt = s
	}
	return nil
}

// The reads made per cell or per judge request, prepared once (a parse
// costs more than the lookup) on first use, since a ledger opened
// read-only may hold an older schema until it is refused.
const (
	readCachedJudge = iota
	readCachedInference
	readCell
	readText
	readTexts
	numReads
)

var readSQL = [numReads]string{
	readCachedJudge:     cachedJudgeSQL,
	readCachedInference: cachedInferenceSQL,
	readCell:            `SELECT ` + cellColumns + ` FROM cells WHERE run_id = ? AND model = ? AND test = ? AND repeat = ?`,
	readText:            `SELECT id, body FROM texts WHERE id = ?`,
	readTexts:           "", // dialect.textsByID
}

// sizedRead returns q prepared on the readers' pool, once: a read of
// keys padded to one of a few sizes (CellsAt, CachedJudgeOutputs), whose
// text SQLite took a millisecond to parse at 256 keys.
func (l *Ledger) sizedRead(q string) (*sql.Stmt, error) {
	l.readMu.Lock()
	defer l.readMu.Unlock()
	if s := l.sized[q]; s != nil {
		return s, nil
	}
	s, err := l.r.Prepare(q)
	if err != nil {
		return nil, err
	}
	if l.sized == nil {
		l.sized = map[string]*sql.Stmt{}
	}
	l.sized[q] = s
	return s, nil
}

// padded is the size a read of n keys is padded to, 1, 4, 16, 64... up to
// most: one statement a size, each prepared once (sizedRead).
func padded(n, most int) int {
	size := 1
	for size < n {
		size *= 4
	}
	return min(size, most)
}

// queryPadded runs a read whose text is head, size rows of VALUES written
// with their arguments by row (i < size; past its keys, a caller pads),
// then tail: args first, the rows' after.
func (l *Ledger) queryPadded(head string, size int, row func(i int, q *strings.Builder, args []any) []any, tail string, args ...any) (*sql.Rows, error) {
	var q strings.Builder
	q.WriteString(head)
	for i := range size {
		if i > 0 {
			q.WriteByte(',')
		}
		args = row(i, &q, args)
	}
	q.WriteString(tail)
	stmt, err := l.sizedRead(q.String())
	if err != nil {
		return nil, err
	}
	return stmt.Query(l.d.args(args)...)
}

// read returns the prepared read i.
func (l *Ledger) read(i int) (*sql.Stmt, error) {
	l.readMu.Lock()
	defer l.readMu.Unlock()
	if l.reads[i] == nil {
		q := readSQL[i]
		if i == readTexts {
			q = l.d.textsByID
		}
		s, err := l.r.Prepare(q)
		if err != nil {
			return nil, err
		}
		l.reads[i] = s
	}
	return l.reads[i], nil
}
