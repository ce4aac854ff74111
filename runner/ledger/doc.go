// Package ledger is the SQLite record of every request pitwall makes
// (inference, judge, warm-up, probe), of runs, cells and verdicts. A request
// is written before it is sent and updated when it ends, through one writer
// in WAL mode, so a crash at any point leaves a readable database and what
// is marked completed is on disk. It uses modernc.org/sqlite (no cgo).
//
// It stores what it is given and answers queries. It decides one thing
// itself: whether the process running a run is gone (liveness.go), so that
// a run killed mid-way reads interrupted instead of running forever
// (reconcile.go), and can be resumed (resume.go).
package ledger
