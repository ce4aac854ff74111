package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	"pitwall/edges/batchapi"
	"pitwall/edges/sim"
	"pitwall/gpu/chat"
	"pitwall/gpu/client"
	"pitwall/gpu/simspec"
	"pitwall/runner/ledger"
	"pitwall/runner/state"
)

func init() {
	// Set once, before any test runs: the simulator's batches take
	// milliseconds, not the hours polling is paced for.
	batchPoll = client.BatchPoll{Min: time.Millisecond, Max: 5 * time.Millisecond}
	// As cli wires it.
	RegisterBatchAPI(func(c *client.Client) BatchTransport { return batchapi.New(c) })
}

// batchFleet is the candidates on gpu0 and the judge on api, a simulated
// hosted API (backend openai) whose judge sends its phase as a batch.
const batchJudgeFleet = `
[run]
timeout = "10s"
retries = 1

[[sim.models]]
name = "good"
skill = 1.0
[[sim.models]]
name = "bad"
skill = 0.01
[[sim.models]]
name = "judge"
judge_error_rate = 0.0

[[servers]]
name = "gpu0"
kind = "sim"
slots = 4
models = ["good", "bad"]

[[servers]]
name = "api"
kind = "sim"
slots = 4
models = ["judge"]

[[scoring.judges]]
name = "j"
model = "judge"
server = "api"
batch = true
`

// judgeRows are a run's judge requests in the ledger.
func judgeRows(t *testing.T, led *ledger.Ledger, id string) []ledger.Request {
	t.Helper()
	reqs, err := led.Requests(id)
	if err != nil {
		t.Fatal(err)
	}
	var out []ledger.Request
	for _, q := range reqs {
		if q.Purpose == ledger.PurposeJudge {
			out = append(out, q)
		}
	}
	return out
}

// verdicts maps each cell to the verdict of judge j.
func verdicts(b *state.BatteryRun) map[state.CellRef]string {
	out := map[state.CellRef]string{}
	for _, row := range b.Rows {
		for _, c := range row.Cells {
			if j := c.Judgment("j"); j != nil {
				out[state.CellRef{Test: c.Test, Model: c.Model, Repeat: c.Repeat}] = string(j.Verdict) + " " + string(j.Status)
			}
		}
	}
	return out
}

// allJudged fails the test unless every completed cell has a verdict that
// is not a judge error.
func allJudged(t *testing.T, b *state.BatteryRun) {
	t.Helper()
	c := b.Counts
	if !b.Final || b.Status != state.RunCompleted || c.ToJudge == 0 || c.Judged != c.ToJudge || c.JudgeError != 0 {
		t.Fatalf("run ended %s (%q) with %+v: want every completed cell judged, no judge errors", b.Status, b.Message, c)
	}
}

func batchIDs(bs []sim.BatchInfo) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.ID)
	}
	return out
}

func TestABatchJudgePhaseRunsEndToEnd(t *testing.T) {
	t.Parallel()
	h := newHarness(t, testConfig(t, batchJudgeFleet), true)
	b := h.finish(t)
	allJudged(t, b)
	batches := h.sims.Server("api").Batches()
	if len(batches) != 1 || batches[0].Status != "completed" || batches[0].Total != b.Counts.ToJudge {
		t.Fatalf("batches at the provider: %+v; want one completed batch of %d requests", batches, b.Counts.ToJudge)
	}
	if md := batches[0].Metadata; md["pitwall_run"] != b.ID || md["pitwall_judge"] != "j" {
		t.Errorf("batch metadata %v: want the run and the judge", md)
	}
	rows := judgeRows(t, h.led, b.ID)
	if len(rows) != b.Counts.ToJudge {
		t.Errorf("%d judge rows for %d judged cells", len(rows), b.Counts.ToJudge)
	}
	for _, q := range rows {
		if q.Status != ledger.StatusCompleted || q.BatchID != batches[0].ID || q.Server != "api" || q.Verdict == "" || q.StartedAt.IsZero() {
			t.Errorf("judge row %d: %s batch %q server %q verdict %q; want completed from batch %s", q.ID, q.Status, q.BatchID, q.Server, q.Verdict, batches[0].ID)
		}
	}

	// The same run judged live gives the same verdicts, cell for cell.
	liveCfg := testConfig(t, batchJudgeFleet)
	liveCfg.Scoring.Judges[0].Batch = false
	live := newHarness(t, liveCfg, true)
	lb := live.finish(t)
	if got, want := verdicts(b), verdicts(lb); len(got) == 0 || !mapsEqual(got, want) {
		t.Errorf("batched verdicts %v, live %v", got, want)
	}
	if n := len(live.sims.Server("api").Batches()); n != 0 {
		t.Errorf("a judge without batch = true created %d batches", n)
	}
}

