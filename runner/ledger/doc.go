// Package ledger is the SQLite (or PostgreSQL, pg.go) record of every request pitwall makes
// (inference, judge, warm-up, probe), of runs, cells and verdicts. A request
// is written before it is sent and updated when it ends. Writes go through
// one writer that commits them in batches (writer.go): a write that must be
// on disk before the caller goes on (a request row before it is sent) waits
// for its commit; the others (a start, an end, a cell, a verdict) are
// queued and acknowledged once committed. Long texts are stored once, by
// content (texts.go). WAL mode, so a crash at any point leaves a readable
// database holding every acknowledged write. It uses modernc.org/sqlite (no
// cgo).
//
// It stores what it is given and answers queries. It decides one thing
// itself: whether the process running a run is gone (liveness.go), so that
// a run killed mid-way reads interrupted instead of running forever
// (reconcile.go), and can be resumed (resume.go); and it refuses every
// write of a run's owner once another process has taken the run over
// (fence.go).
package ledger
