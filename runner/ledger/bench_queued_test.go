package ledger

import (
	"path/filepath"
	"testing"
	"time"
)

// writeJudgedCellQueued writes one judged cell as the engine does with the
// batched writer: the two request rows committed before they are sent
// (InsertRequest), everything else queued, acknowledged by ack.
func writeJudgedCellQueued(l *Ledger, run string, c cellTexts, ack Ack) error {
	r := c.inference(run)
	if _, err := l.InsertRequest(&r); err != nil {
		return err
	}
	l.QueueStart(r.ID, "gpu0", time.Now(), ack)
	ended(&r, c.reply)
	l.QueueFinish(&r, ack)
	l.QueueCell(c.cell(run, r), ack)
	j := c.judge(run)
	if _, err := l.InsertRequest(&j); err != nil {
		return err
	}
	l.QueueStart(j.ID, "gpu1", time.Now(), ack)
	ended(&j, c.judgeOut)
	j.Verdict = c.verdict
	l.QueueFinish(&j, ack)
	l.QueueVerdict(c.verdictRow(run), ack)
	return nil
}

// BenchmarkJudgedCellQueued measures a judged cell written as the engine
// writes it now: two synchronous inserts (each carrying what was queued
// before it into its commit) and six queued writes. commits/cell is how
// many transactions a cell costs.
func BenchmarkJudgedCellQueued(b *testing.B) {
	l, err := Open(filepath.Join(b.TempDir(), "ledger.db"))
	if err != nil {
		b.Fatal(err)
	}
	const run = "bench"
	ack := func(err error) {
		if err != nil {
			b.Error(err)
		}
	}
	b.ReportAllocs()
	n, cpu := 0, cpuTime()
	for b.Loop() {
		if err := writeJudgedCellQueued(l, run, judgedCell(n), ack); err != nil {
			b.Fatal(err)
		}
		n++
	}
	if err := l.Flush(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(n), "cpu-µs/cell")
	b.ReportMetric(float64(l.wr.commits)/float64(n), "commits/cell")
	b.ReportMetric(float64(ledgerBytes(b, l))/float64(n), "ledger-B/cell")
}

// BenchmarkJudgedCellQueuedSubmissions is the same cells with their
// inserts made a submission at a time (InsertRequests, as the engine does
// before one SubmitAll): the writer's cost once nothing makes it commit
// per cell.
func BenchmarkJudgedCellQueuedSubmissions(b *testing.B) {
	const per = 100
	l, err := Open(filepath.Join(b.TempDir(), "ledger.db"))
	if err != nil {
		b.Fatal(err)
	}
	const run = "bench"
	ack := func(err error) {
		if err != nil {
			b.Error(err)
		}
	}
	b.ReportAllocs()
	n, cpu := 0, cpuTime()
	var (
		cells []cellTexts
		infer []*Request
		judge []*Request
	)
	submit := func() {
		if err := l.InsertRequests(infer); err != nil {
			b.Fatal(err)
		}
		for i, r := range infer {
			l.QueueStart(r.ID, "gpu0", time.Now(), ack)
			ended(r, cells[i].reply)
			l.QueueFinish(r, ack)
			l.QueueCell(cells[i].cell(run, *r), ack)
		}
		if err := l.InsertRequests(judge); err != nil {
			b.Fatal(err)
		}
		for i, j := range judge {
			l.QueueStart(j.ID, "gpu1", time.Now(), ack)
			ended(j, cells[i].judgeOut)
			j.Verdict = cells[i].verdict
			l.QueueFinish(j, ack)
			l.QueueVerdict(cells[i].verdictRow(run), ack)
		}
		cells, infer, judge = cells[:0], infer[:0], judge[:0]
	}
	for b.Loop() {
		c := judgedCell(n)
		cells = append(cells, c)
		r, j := c.inference(run), c.judge(run)
		infer, judge = append(infer, &r), append(judge, &j)
		n++
		if len(cells) == per {
			submit()
		}
	}
	if len(cells) > 0 {
		submit() // untimed: the last, partial submission
	}
	if err := l.Flush(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(n), "cpu-µs/cell")
	b.ReportMetric(float64(l.wr.commits)/float64(n), "commits/cell")
	b.ReportMetric(float64(ledgerBytes(b, l))/float64(n), "ledger-B/cell")
}