func mapsEqual[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestABatchJudgeOnAServerWithoutABatchAPIGoesLive(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, batchJudgeFleet)
	cfg.Servers[1].Sim = &simspec.Server{Backend: sim.BackendLMStudio}
	h := newHarness(t, cfg, true)
	b := h.finish(t)
	allJudged(t, b)
	for _, q := range judgeRows(t, h.led, b.ID) {
		if q.BatchID != "" || q.Status != ledger.StatusCompleted || q.Attempt != 1 {
			t.Errorf("judge row %d: %s batch %q attempt %d; want answered live at once", q.ID, q.Status, q.BatchID, q.Attempt)
		}
	}
}

func TestABatchJudgeGoesLiveInABuildWithNoBatchAPI(t *testing.T) {
	// Not parallel: it unregisters the package's Batch API for its run.
	api := registeredBatchAPI()
	RegisterBatchAPI(nil)
	t.Cleanup(func() { RegisterBatchAPI(api) })
	h := newHarness(t, testConfig(t, batchJudgeFleet), true)
	b := h.finish(t)
	allJudged(t, b)
	if n := len(h.sims.Server("api").Batches()); n != 0 {
		t.Errorf("%d batches at the provider with no Batch API registered", n)
	}
	for _, q := range judgeRows(t, h.led, b.ID) {
		if q.BatchID != "" || q.Status != ledger.StatusCompleted || q.Attempt != 1 {
			t.Errorf("judge row %d: %s batch %q attempt %d; want answered live at once", q.ID, q.Status, q.BatchID, q.Attempt)
		}
	}
}

func TestAFailedBatchIsRetriedAsABatch(t *testing.T) {
	t.Parallel()
	h := newHarness(t, testConfig(t, batchJudgeFleet), true)
	h.sims.Server("api").SetFaults(simspec.Faults{BatchFail: 1})
	b := h.finish(t)
	allJudged(t, b)
	batches := h.sims.Server("api").Batches()
	if len(batches) != 2 || batches[0].Status != "failed" || batches[1].Status != "completed" {
		t.Fatalf("batches %+v: want a failed one and its retry, completed", batches)
	}
	byAttempt := map[int][]ledger.Request{}
	for _, q := range judgeRows(t, h.led, b.ID) {
		byAttempt[q.Attempt] = append(byAttempt[q.Attempt], q)
	}
	if len(byAttempt[1]) != b.Counts.ToJudge || len(byAttempt[2]) != b.Counts.ToJudge || len(byAttempt) != 2 {
		t.Fatalf("judge rows by attempt: %d, %d (of %d attempts); want every request tried twice", len(byAttempt[1]), len(byAttempt[2]), len(byAttempt))
	}
	for _, q := range byAttempt[1] {
		if q.Status != ledger.StatusError || q.BatchID != batches[0].ID || q.ErrorClass != string(chat.ClassUnavailable) {
			t.Errorf("first attempt %d: %s %s batch %q (%s); want the failed batch's error", q.ID, q.Status, q.ErrorClass, q.BatchID, q.Error)
		}
	}
	for _, q := range byAttempt[2] {
		if q.Status != ledger.StatusCompleted || q.BatchID != batches[1].ID {
			t.Errorf("second attempt %d: %s batch %q; want answered by the retried batch", q.ID, q.Status, q.BatchID)
		}
	}
}

