package ledger

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// acks collects what Acks hear.
type acks struct {
	mu   sync.Mutex
	errs []error
}

func (a *acks) ack(err error) {
	a.mu.Lock()
	a.errs = append(a.errs, err)
	a.mu.Unlock()
}

func (a *acks) heard() (ok int, failed []error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, err := range a.errs {
		if err == nil {
			ok++
		} else {
			failed = append(failed, err)
		}
	}
	return ok, failed
}

func TestQueuedWritesShareCommitsAndAreAcknowledgedOnceCommitted(t *testing.T) {
	t.Parallel()
	path := testPath(t)
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	const n = 200
	rows := make([]*Request, n)
	for i := range rows {
		rows[i] = &Request{RunID: "r", Purpose: PurposeInference, Model: "m", Test: "t", Repeat: i}
	}
	before := l.wr.commits
	if err := l.InsertRequests(rows); err != nil {
		t.Fatal(err)
	}
	if got := l.wr.commits - before; got != 1 {
		t.Errorf("InsertRequests of %d rows made %d commits, want 1", n, got)
	}
	var a acks
	before = l.wr.commits
	for i, r := range rows {
		l.QueueStart(r.ID, "gpu0", time.Now(), a.ack)
		r.Status, r.Output = StatusCompleted, outputFor(r.ID, 64)
		l.QueueFinish(r, a.ack)
		l.QueueCell(CellRow{RunID: "r", Model: "m", Test: "t", Repeat: i, Status: "completed", Output: r.Output}, a.ack)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if ok, failed := a.heard(); ok != 3*n || len(failed) > 0 {
		t.Fatalf("acks heard %d ok and %v, want %d ok", ok, failed, 3*n)
	}
	if got := l.wr.commits - before; got > 3*n/flushWrites+2 {
		t.Errorf("%d queued writes made %d commits: they were not grouped", 3*n, got)
	}
	// Acknowledged means committed: another process's reader sees it all.
	r, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	reqs, err := r.Requests("r")
	if err != nil {
		t.Fatal(err)
	}
	cells, err := r.Cells("r")
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != n || len(cells) != n {
		t.Fatalf("a reader sees %d requests and %d cells, want %d", len(reqs), len(cells), n)
	}
	for _, q := range reqs {
		if q.Status != StatusCompleted || q.Server != "gpu0" || q.StartedAt.IsZero() || q.Output != outputFor(q.ID, 64) {
			t.Errorf("request %d reads %s on %q, output %q", q.ID, q.Status, q.Server, q.Output)
		}
	}
}

func TestAQueuedWriteIsCommittedWithinFlushEvery(t *testing.T) {
	t.Parallel()
	l := openTest(t)
	r := Request{RunID: "r", Purpose: PurposeInference}
	if _, err := l.InsertRequest(&r); err != nil {
		t.Fatal(err)
	}
	heard := make(chan error, 1)
	r.Status = StatusCompleted
	l.QueueFinish(&r, func(err error) { heard <- err })
	select {
	case err := <-heard:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(100 * FlushEvery):
		t.Fatalf("no commit %s after a queued write, with nothing waiting on it", 100*FlushEvery)
	}
}

// A write that fails takes only itself down: the rest of its batch is
// committed, its Ack and the next Flush hear it, the Flush after does not.
func TestAFailedQueuedWriteFailsAloneAndSurfaces(t *testing.T) {
	t.Parallel()
	l := openTest(t)
	refuse := `CREATE TRIGGER refuse_bad BEFORE INSERT ON cells WHEN NEW.test = 'bad'
		BEGIN SELECT RAISE(ABORT, 'the disk says no'); END`
	if l.d.pg {
		refuse = `CREATE FUNCTION refuse_bad() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN RAISE EXCEPTION 'the disk says no'; END $$;
		CREATE TRIGGER refuse_bad BEFORE INSERT ON cells FOR EACH ROW WHEN (NEW.test = 'bad')
			EXECUTE FUNCTION refuse_bad();`
	}
	if _, err := l.w.DB.Exec(refuse); err != nil {
		t.Fatal(err)
	}
	var a acks
	for _, test := range []string{"t1", "bad", "t2"} {
		l.QueueCell(CellRow{RunID: "r", Model: "m", Test: test, Output: "out " + test}, a.ack)
	}
	err := l.Flush()
	if err == nil || !strings.Contains(err.Error(), "the disk says no") || !strings.Contains(err.Error(), "put cell r/m/bad") {
		t.Fatalf("Flush = %v, want the failed cell named", err)
	}
	if ok, failed := a.heard(); ok != 2 || len(failed) != 1 {
		t.Errorf("acks heard %d ok and %v, want 2 ok and 1 failure", ok, failed)
	}
	cells, err := l.Cells("r")
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 2 || cells[0].Output != "out t1" || cells[1].Output != "out t2" {
		t.Errorf("cells %+v, want t1 and t2", cells)
	}
	if err := l.Flush(); err != nil {
		t.Errorf("a second Flush = %v, want nil: the failure was returned once", err)
	}
}

// StartRequest's guard holds for a queued start: a request CancelOpen has
// closed is not reopened, its Ack hears ErrNotOpen, and the batch goes on.
func TestAQueuedStartOfAClosedRequestDeclines(t *testing.T) {
	t.Parallel()
	l := openTest(t)
	a, b := Request{RunID: "r", Purpose: PurposeInference}, Request{RunID: "s", Purpose: PurposeInference}
	for _, r := range []*Request{&a, &b} {
		if _, err := l.InsertRequest(r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.CancelOpen("r", time.Now()); err != nil {
		t.Fatal(err)
	}
	var heard acks
	l.QueueStart(a.ID, "gpu0", time.Now(), heard.ack)
	l.QueueStart(b.ID, "gpu0", time.Now(), heard.ack)
	l.QueueStart(999, "gpu0", time.Now(), heard.ack)
	err := l.Flush()
	ok, failed := heard.heard()
	if ok != 1 || len(failed) != 2 || !errors.Is(failed[0], ErrNotOpen) || !errors.Is(failed[1], ErrNotFound) {
		t.Fatalf("acks heard %d ok and %v; want 1 ok, then ErrNotOpen and ErrNotFound", ok, failed)
	}
	if !errors.Is(err, ErrNotOpen) || !errors.Is(err, ErrNotFound) {
		t.Errorf("Flush = %v, want both", err)
	}
	reqs, _ := l.Requests("r")
	started, _ := l.Requests("s")
	if len(reqs) != 1 || reqs[0].Status != StatusCanceled || len(started) != 1 || started[0].Status != StatusRunning {
		t.Errorf("rows %+v and %+v: want canceled, and running", reqs, started)
	}
}

// What this process queued is what it reads, before the commit: the judge
// cache (a second identical judge request is not paid for), a cell read
// whole, a run's rows.
func TestReadsSeeTheWritesQueuedBeforeThem(t *testing.T) {
	t.Parallel()
	l := openTest(t)
	j := Request{RunID: "r", Purpose: PurposeJudge, CacheKey: strings.Repeat("ab", 32)}
	if _, err := l.InsertRequest(&j); err != nil {
		t.Fatal(err)
	}
	j.Status, j.Output, j.Verdict = StatusCompleted, "VERDICT: PASS", "pass"
	l.QueueFinish(&j, nil)
	if out, ok, err := l.CachedJudgeOutput(j.CacheKey); err != nil || !ok || out != "VERDICT: PASS" {
		t.Errorf("CachedJudgeOutput after a queued finish = %q, %v, %v", out, ok, err)
	}
	i := Request{RunID: "r", Purpose: PurposeInference, CacheKey: strings.Repeat("cd", 32)}
	if _, err := l.InsertRequest(&i); err != nil {
		t.Fatal(err)
	}
	i.Status, i.Output = StatusCompleted, "42"
	l.QueueFinish(&i, nil)
	if got, ok, err := l.CachedInference(i.CacheKey); err != nil || !ok || got.Output != "42" || got.CacheKey != i.CacheKey {
		t.Errorf("CachedInference after a queued finish = %+v, %v, %v", got, ok, err)
	}
	c := CellRow{RunID: "r", Model: "m", Test: "t", Status: "completed", Output: strings.Repeat("whole ", 100)}
	l.QueueCell(c, nil)
	if got, err := l.Cell("r", "m", "t", 0); err != nil || got != c {
		t.Errorf("Cell after a queued put = %+v, %v", got, err)
	}
	l.QueueVerdict(VerdictRow{RunID: "r", Model: "m", Test: "t", Judge: "j", Verdict: "pass", Detail: `{"raw":"ok"}`}, nil)
	if vs, err := l.CellVerdicts("r", "m", "t", 0); err != nil || len(vs) != 1 || vs[0].Detail != `{"raw":"ok"}` {
		t.Errorf("CellVerdicts after a queued put = %+v, %v", vs, err)
	}
	if got, err := l.Cell("r", "m", "t", 0); err != nil || got != c {
		t.Errorf("Cell once committed = %+v, %v", got, err)
	}
	if _, err := l.Cell("r", "m", "nope", 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("Cell of a cell never put: %v, want ErrNotFound", err)
	}
}

// QueueInserts gives the rows their ids only once committed: sent from the
// Ack's news, a request is always in the ledger first.
func TestQueuedInsertsAreCommittedBeforeTheirAck(t *testing.T) {
	t.Parallel()
	path := testPath(t)
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	r, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rows := []*Request{{RunID: "r", Purpose: PurposeJudge}, {RunID: "r", Purpose: PurposeJudge}}
	seen := make(chan int, 1)
	l.QueueInserts(rows, func(err error) {
		if err != nil {
			seen <- -1
			return
		}
		got, _ := r.Requests("r") // another connection: only what is committed
		seen <- len(got)
	})
	if n := <-seen; n != 2 {
		t.Fatalf("when the Ack ran, a reader saw %d of the 2 rows", n)
	}
	if rows[0].ID == 0 || rows[1].ID != rows[0].ID+1 {
		t.Errorf("ids %d and %d", rows[0].ID, rows[1].ID)
	}
}

func TestCloseCommitsWhatIsQueuedAndLaterWritesFail(t *testing.T) {
	t.Parallel()
	path := testPath(t)
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var a acks
	for i := range 10 {
		l.QueueCell(CellRow{RunID: "r", Model: "m", Test: "t", Repeat: i}, a.ack)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if ok, _ := a.heard(); ok != 10 {
		t.Errorf("%d of 10 queued writes acknowledged by Close", ok)
	}
	l.QueueCell(CellRow{RunID: "r"}, a.ack)
	if _, failed := a.heard(); len(failed) != 1 || !strings.Contains(failed[0].Error(), "closed") {
		t.Errorf("a write after Close heard %v", failed)
	}
	if err := l.PutCell(CellRow{RunID: "r"}); err == nil {
		t.Error("PutCell after Close succeeded")
	}
	again, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if cells, err := again.Cells("r"); err != nil || len(cells) != 10 {
		t.Errorf("after Close, %d cells (%v), want 10", len(cells), err)
	}
}

// TestOpNamesReadAsTheyDid: a write's name, made only for an error, reads
// as the text each write made before it was deferred.
func TestOpNamesReadAsTheyDid(t *testing.T) {
	for _, tt := range []struct {
		op   opName
		want string
	}{
		{named("insert request"), "insert request"},
		{requestOp("finish request", 12), "finish request 12"},
		{requestOp("start request", 0), "start request 0"},
		{opName{what: "put cell", of: ofCell, run: "r1", model: "m", test: "t", repeat: 2}, "put cell r1/m/t#2"},
		{opName{what: "put cell", of: ofCell, run: "r1", test: "t"}, "put cell r1//t#0"},
		{opName{what: "put verdict", of: ofVerdict, run: "r1", model: "m", test: "t", repeat: 0, judge: "j"}, "put verdict r1/m/t#0 by j"},
		{opName{what: "put verdict", of: ofVerdict, run: "r1", model: "m", test: "t"}, "put verdict r1/m/t#0 by "},
	} {
		if got := tt.op.String(); got != tt.want {
			t.Errorf("%+v reads %q, want %q", tt.op, got, tt.want)
		}
	}
}
