package ledger

import (
	"cmp"
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestResumeQueriesTellWhatCompletedFromWhatMustBeSent(t *testing.T) {
	t.Parallel()
	l := openTest(t)
	at := ms("2026-11-23T12:00:00Z")
	var ids []int64
	add := func(r Request, end string, output string) Request {
		t.Helper()
		r.RunID, r.QueuedAt = cmp.Or(r.RunID, "r"), at
		if _, err := l.InsertRequest(&r); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
		if end != "" {
			r.Status, r.Output, r.EndedAt = end, output, at
			if err := l.FinishRequest(&r); err != nil {
				t.Fatal(err)
			}
		}
		return r
	}
	inf := func(model, test string, rep, attempt int) Request {
		return Request{Purpose: PurposeInference, Model: model, Test: test, Repeat: rep, Attempt: attempt}
	}
	jdg := func(cand, test string, rep int, judge string, sample, round int) Request {
		return Request{Purpose: PurposeJudge, Model: "judge-model", CandidateModel: cand, Test: test, Repeat: rep,
			Judge: judge, Sample: sample, Round: round, Attempt: 1}
	}
	add(inf("m1", "t1", 0, 1), StatusError, "")
	retried := add(inf("m1", "t1", 0, 2), StatusCompleted, "second attempt")
	add(inf("m1", "t1", 1, 1), StatusCompleted, "before the crash")
	again := add(inf("m1", "t1", 1, 1), StatusCompleted, "sent again after resume")
	queued := add(inf("m2", "t1", 0, 1), "", "")
	add(inf("m2", "t2", 0, 1), StatusCanceled, "")
	s0 := add(jdg("m1", "t1", 0, "gemma", 0, 0), StatusCompleted, "VERDICT: PASS")
	add(jdg("m1", "t1", 0, "gemma", 1, 0), StatusError, "")
	s0r1 := add(jdg("m1", "t1", 0, "gemma", 0, 1), StatusCompleted, "VERDICT: FAIL")
	add(jdg("m1", "t1", 0, "qwen", 0, 0), "", "")
	add(jdg("", "t1", 0, "gemma", 0, 0), StatusCompleted, "before schema 4")
	add(Request{Purpose: PurposeWarmup, Model: "m1", Server: "gpu0"}, StatusCompleted, "")
	add(Request{RunID: "other", Purpose: PurposeInference, Model: "m1", Test: "t1"}, StatusCompleted, "another run's")

	inference, err := l.CompletedInference("r")
	if err != nil {
		t.Fatal(err)
	}
	wantInf := map[CellKey]string{
		{"m1", "t1", 0}: retried.Output,
		{"m1", "t1", 1}: again.Output,
	}
	gotInf := map[CellKey]string{}
	for k, r := range inference {
		gotInf[k] = r.Output
	}
	if !reflect.DeepEqual(gotInf, wantInf) {
		t.Errorf("CompletedInference = %v, want %v", gotInf, wantInf)
	}
	if r := inference[CellKey{"m1", "t1", 0}]; r.ID != retried.ID || r.Attempt != 2 {
		t.Errorf("the completed attempt of m1/t1#0 is request %d (attempt %d), want %d", r.ID, r.Attempt, retried.ID)
	}

	judged, err := l.CompletedJudge("r")
	if err != nil {
		t.Fatal(err)
	}
	wantJudge := map[JudgeSample]int64{
		{CellKey{"m1", "t1", 0}, "gemma", 0, 0}: s0.ID,
		{CellKey{"m1", "t1", 0}, "gemma", 0, 1}: s0r1.ID,
	}
	gotJudge := map[JudgeSample]int64{}
	for k, r := range judged {
		gotJudge[k] = r.ID
	}
	if !reflect.DeepEqual(gotJudge, wantJudge) {
		t.Errorf("CompletedJudge = %v, want %v", gotJudge, wantJudge)
	}

	open, err := l.OpenRequests("r")
	if err != nil {
		t.Fatal(err)
	}
	var openIDs []int64
	for _, r := range open {
		openIDs = append(openIDs, r.ID)
	}
	if want := []int64{queued.ID, ids[9]}; !slices.Equal(openIDs, want) {
		t.Errorf("OpenRequests = %v, want %v", openIDs, want)
	}

	byCell, err := l.RequestsByCell("r")
	if err != nil {
		t.Fatal(err)
	}
	counts := map[CellKey][]string{}
	for k, rs := range byCell {
		for _, r := range rs {
			counts[k] = append(counts[k], r.Purpose[:1]+":"+r.Status)
		}
	}
	wantCells := map[CellKey][]string{
		{"m1", "t1", 0}: {"i:error", "i:completed", "j:completed", "j:error", "j:completed", "j:queued"},
		{"m1", "t1", 1}: {"i:completed", "i:completed"},
		{"m2", "t1", 0}: {"i:queued"},
		{"m2", "t2", 0}: {"i:canceled"},
		{"", "t1", 0}:   {"j:completed"},
	}
	if !reflect.DeepEqual(counts, wantCells) {
		t.Errorf("RequestsByCell =\n%v\nwant\n%v", counts, wantCells)
	}
}

func TestResumeQueriesSeeARunWhoseProcessDiedAsInterrupted(t *testing.T) {
	t.Parallel()
	base := time.UnixMilli(time.Now().UnixMilli())
	o := newOwners(t)
	w := o.as(Owner{}, base, false)
	if err := w.CreateRun(RunRow{ID: "r", Status: RunRunning, Owner: Owner{PID: 1, Host: "elsewhere"}, Heartbeat: base.Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := seedRequests(w, "r", base.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	// The first read of all is OpenRequests: it reconciles too.
	open, err := w.OpenRequests("r")
	if err != nil || len(open) != 0 {
		t.Fatalf("OpenRequests of a dead run = %+v, %v; want none", open, err)
	}
	byCell, err := w.RequestsByCell("r")
	if err != nil {
		t.Fatal(err)
	}
	interrupted := 0
	for _, rs := range byCell {
		for _, r := range rs {
			if r.Status == StatusInterrupted {
				interrupted++
				if r.BatchID != "" && r.Purpose != PurposeJudge {
					t.Errorf("request %d: batch id on a non-judge request", r.ID)
				}
			}
		}
	}
	if interrupted != 3 {
		t.Errorf("%d requests interrupted, want the 3 that were open", interrupted)
	}
}