func TestAnExpiredBatchsRequestsGoLive(t *testing.T) {
	t.Parallel()
	h := newHarness(t, testConfig(t, batchJudgeFleet), true)
	// Each batch expires with half its requests run: the first answers
	// half, its retry half of the rest, and what is left goes live.
	h.sims.Server("api").SetFaults(simspec.Faults{BatchExpire: 2})
	b := h.finish(t)
	allJudged(t, b)
	batches := h.sims.Server("api").Batches()
	if len(batches) != 2 || batches[0].Status != "expired" || batches[1].Status != "expired" {
		t.Fatalf("batches %+v: want two, both expired", batches)
	}
	n := b.Counts.ToJudge
	first, second := n/2, (n-n/2)/2
	wantLive := n - first - second
	if wantLive == 0 {
		t.Fatalf("%d requests leave nothing to send live: the test needs more", n)
	}
	answered := map[string]int{}
	for _, q := range judgeRows(t, h.led, b.ID) {
		if q.Status == ledger.StatusCompleted {
			answered[q.BatchID]++
			if q.BatchID == "" && q.Server != "api" {
				t.Errorf("row %d answered live by %q, want api", q.ID, q.Server)
			}
		}
	}
	want := map[string]int{batchIDs(batches)[0]: first, batchIDs(batches)[1]: second, "": wantLive}
	if !mapsEqual(answered, want) {
		t.Errorf("answers by batch (\"\" = live) %v, want %v", answered, want)
	}
}

// judgeRunning reports whether a judge request of a snapshot is running:
// for a batch judge, whether its batch exists.
func judgeRunning(b *state.BatteryRun) bool {
	for _, row := range b.Rows {
		for _, c := range row.Cells {
			if j := c.Judgment("j"); j != nil && j.Status == state.JudgmentRunning {
				return true
			}
		}
	}
	return false
}

func TestAResumedRunPollsTheBatchItLeftRunning(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, batchJudgeFleet)
	h := newHarness(t, cfg, true)
	api := h.sims.Server("api")
	api.SetFaults(simspec.Faults{BatchHold: true}) // the batch waits until the fault is lifted
	w := &watch{t: t, run: h.run}
	if err := h.run.Start(); err != nil {
		t.Fatal(err)
	}
	w.until("the judge batch running", judgeRunning)
	// The process goes away mid-batch: nothing is cancelled at the provider.
	h.run.Close()
	held := api.Batches()
	if len(held) != 1 || (held[0].Status != "validating" && held[0].Status != "in_progress") {
		t.Fatalf("batches after the close: %+v; want one still running", held)
	}
	for _, q := range judgeRows(t, h.led, h.run.ID()) {
		if q.Status != ledger.StatusCanceled || q.BatchID != held[0].ID {
			t.Errorf("row %d after the close: %s batch %q; want cancelled, naming the batch it rides", q.ID, q.Status, q.BatchID)
		}
	}
	api.SetFaults(simspec.Faults{})

	run, err := Resume(cfg, h.run.ID(), Again{}, Options{Fleet: h.fleet, Ledger: h.led,
		Interval: 5 * time.Millisecond, Backoff: func(int) time.Duration { return time.Millisecond }})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := run.Wait(ctx)
	allJudged(t, b)
	if after := api.Batches(); len(after) != 1 || after[0].Status != "completed" {
		t.Fatalf("batches after the resume: %+v; want the first one, completed, and no second", after)
	}
	var answered int
	for _, q := range judgeRows(t, h.led, run.ID()) {
		if q.Status == ledger.StatusCompleted {
			answered++
			if q.BatchID != held[0].ID {
				t.Errorf("row %d answered by batch %q, want %s", q.ID, q.BatchID, held[0].ID)
			}
		}
	}
	if answered != b.Counts.ToJudge {
		t.Errorf("%d judge requests answered for %d cells", answered, b.Counts.ToJudge)
	}

	// A re-judge asks afresh: the batch whose answers the run has read is
	// not found again, though the stop's rows are still unanswered.
	if err := run.RejudgeAll(""); err != nil {
		t.Fatal(err)
	}
	rejudged := untilRows(t, run, h.led, func(rows []ledger.Request) bool {
		n := 0
		for _, q := range rows {
			if q.Round == 1 && q.Status == ledger.StatusCompleted {
				n++
			}
		}
		return n == b.Counts.ToJudge
	})
	after := api.Batches()
	if len(after) != 2 {
		t.Fatalf("batches after a re-judge: %+v; want a second one", after)
	}
	for _, q := range rejudged {
		if q.Round == 1 && q.BatchID != after[1].ID {
			t.Errorf("re-judge row %d answered by batch %q, want the new %s", q.ID, q.BatchID, after[1].ID)
		}
	}
}

