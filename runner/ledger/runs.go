package ledger

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// LastRun is the id Run resolves to the newest run.
const LastRun = "last"

const runColumns = `id, name, status, scoring_mode, config_json, scoring_json,
	models_json, tests_json, repeat, started_ms, ended_ms, message, pid, host, heartbeat_ms, owner_start, owner_user`

// runRead is what scanRun reads: runColumns, and what is set only after a
// run is created (the exit code, the generation).
const runRead = runColumns + `, exit_code, generation`

// runByIDSQL reads one run's row, for scanRun.
const runByIDSQL = `SELECT ` + runRead + ` FROM runs WHERE id = ?`

// CreateRun records a new run. Its ID must be new (NewRunID); an empty
// Status is stored as "running". ConfigJSON and ScoringJSON must be JSON (or
// empty) and must not hold an API key: see checkNoSecrets.
//
// The process that will run it gives Owner = l.Self() and a Heartbeat (its
// start), then calls Heartbeat every HeartbeatEvery until FinishRun: that
// is how a reader tells it from a run whose process died. Every field is
// stored as given.
func (l *Ledger) CreateRun(r RunRow) error {
	if l.wr == nil {
		return l.wrap("create run", ErrReadOnly)
	}
	if r.ID == "" {
		return l.wrap("create run", errors.New("empty run id"))
	}
	for _, f := range []struct{ name, text string }{
		{"config", r.ConfigJSON},
		{"scoring", r.ScoringJSON},
	} {
		if err := checkNoSecrets(f.text); err != nil {
			return l.wrap(fmt.Sprintf("create run %s: %s", r.ID, f.name), err)
		}
	}
	if r.Status == "" {
		r.Status = "running"
	}
	err := l.write(r.ID, "create run", func(b *batch) error {
		if err := insertRun(b, r); err != nil {
			return l.wrap("create run "+r.ID, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if r.Status == RunRunning && r.Owner == l.self && !r.Heartbeat.IsZero() {
		l.hold(r.ID, 0)
	}
	return nil
}

// updateRun runs in b an UPDATE of one run's row: a row it leaves alone
// (no such run, or one its conditions leave out) is ErrNotFound, said as
// notFound and declined, so that the rest of the batch commits.
func (l *Ledger) updateRun(b *batch, op, notFound, query string, args ...any) error {
	res, err := b.tx.Exec(query, args...)
	if err != nil {
		return l.wrap(op, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return l.wrap(op, err)
	} else if n == 0 {
		return declined{l.wrap(notFound, ErrNotFound)}
	}
	return nil
}

// FinishRun sets a run's final status, the reason it ended so (message; "" for
// a run that completed) and its end time.
// The writes queued before it are committed with it or before it.
func (l *Ledger) FinishRun(id, status, message string, ended time.Time) error {
	err := l.write(id, "finish run", func(b *batch) error {
		return l.updateRun(b, "finish run "+id, fmt.Sprintf("finish run %q", id),
			`UPDATE runs SET status = ?, message = ?, ended_ms = ? WHERE id = ?`, status, message, msOrNull(ended), id)
	})
	if err != nil {
		return err
	}
	l.release(id)
	return nil
}

// Runs lists runs, newest first; limit <= 0 lists them all. A listed run
// whose process is gone is reconciled first (reconcile.go), so it reads
// interrupted, never running.
func (l *Ledger) Runs(limit int) ([]RunRow, error) {
	out, err := l.listRuns(limit)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i] = l.settle(out[i])
	}
	return out, nil
}

func (l *Ledger) listRuns(limit int) ([]RunRow, error) {
	if limit <= 0 {
		limit = math.MaxInt64 // no limit, in words both backends take
	}
	rows, err := l.r.Query(`SELECT `+runRead+` FROM runs
		ORDER BY started_ms DESC NULLS LAST, id DESC NULLS LAST LIMIT ?`, limit)
	if err != nil {
		return nil, l.wrap("list runs", err)
	}
	defer rows.Close()
	var out []RunRow
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, l.wrap("list runs", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, l.wrap("list runs", err)
	}
	return out, nil
}

// Run finds one run by its id, by a prefix that only it has, or by "last"
// (the newest). A miss wraps ErrNotFound; a prefix of several runs wraps
// ErrAmbiguous and ErrNotFound, and names the runs it matches. A run whose
// process is gone is reconciled first, as in Runs.
func (l *Ledger) Run(id string) (RunRow, error) {
	r, err := l.findRun(id)
	if err != nil {
		return r, err
	}
	return l.settle(r), nil
}

func (l *Ledger) findRun(id string) (RunRow, error) {
	if id == LastRun {
		runs, err := l.listRuns(1)
		if err != nil {
			return RunRow{}, err
		}
		if len(runs) == 0 {
			return RunRow{}, l.wrap("last run", notFound("there are no runs in the ledger yet: run a battery first"))
		}
		return runs[0], nil
	}
	if id == "" {
		return RunRow{}, l.wrap("run", fmt.Errorf("empty run id: %w", ErrNotFound))
	}
	r, err := scanRun(l.r.QueryRow(runByIDSQL, id))
	if err == nil {
		return r, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return RunRow{}, l.wrap(fmt.Sprintf("run %q", id), err)
	}
	return l.runByPrefix(id)
}

func (l *Ledger) runByPrefix(prefix string) (RunRow, error) {
	// substr counts characters, not bytes. Three rows are enough to tell unique from ambiguous and to show a few.
	rows, err := l.r.Query(`SELECT `+runRead+` FROM runs
		WHERE substr(id, 1, ?) = ? ORDER BY id LIMIT 3`, utf8.RuneCountInString(prefix), prefix)
	if err != nil {
		return RunRow{}, l.wrap(fmt.Sprintf("run %q", prefix), err)
	}
	defer rows.Close()
	var found []RunRow
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return RunRow{}, l.wrap(fmt.Sprintf("run %q", prefix), err)
		}
		found = append(found, r)
	}
	if err := rows.Err(); err != nil {
		return RunRow{}, l.wrap(fmt.Sprintf("run %q", prefix), err)
	}
	switch len(found) {
	case 0:
		return RunRow{}, l.wrap(fmt.Sprintf("run %q", prefix), notFound("no such run: `pitwall runs` lists them"))
	case 1:
		return found[0], nil
	}
	ids := make([]string, len(found))
	for i, r := range found {
		ids[i] = r.ID
	}
	more := ""
	if len(found) == 3 {
		more = ", ..."
	}
	return RunRow{}, l.wrap(fmt.Sprintf("run %q", prefix),
		ambiguous(fmt.Sprintf("the id is ambiguous: it starts %s%s; give more of it", strings.Join(ids, ", "), more)))
}

type scanner interface{ Scan(dest ...any) error }

func scanRun(s scanner) (RunRow, error) {
	var (
		r                           RunRow
		models, tests               string
		started, stopped, heartbeat sql.NullInt64
		exit                        sql.NullInt64
	)
	err := s.Scan(&r.ID, &r.Name, &r.Status, &r.ScoringMode, &r.ConfigJSON, &r.ScoringJSON,
		&models, &tests, &r.Repeat, &started, &stopped, &r.Message,
		&r.Owner.PID, &r.Owner.Host, &heartbeat, &r.Owner.Start, &r.Owner.User, &exit, &r.Generation)
	if err != nil {
		return RunRow{}, err
	}
	if err := json.Unmarshal([]byte(models), &r.Models); err != nil {
		return RunRow{}, fmt.Errorf("run %s: models: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(tests), &r.Tests); err != nil {
		return RunRow{}, fmt.Errorf("run %s: tests: %w", r.ID, err)
	}
	r.StartedAt = timeFromMS(started)
	r.EndedAt = timeFromMS(stopped)
	r.Heartbeat = timeFromMS(heartbeat)
	if exit.Valid {
		code := int(exit.Int64)
		r.ExitCode = &code
	}
	return r, nil
}

// secretNames are JSON object keys whose non-empty string values are
// credentials, compared lower-case with '_' and '-' removed. api_key_env
// (the NAME of a variable) is not among them.
var secretNames = map[string]bool{
	"apikey":        true,
	"authorization": true,
	"accesstoken":   true,
	"bearertoken":   true,
	"secretkey":     true,
	"password":      true,
}

// checkNoSecrets refuses JSON that holds a credential: a key that must be
// resolved from the environment should never reach the ledger, which users
// share and attach to bug reports. The caller is expected to redact; this is
// the second lock on the door, so it reports where the key is, never its
// value. Text that is not JSON is refused, since it cannot be checked.
func checkNoSecrets(text string) error {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader([]byte(text)))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if d.More() {
		return errors.New("not JSON: more than one value")
	}
	if where := findSecret(v, "$"); where != "" {
		return fmt.Errorf("%w at %s", ErrSecret, where)
	}
	return nil
}

func findSecret(v any, at string) string {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			norm := strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(k))
			if s, ok := x.(string); ok && secretNames[norm] && strings.TrimSpace(s) != "" {
				return at + "." + k
			}
			if where := findSecret(x, at+"."+k); where != "" {
				return where
			}
		}
	case []any:
		for i, x := range v {
			if where := findSecret(x, at+"["+strconv.Itoa(i)+"]"); where != "" {
				return where
			}
		}
	}
	return ""
}

// notFound is ErrNotFound in its own words.
type notFound string

func (e notFound) Error() string        { return string(e) }
func (e notFound) Is(target error) bool { return target == ErrNotFound }

// ambiguous is ErrAmbiguous (and so ErrNotFound) in its own words.
type ambiguous string

func (e ambiguous) Error() string        { return string(e) }
func (e ambiguous) Is(target error) bool { return target == ErrAmbiguous || target == ErrNotFound }
