package ledger

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestRequestRoundTripsThroughItsLife(t *testing.T) {
	t.Parallel()
	queued := ms("2026-11-21T15:42:03.100Z")
	started := ms("2026-11-21T15:42:04.200Z")
	ended := ms("2026-11-21T15:42:09.300Z")
	tests := []struct {
		name   string
		insert Request
		start  bool
		finish Request // by the inserted id; zero Status to leave it open
		want   Request // ID filled in by the test
	}{
		{
			name: "inference completed",
			insert: Request{RunID: "r1", Purpose: PurposeInference, Model: "qwen3-8b", Test: "t1",
				Repeat: 2, Attempt: 1, Input: `[{"role":"user","content":"hi"}]`,
				Params: `{"temperature":0,"seed":42}`, QueuedAt: queued},
			start: true,
			finish: Request{Status: StatusCompleted, Output: "héllo", Reasoning: "think",
				ToolCalls: `[{"name":"f","arguments":"{}"}]`, PromptTokens: 12, CompletionTokens: 34,
				TTFT: 1500 * time.Microsecond, Latency: 5*time.Second + 7*time.Microsecond, EndedAt: ended},
			want: Request{RunID: "r1", Purpose: PurposeInference, Server: "gpu0", Model: "qwen3-8b",
				Test: "t1", Repeat: 2, Attempt: 1, Input: `[{"role":"user","content":"hi"}]`,
				Params: `{"temperature":0,"seed":42}`, Status: StatusCompleted, Output: "héllo",
				Reasoning: "think", ToolCalls: `[{"name":"f","arguments":"{}"}]`, PromptTokens: 12,
				CompletionTokens: 34, TTFT: 1500 * time.Microsecond,
				Latency: 5*time.Second + 7*time.Microsecond, QueuedAt: queued, StartedAt: started, EndedAt: ended},
		},
		{
			name: "inference error",
			insert: Request{RunID: "r1", Purpose: PurposeInference, Model: "m", Test: "t2",
				Attempt: 3, QueuedAt: queued},
			start: true,
			finish: Request{Status: StatusError, ErrorClass: "timeout",
				Error: "context deadline exceeded", Latency: 300 * time.Second, EndedAt: ended},
			want: Request{RunID: "r1", Purpose: PurposeInference, Server: "gpu0", Model: "m", Test: "t2",
				Attempt: 3, Status: StatusError, ErrorClass: "timeout",
				Error: "context deadline exceeded", Latency: 300 * time.Second,
				QueuedAt: queued, StartedAt: started, EndedAt: ended},
		},
		{
			name: "judge through a batch, never started",
			insert: Request{RunID: "r1", Purpose: PurposeJudge, Model: "gemma", Test: "t1",
				Judge: "gemma", Sample: 2, CacheKey: "k1", Status: StatusSubmitted, QueuedAt: queued},
			finish: Request{Status: StatusCompleted, Output: "VERDICT: PASS", Verdict: "pass",
				Server: "openai", BatchID: "batch_1", StartedAt: started, EndedAt: ended},
			want: Request{RunID: "r1", Purpose: PurposeJudge, Server: "openai", Model: "gemma",
				Test: "t1", Judge: "gemma", Sample: 2, CacheKey: "k1", BatchID: "batch_1",
				Status: StatusCompleted, Output: "VERDICT: PASS", Verdict: "pass",
				QueuedAt: queued, StartedAt: started, EndedAt: ended},
		},
		{
			name: "judge naming the cell it judges",
			insert: Request{RunID: "r1", Purpose: PurposeJudge, Model: "gemma-judge", CandidateModel: "qwen3-8b",
				Test: "t1", Repeat: 1, Judge: "gemma", Sample: 2, Round: 3, Attempt: 1, QueuedAt: queued},
			want: Request{RunID: "r1", Purpose: PurposeJudge, Model: "gemma-judge", CandidateModel: "qwen3-8b",
				Test: "t1", Repeat: 1, Judge: "gemma", Sample: 2, Round: 3, Attempt: 1, Status: StatusQueued, QueuedAt: queued},
		},
		{
			name:   "warm-up left queued",
			insert: Request{RunID: "r1", Purpose: PurposeWarmup, Server: "gpu1", Model: "m", QueuedAt: queued},
			want: Request{RunID: "r1", Purpose: PurposeWarmup, Server: "gpu1", Model: "m",
				Status: StatusQueued, QueuedAt: queued},
		},
		{
			name: "judge cache hit, written completed at once",
			insert: Request{RunID: "r1", Purpose: PurposeJudge, Server: "(cache)", Model: "gemma",
				Test: "t1", Judge: "gemma", Attempt: 1, CacheKey: "k1", Status: StatusCompleted,
				Output: "VERDICT: PASS", Verdict: "pass", Reasoning: "r", ToolCalls: "[]",
				ErrorClass: "c", Error: "e", PromptTokens: 1, CompletionTokens: 2,
				TTFT: time.Millisecond, Latency: 2 * time.Millisecond,
				QueuedAt: queued, StartedAt: queued, EndedAt: queued},
			want: Request{RunID: "r1", Purpose: PurposeJudge, Server: "(cache)", Model: "gemma",
				Test: "t1", Judge: "gemma", Attempt: 1, CacheKey: "k1", Status: StatusCompleted,
				Output: "VERDICT: PASS", Verdict: "pass", Reasoning: "r", ToolCalls: "[]",
				ErrorClass: "c", Error: "e", PromptTokens: 1, CompletionTokens: 2,
				TTFT: time.Millisecond, Latency: 2 * time.Millisecond,
				QueuedAt: queued, StartedAt: queued, EndedAt: queued},
		},
		{
			name: "warm-up written running, then finished",
			insert: Request{RunID: "r1", Purpose: PurposeWarmup, Server: "gpu1", Model: "m",
				Attempt: 1, Status: StatusRunning, QueuedAt: queued, StartedAt: queued},
			finish: Request{Status: StatusCompleted, EndedAt: ended},
			want: Request{RunID: "r1", Purpose: PurposeWarmup, Server: "gpu1", Model: "m",
				Attempt: 1, Status: StatusCompleted, QueuedAt: queued, StartedAt: queued, EndedAt: ended},
		},
		{
			name:   "probe left running",
			insert: Request{RunID: "r1", Purpose: PurposeProbe, QueuedAt: queued},
			start:  true,
			want: Request{RunID: "r1", Purpose: PurposeProbe, Server: "gpu0", Status: StatusRunning,
				QueuedAt: queued, StartedAt: started},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := openTest(t)
			r := tt.insert
			id, err := l.InsertRequest(&r)
			if err != nil {
				t.Fatal(err)
			}
			if id == 0 || r.ID != id {
				t.Fatalf("InsertRequest returned %d and set r.ID = %d", id, r.ID)
			}
			if tt.start {
				if err := l.StartRequest(id, "gpu0", started); err != nil {
					t.Fatal(err)
				}
			}
			if tt.finish.Status != "" {
				f := tt.finish
				f.ID = id
				if err := l.FinishRequest(&f); err != nil {
					t.Fatal(err)
				}
			}
			got, err := l.Requests("r1")
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			want.ID = id
			if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
				t.Errorf("Requests:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestInsertRequestDefaultsAndValidates(t *testing.T) {
	t.Parallel()
	l := openTest(t)
	before := time.Now().Add(-time.Second)
	r := Request{RunID: "r1", Purpose: PurposeInference}
	if _, err := l.InsertRequest(&r); err != nil {
		t.Fatal(err)
	}
	if r.Status != StatusQueued || r.QueuedAt.Before(before) {
		t.Errorf("defaults: status %q, queued at %v", r.Status, r.QueuedAt)
	}
	bad := []Request{
		{RunID: "r1", Purpose: ""},
		{RunID: "r1", Purpose: "chat"},
		{RunID: "r1", Purpose: PurposeJudge, Status: "done"},
	}
	for _, b := range bad {
		if _, err := l.InsertRequest(&b); err == nil {
			t.Errorf("accepted purpose %q status %q", b.Purpose, b.Status)
		}
	}
	if err := l.FinishRequest(&Request{ID: r.ID, Status: StatusRunning}); err == nil {
		t.Error("FinishRequest accepted a status that is not an end")
	}
}

func TestRequestUpdatesOfUnknownIDsAreNotFound(t *testing.T) {
	t.Parallel()
	l := openTest(t)
	if err := l.StartRequest(42, "gpu0", time.Now()); !errors.Is(err, ErrNotFound) {
		t.Errorf("StartRequest: %v, want ErrNotFound", err)
	}
	if err := l.FinishRequest(&Request{ID: 42, Status: StatusCompleted}); !errors.Is(err, ErrNotFound) {
		t.Errorf("FinishRequest: %v, want ErrNotFound", err)
	}
}

func TestCancelOpenLeavesNothingInFlight(t *testing.T) {
	t.Parallel()
	l := openTest(t)
	at := ms("2026-11-21T16:00:00Z")
	mk := func(run, status string, finish string) int64 {
		t.Helper()
		r := Request{RunID: run, Purpose: PurposeInference, Status: status}
		id, err := l.InsertRequest(&r)
		if err != nil {
			t.Fatal(err)
		}
		if finish != "" {
			if err := l.FinishRequest(&Request{ID: id, Status: finish, Output: "kept"}); err != nil {
				t.Fatal(err)
			}
		}
		return id
	}
	mk("r1", StatusQueued, "")
	mk("r1", StatusSubmitted, "")
	running := mk("r1", StatusQueued, "")
	if err := l.StartRequest(running, "gpu0", at); err != nil {
		t.Fatal(err)
	}
	mk("r1", StatusRunning, StatusCompleted)
	mk("r1", StatusRunning, StatusError)
	other := mk("r2", StatusQueued, "")

	n, err := l.CancelOpen("r1", at)
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("CancelOpen cancelled %d, want 3", n)
	}
	reqs, err := l.Requests("r1")
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, r := range reqs {
		counts[r.Status]++
		if r.Status == StatusCanceled && r.EndedAt != at {
			t.Errorf("request %d cancelled with end %v, want %v", r.ID, r.EndedAt, at)
		}
		if r.Status == StatusCompleted && r.Output != "kept" {
			t.Errorf("completed request %d lost its output", r.ID)
		}
	}
	want := map[string]int{StatusCanceled: 3, StatusCompleted: 1, StatusError: 1}
	if !reflect.DeepEqual(counts, want) {
		t.Errorf("statuses after CancelOpen = %v, want %v", counts, want)
	}
	if err := l.StartRequest(running, "gpu1", at); !errors.Is(err, ErrNotOpen) {
		t.Errorf("starting a cancelled request: %v, want ErrNotOpen", err)
	}
	r2, err := l.Requests("r2")
	if err != nil {
		t.Fatal(err)
	}
	if len(r2) != 1 || r2[0].ID != other || r2[0].Status != StatusQueued {
		t.Errorf("CancelOpen touched another run: %+v", r2)
	}
	if n, err := l.CancelOpen("r1", at); err != nil || n != 0 {
		t.Errorf("second CancelOpen = %d, %v; want 0", n, err)
	}
}

func TestCachedJudgeOutputOnlyHitsCompletedJudgeRequests(t *testing.T) {
	t.Parallel()
	l := openTest(t)
	add := func(run, purpose, key, status, output string) {
		t.Helper()
		r := Request{RunID: run, Purpose: purpose, CacheKey: key}
		if _, err := l.InsertRequest(&r); err != nil {
			t.Fatal(err)
		}
		if status != StatusQueued {
			if err := l.FinishRequest(&Request{ID: r.ID, Status: status, Output: output}); err != nil {
				t.Fatal(err)
			}
		}
	}
	add("r1", PurposeJudge, "hit", StatusCompleted, "VERDICT: PASS (old)")
	add("r2", PurposeJudge, "hit", StatusCompleted, "VERDICT: FAIL (newest)")
	add("r2", PurposeJudge, "hit", StatusError, "partial")
	add("r1", PurposeJudge, "errored", StatusError, "partial")
	add("r1", PurposeJudge, "cancelled", StatusCanceled, "")
	add("r1", PurposeJudge, "queued", StatusQueued, "")
	add("r1", PurposeInference, "inference", StatusCompleted, "not a judge")
	add("r1", PurposeJudge, "", StatusCompleted, "no key")

	tests := []struct {
		key    string
		want   string
		wantOK bool
	}{
		{"hit", "VERDICT: FAIL (newest)", true},
		{"errored", "", false},
		{"cancelled", "", false},
		{"queued", "", false},
		{"inference", "", false},
		{"", "", false},
		{"absent", "", false},
	}
	for _, tt := range tests {
		got, ok, err := l.CachedJudgeOutput(tt.key)
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("CachedJudgeOutput(%q) = %q, %v; want %q, %v", tt.key, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestCachedJudgeOutputIsTheNewestToEnd(t *testing.T) {
	t.Parallel()
	l := openTest(t)
	at := func(s string) time.Time { return ms("2026-11-23T12:00:" + s + "Z") }
	insert := func(r Request) int64 {
		t.Helper()
		r.RunID, r.Purpose, r.CacheKey = "r", PurposeJudge, "k"
		id, err := l.InsertRequest(&r)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	// Run 1 judged the cell 0.83.
	insert(Request{Status: StatusCompleted, Output: "SCORE: 0.83", QueuedAt: at("00"), EndedAt: at("01")})
	// A re-judge is sent; while it runs, run 2 takes 0.83 from the cache,
	// written completed at once, with a larger id.
	rejudge := insert(Request{QueuedAt: at("10")})
	insert(Request{Status: StatusCompleted, Server: "(cache)", Output: "SCORE: 0.83", QueuedAt: at("11"), EndedAt: at("11")})
	if err := l.FinishRequest(&Request{ID: rejudge, Status: StatusCompleted, Output: "SCORE: 0.98", EndedAt: at("20")}); err != nil {
		t.Fatal(err)
	}
	got, ok, err := l.CachedJudgeOutput("k")
	if err != nil || !ok || got != "SCORE: 0.98" {
		t.Errorf("CachedJudgeOutput = %q, %v, %v; want the re-judge's SCORE: 0.98", got, ok, err)
	}
}

func TestCachedInferenceIsTheNewestCompletedInference(t *testing.T) {
	t.Parallel()
	l := openTest(t)
	at := func(s string) time.Time { return ms("2026-11-23T12:00:" + s + "Z") }
	add := func(purpose, key, status, output string, ended time.Time) Request {
		t.Helper()
		r := Request{RunID: "r", Purpose: purpose, Model: "m", Test: "t", CacheKey: key, Status: status,
			Output: output, Reasoning: "why " + output, ToolCalls: `[{"name":"f"}]`, PromptTokens: 7,
			CompletionTokens: 11, TTFT: time.Millisecond, Latency: time.Second, QueuedAt: ended, StartedAt: ended, EndedAt: ended}
		if _, err := l.InsertRequest(&r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	add(PurposeInference, "k", StatusCompleted, "old", at("01"))
	want := add(PurposeInference, "k", StatusCompleted, "new", at("05"))
	add(PurposeInference, "k", StatusCompleted, "inserted later, ended earlier", at("03"))
	add(PurposeInference, "k", StatusError, "newer but failed", at("09"))
	add(PurposeInference, "k", StatusCanceled, "cancelled", at("10"))
	add(PurposeJudge, "k", StatusCompleted, "a judge's", at("11"))
	add(PurposeInference, "failed-only", StatusError, "x", at("01"))
	add(PurposeInference, "", StatusCompleted, "no key", at("01"))

	got, ok, err := l.CachedInference("k")
	if err != nil || !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("CachedInference(k):\n got %+v, %v, %v\nwant %+v", got, ok, err, want)
	}
	for _, key := range []string{"failed-only", "", "absent"} {
		if got, ok, err := l.CachedInference(key); err != nil || ok {
			t.Errorf("CachedInference(%q) = %+v, %v, %v; want a miss", key, got, ok, err)
		}
	}
	if out, ok, _ := l.CachedJudgeOutput("k"); !ok || out != "a judge's" {
		t.Errorf("the judge cache read %q, %v: the two caches must not mix", out, ok)
	}
}

// A request is written with the short statement (insertPendingSQL) only
// while every field that statement leaves out is zero: any of them set,
// and the insert writes every column. A field added to Request later is
// left out until this list says the short statement writes it.
func TestPendingInsertLeavesOutOnlyZeroFields(t *testing.T) {
	written := map[string]bool{"ID": true, "RunID": true, "Purpose": true, "Server": true, "Model": true,
		"Test": true, "Repeat": true, "Judge": true, "Sample": true, "Attempt": true, "Input": true,
		"Params": true, "CacheKey": true, "BatchID": true, "CandidateModel": true, "Round": true,
		"Status": true, "QueuedAt": true}
	if !pending(&Request{RunID: "r", Purpose: PurposeInference, Status: StatusQueued, QueuedAt: time.Now()}) {
		t.Fatal("a request with nothing of an end is not pending")
	}
	typ := reflect.TypeOf(Request{})
	for i := range typ.NumField() {
		f := typ.Field(i)
		if written[f.Name] {
			continue
		}
		var r Request
		v := reflect.ValueOf(&r).Elem().Field(i)
		switch v.Kind() {
		case reflect.String:
			v.SetString("x")
		case reflect.Int, reflect.Int64:
			v.SetInt(1)
		case reflect.Struct: // time.Time
			v.Set(reflect.ValueOf(time.Unix(1, 0)))
		default:
			t.Fatalf("field %s of kind %s: teach this test to set it", f.Name, v.Kind())
		}
		if pending(&r) {
			t.Errorf("Request.%s set, and the short insert would drop it", f.Name)
		}
	}
}

// CachedJudgeOutputs answers each key as CachedJudgeOutput does, over
// random rows of keys (hex hashes, stored as bytes, and plain names):
// several answers to a key ending in any order, errors, cancellations,
// open requests, inference rows and error verdicts beside them, more keys
// than one query asks for, a key asked twice, and an answer queued but not
// yet committed.
func TestCachedJudgeOutputsAnswersAsCachedJudgeOutput(t *testing.T) {
	t.Parallel()
	l := openTest(t)
	rng := rand.New(rand.NewPCG(5, 6))
	var keys []string
	for i := range 300 {
		if i%3 == 0 {
			keys = append(keys, fmt.Sprintf("key %d", i))
		} else {
			sum := sha256.Sum256([]byte{byte(i), byte(i >> 8)})
			keys = append(keys, hex.EncodeToString(sum[:]))
		}
	}
	t0 := ms("2026-11-27T12:00:00Z")
	for i := range 900 {
		k := keys[rng.IntN(250)] // the last 50 keys are never stored
		r := Request{RunID: "r", Purpose: PurposeJudge, CacheKey: k, QueuedAt: t0}
		if rng.IntN(8) == 0 {
			r.Purpose = PurposeInference
		}
		if _, err := l.InsertRequest(&r); err != nil {
			t.Fatal(err)
		}
		fin := Request{ID: r.ID, CacheKey: k, Output: fmt.Sprintf("answer %d", i), EndedAt: t0.Add(time.Duration(rng.IntN(50)) * time.Second)}
		switch rng.IntN(6) {
		case 0:
			continue // open
		case 1:
			fin.Status = StatusError
		case 2:
			fin.Status = StatusCanceled
		case 3:
			fin.Status, fin.Verdict = StatusCompleted, "error"
		default:
			fin.Status = StatusCompleted
		}
		if rng.IntN(10) == 0 {
			l.QueueFinish(&fin, nil) // committed by the read, not before it
			continue
		}
		if err := l.FinishRequest(&fin); err != nil {
			t.Fatal(err)
		}
	}
	ask := append(slices.Clone(keys), keys[7], "", keys[0])
	got, err := l.CachedJudgeOutputs(ask)
	if err != nil {
		t.Fatal(err)
	}
	hits := 0
	for _, k := range ask {
		want, ok, err := l.CachedJudgeOutput(k)
		if err != nil {
			t.Fatal(err)
		}
		g, gok := got[k]
		if g != want || gok != ok {
			t.Errorf("key %q: CachedJudgeOutputs %q, %v; CachedJudgeOutput %q, %v", k, g, gok, want, ok)
		}
		if ok {
			hits++
		}
	}
	if hits < 100 {
		t.Errorf("only %d keys hit: the test asks too little", hits)
	}
}

// A judge answer this process queued, not yet committed, is a hit: the
// read waits for it, as CachedJudgeOutput does.
func TestCachedJudgeOutputsWaitsForAQueuedAnswer(t *testing.T) {
	t.Parallel()
	l := openTest(t)
	r := Request{RunID: "r", Purpose: PurposeJudge, CacheKey: "queued key"}
	if _, err := l.InsertRequest(&r); err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	var err error
	done := make(chan struct{})
	inOneBatch(l, func() {
		l.QueueFinish(&Request{ID: r.ID, CacheKey: "queued key", Status: StatusCompleted, Output: "VERDICT: PASS"}, nil)
		// The writer is held: the read's wait ends only once the batch
		// commits, after this function returns.
		go func() {
			defer close(done)
			got, err = l.CachedJudgeOutputs([]string{"queued key"})
		}()
		time.Sleep(20 * time.Millisecond)
	})
	<-done
	if err != nil || got["queued key"] != "VERDICT: PASS" {
		t.Errorf("CachedJudgeOutputs = %v, %v; want the queued answer", got, err)
	}
}

// The keys of a window are padded to a few sizes, each one statement
// prepared once: a window of every size from 1 to 256 leaves five.
func TestCachedJudgeOutputsPreparesOneStatementASize(t *testing.T) {
	t.Parallel()
	l := openTest(t)
	keys := make([]string, cachedChunk)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
	}
	for n := 1; n <= cachedChunk; n++ {
		if _, err := l.CachedJudgeOutputs(keys[:n]); err != nil {
			t.Fatal(err)
		}
	}
	l.readMu.Lock()
	n := len(l.sized)
	l.readMu.Unlock()
	if n != 5 {
		t.Errorf("%d statements prepared for windows of 1 to %d keys, want 5 (1, 4, 16, 64, 256)", n, cachedChunk)
	}
}