// untilRows reads a run's snapshots until its judge rows satisfy done, and
// returns them. A snapshot follows every change, so the rows are read
// again after each.
func untilRows(t *testing.T, run *Run, led *ledger.Ledger, done func([]ledger.Request) bool) []ledger.Request {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		rows := judgeRows(t, led, run.ID())
		if done(rows) {
			return rows
		}
		select {
		case <-run.Snapshots():
		case <-deadline:
			t.Fatalf("the judge rows never got there: %d rows", len(rows))
		}
	}
}

func TestARunKilledMidBatchResumesItWithoutASecondBatch(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, batchJudgeFleet)
	h := newHarness(t, cfg, true)
	api := h.sims.Server("api")
	api.SetFaults(simspec.Faults{BatchHold: true})
	w := &watch{t: t, run: h.run}
	if err := h.run.Start(); err != nil {
		t.Fatal(err)
	}
	w.until("the judge batch running", judgeRunning)
	// What a kill leaves in the ledger: nothing written after this moment,
	// so the judge rows stay open and never learn their batch's id.
	_ = h.led.Close()
	h.run.Close()
	api.SetFaults(simspec.Faults{})
	led, err := ledger.Open(cfg.DB)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = led.Close() })
	left := judgeRows(t, led, h.run.ID())
	for _, q := range left {
		if q.Status == ledger.StatusCompleted || q.BatchID != "" {
			t.Fatalf("row %d after the kill: %s batch %q; the test needs rows that never learnt their batch", q.ID, q.Status, q.BatchID)
		}
	}
	if len(left) == 0 {
		t.Fatal("no judge rows before the kill")
	}

	run, err := Resume(cfg, h.run.ID(), Again{}, Options{Fleet: h.fleet, Ledger: led,
		Interval: 5 * time.Millisecond, Backoff: func(int) time.Duration { return time.Millisecond }})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := run.Wait(ctx)
	allJudged(t, b)
	batches := api.Batches()
	if len(batches) != 1 || batches[0].Status != "completed" {
		t.Fatalf("batches after the resume: %+v; want the one the killed run created, and no second", batches)
	}
	for _, q := range judgeRows(t, led, run.ID()) {
		if q.Status == ledger.StatusCompleted && q.BatchID != batches[0].ID {
			t.Errorf("row %d answered by batch %q, want %s", q.ID, q.BatchID, batches[0].ID)
		}
	}
}

func TestABatchErrorLineFailsItsSampleAlone(t *testing.T) {
	t.Parallel()
	h := newHarness(t, testConfig(t, batchJudgeFleet), true)
	// Some of the batch's requests answer 500: their lines land in the
	// error file, and only their samples fail.
	h.sims.Server("api").SetFaults(simspec.Faults{ErrorRate: 0.5})
	b := h.finish(t)
	var failed, answered int
	for _, q := range judgeRows(t, h.led, b.ID) {
		if q.Attempt != 1 || q.BatchID == "" {
			t.Errorf("row %d: attempt %d batch %q; want one try, in the batch", q.ID, q.Attempt, q.BatchID)
		}
		switch q.Status {
		case ledger.StatusError:
			failed++
			if q.ErrorClass != string(chat.ClassHTTP5xx) {
				t.Errorf("row %d: class %s (%s), want the line's 500", q.ID, q.ErrorClass, q.Error)
			}
		case ledger.StatusCompleted:
			answered++
		}
	}
	if failed == 0 || answered == 0 {
		t.Fatalf("%d failed and %d answered: the test needs both", failed, answered)
	}
	if b.Status != state.RunCompleted || b.Counts.JudgeError != failed || b.Counts.Judged != b.Counts.ToJudge {
		t.Errorf("run %s (%q) with %+v; want it completed, with %d judge errors", b.Status, b.Message, b.Counts, failed)
	}
	if n := len(h.sims.Server("api").Batches()); n != 1 {
		t.Errorf("%d batches: an error line is not a failed batch", n)
	}
}

func TestABatchJudgeJudgesPipelinedCellsInBatches(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, batchJudgeFleet)
	cfg.Run.Judging = "pipelined"
	h := newHarness(t, cfg, true)
	b := h.finish(t)
	allJudged(t, b)
	batches := h.sims.Server("api").Batches()
	total := 0
	for _, bi := range batches {
		total += bi.Total
	}
	if len(batches) == 0 || total != b.Counts.ToJudge {
		t.Errorf("%d batches holding %d requests for %d cells", len(batches), total, b.Counts.ToJudge)
	}
	for _, q := range judgeRows(t, h.led, b.ID) {
		if q.Status != ledger.StatusCompleted || q.BatchID == "" {
			t.Errorf("row %d: %s batch %q; want answered by a batch", q.ID, q.Status, q.BatchID)
		}
	}
}

// A request a batch left unanswered and sent live has its retries whole:
// the batch tries before it are not its failures.
func TestALiveFallbackKeepsItsRetries(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, batchJudgeFleet)
	cfg.Run.Retries = 2
	h := newHarness(t, cfg, true)
	// Both batches fail validation, and every live request fails too.
	h.sims.Server("api").SetFaults(simspec.Faults{BatchFail: 2, ErrorRate: 1})
	b := h.finish(t)
	if b.Counts.ToJudge == 0 {
		t.Fatal("nothing to judge")
	}
	live := map[state.CellRef]int{}
	for _, q := range judgeRows(t, h.led, b.ID) {
		if q.BatchID == "" && q.Status == ledger.StatusError {
			live[state.CellRef{Test: q.Test, Model: q.CandidateModel, Repeat: q.Repeat}]++
		}
	}
	for ref, n := range live {
		if n != 1+cfg.Run.Retries {
			t.Errorf("%s × %s: %d live tries, want %d (the first and %d retries)", ref.Model, ref.Test, n, 1+cfg.Run.Retries, cfg.Run.Retries)
		}
	}
	if len(live) != b.Counts.ToJudge {
		t.Errorf("%d cells went live, want all %d", len(live), b.Counts.ToJudge)
	}
}

// A batch line goes to the provider as it is, not through the fleet: it
// names the judge's model as its server lists it (here in capitals), or
// the provider answers each line that it has no such model.
func TestABatchLineNamesTheModelAsItsServerDoes(t *testing.T) {
	t.Parallel()
	fleet := strings.NewReplacer(`name = "judge"`, `name = "JUDGE"`, `models = ["judge"]`, `models = ["JUDGE"]`).Replace(batchJudgeFleet)
	h := newHarness(t, testConfig(t, fleet), true)
	b := h.finish(t)
	allJudged(t, b)
	if batches := h.sims.Server("api").Batches(); len(batches) != 1 || batches[0].Status != "completed" {
		t.Fatalf("batches at the provider: %+v; want one completed", batches)
	}
	for _, q := range judgeRows(t, h.led, b.ID) {
		if q.Model != "judge" {
			t.Errorf("judge row %d names model %q, want the config's judge", q.ID, q.Model)
		}
	}
}
