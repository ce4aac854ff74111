package batchapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"pitwall/edges/sim"
	"pitwall/gpu"
	"pitwall/gpu/chat"
	"pitwall/gpu/client"
	"pitwall/gpu/simspec"
	"pitwall/internal/oaitest"
)

// batchSim starts a simulated hosted API (backend openai) offering model m.
func batchSim(t *testing.T, faults simspec.Faults) *sim.Server {
	t.Helper()
	s, err := sim.Start(sim.Config{Name: "api", Slots: 2, Models: []string{"m"}, Instant: true,
		Spec: simspec.Server{Faults: faults}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func batchLines(n int) []client.BatchLine {
	var out []client.BatchLine
	for i := range n {
		zero, seed := 0.0, 7
		out = append(out, client.BatchLine{CustomID: fmt.Sprintf("k%d", i), Request: chat.Request{Model: "m",
			Messages: []chat.Message{{Role: "user", Content: fmt.Sprintf("Say %d.", i)}}, Temperature: &zero, Seed: &seed, MaxTokens: 64}})
	}
	return out
}

var fastPoll = client.BatchPoll{Min: time.Millisecond, Max: 5 * time.Millisecond}

func TestABatchRoundTripsThroughTheSimulator(t *testing.T) {
	s := batchSim(t, simspec.Faults{})
	gc := client.New(client.Config{Name: "api", URL: s.URL(), Kind: chat.KindOpenAI}, nil)
	c := New(gc)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if ok, err := c.BatchesOffered(ctx); !ok || err != nil {
		t.Fatalf("BatchesOffered = %v, %v on a hosted API", ok, err)
	}
	lines := batchLines(3)
	lines[2].Request.Model = "gone" // a request of its own that fails alone
	b, err := c.CreateBatch(ctx, lines, "", map[string]string{"pitwall_run": "r1"})
	if err != nil {
		t.Fatal(err)
	}
	if b.ID == "" || b.Status != client.BatchValidating || b.Window != client.DefaultBatchWindow || b.Metadata["pitwall_run"] != "r1" {
		t.Fatalf("created %+v", b)
	}
	var seen []client.BatchStatus
	done, err := c.WaitBatch(ctx, b.ID, fastPoll, func(b client.Batch) { seen = append(seen, b.Status) })
	if err != nil || done.Status != client.BatchCompleted || done.Total != 3 || done.Completed != 2 || done.Failed != 1 {
		t.Fatalf("WaitBatch = %+v, %v", done, err)
	}
	if len(seen) == 0 || seen[len(seen)-1] != client.BatchCompleted {
		t.Errorf("seen %v, want the moves up to completed", seen)
	}
	res, err := c.BatchResults(ctx, done)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]client.BatchResult{}
	for _, r := range res {
		byID[r.CustomID] = r
	}
	for _, id := range []string{"k0", "k1"} {
		r := byID[id]
		if r.Err != nil || r.Result.Content == "" || r.Result.FinishReason == "" || r.Result.CompletionTokens == 0 || r.Result.Server != "api" {
			t.Errorf("%s: %+v", id, r)
		}
	}
	if e := byID["k2"].Err; chat.ClassOf(e) != chat.ClassHTTP4xx || !strings.Contains(chat.MessageOf(e), "gone") {
		t.Errorf("k2: %v, want the model's 404 as its own error", e)
	}
	// The same request live answers the same.
	live, err := gc.Chat(ctx, lines[0].Request)
	if err != nil || live.Content != byID["k0"].Result.Content {
		t.Errorf("live %q (%v), batched %q", live.Content, err, byID["k0"].Result.Content)
	}
	ids, err := c.BatchInput(ctx, done)
	if err != nil || !slices.Equal(ids, []string{"k0", "k1", "k2"}) {
		t.Errorf("BatchInput = %v, %v", ids, err)
	}
}

func TestFindBatchesMatchesMetadataSinceATime(t *testing.T) {
	s := batchSim(t, simspec.Faults{BatchHold: true})
	c := newClient(gpu.ServerConfig{Config: client.Config{Name: "api", URL: s.URL()}}, nil)
	ctx := context.Background()
	before := time.Now().Add(-time.Minute)
	var mine []string
	for i, run := range []string{"r1", "r2", "r1"} {
		b, err := c.CreateBatch(ctx, batchLines(1), "", map[string]string{"pitwall_run": run, "n": fmt.Sprint(i)})
		if err != nil {
			t.Fatal(err)
		}
		if run == "r1" {
			mine = append(mine, b.ID)
		}
	}
	got, err := c.FindBatches(ctx, map[string]string{"pitwall_run": "r1"}, before)
	if err != nil || len(got) != 2 || got[0].ID != mine[1] || got[1].ID != mine[0] {
		t.Fatalf("FindBatches = %+v, %v; want %v newest first", got, err, mine)
	}
	if got, _ := c.FindBatches(ctx, map[string]string{"pitwall_run": "r1"}, time.Now().Add(time.Hour)); len(got) != 0 {
		t.Errorf("batches created before since were found: %+v", got)
	}
}

func TestAnExpiredBatchLeavesOutWhatItNeverRan(t *testing.T) {
	s := batchSim(t, simspec.Faults{BatchExpire: 1})
	c := newClient(gpu.ServerConfig{Config: client.Config{Name: "api", URL: s.URL()}}, nil)
	ctx := context.Background()
	b, err := c.CreateBatch(ctx, batchLines(4), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	done, err := c.WaitBatch(ctx, b.ID, fastPoll, nil)
	if err != nil || done.Status != client.BatchExpired {
		t.Fatalf("WaitBatch = %+v, %v; want expired", done, err)
	}
	res, err := c.BatchResults(ctx, done)
	if err != nil || len(res) != 2 {
		t.Fatalf("BatchResults = %d results, %v; want the 2 it ran (the rest are missing, to send again)", len(res), err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Errorf("%s: %v", r.CustomID, r.Err)
		}
	}
}

func TestBatchesOffered(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc // nil: the simulator, with backend
		backend string
		want    bool
		class   chat.ErrorClass // of the error, "" for none
	}{
		{name: "a hosted API", backend: sim.BackendOpenAI, want: true},
		{name: "LM Studio", backend: sim.BackendLMStudio},
		{name: "Ollama (a plain-text 404)", backend: sim.BackendOllama},
		{name: "vLLM", backend: sim.BackendVLLM},
		{name: "a 405", handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusMethodNotAllowed) }},
		{name: "a 500 is no answer", handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }, class: chat.ClassHTTP5xx},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var url string
			if tc.handler != nil {
				srv := httptest.NewServer(tc.handler)
				t.Cleanup(srv.Close)
				url = srv.URL + "/v1"
			} else {
				s, err := sim.Start(sim.Config{Name: "s", Models: []string{"m"}, Instant: true, Spec: simspec.Server{Backend: tc.backend}})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = s.Close() })
				url = s.URL()
			}
			ok, err := newClient(gpu.ServerConfig{Config: client.Config{Name: "s", URL: url}}, nil).BatchesOffered(context.Background())
			if ok != tc.want || chat.ClassOf(err) != tc.class {
				t.Errorf("BatchesOffered = %v, %v; want %v and class %q", ok, err, tc.want, tc.class)
			}
		})
	}
}

// scripted answers GET /v1/batches/b1 with the given replies in turn, the
// last one for ever, and counts the looks.
func scripted(t *testing.T, replies ...func(w http.ResponseWriter)) (*Client, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		replies[min(i, len(replies)-1)](w)
	}))
	t.Cleanup(srv.Close)
	return newClient(gpu.ServerConfig{Config: client.Config{Name: "api", URL: srv.URL + "/v1"}}, nil), &n
}

func batchIs(status string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"b1","object":"batch","status":%q,"input_file_id":"f1","created_at":1,"request_counts":{"total":1}}`, status)
	}
}

func httpStatus(code int) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"error":{"message":"status %d"}}`, code)
	}
}

func TestWaitBatch(t *testing.T) {
	for _, tc := range []struct {
		name    string
		replies []func(http.ResponseWriter)
		poll    client.BatchPoll
		want    client.BatchStatus // the batch as last seen
		class   chat.ErrorClass    // of the error; "" for none
		looks   int32
	}{
		{name: "polls through the states to the end",
			replies: []func(http.ResponseWriter){batchIs("validating"), batchIs("in_progress"), batchIs("in_progress"), batchIs("finalizing"), batchIs("completed")},
			want:    client.BatchCompleted, looks: 5},
		{name: "a transient failure to look is retried",
			replies: []func(http.ResponseWriter){batchIs("in_progress"), httpStatus(503), httpStatus(429), batchIs("expired")},
			want:    client.BatchExpired, looks: 4},
		{name: "transient failures in a row give up",
			replies: []func(http.ResponseWriter){batchIs("in_progress"), httpStatus(502)},
			poll:    client.BatchPoll{Failures: 3}, want: client.BatchInProgress, class: chat.ClassHTTP5xx, looks: 4},
		{name: "a batch that is not there ends the wait",
			replies: []func(http.ResponseWriter){httpStatus(404)}, class: chat.ClassHTTP4xx, looks: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, looks := scripted(t, tc.replies...)
			poll := tc.poll
			poll.Min, poll.Max = time.Millisecond, 2*time.Millisecond
			var moves int
			b, err := c.WaitBatch(context.Background(), "b1", poll, func(client.Batch) { moves++ })
			if b.Status != tc.want || chat.ClassOf(err) != tc.class || looks.Load() != tc.looks {
				t.Errorf("WaitBatch = %s, %v after %d looks; want %s, class %q, %d looks", b.Status, err, looks.Load(), tc.want, tc.class, tc.looks)
			}
			if tc.want == client.BatchCompleted && moves != 4 {
				t.Errorf("seen called %d times, want once per status (4)", moves)
			}
		})
	}
}

func TestWaitBatchEndsWithItsContext(t *testing.T) {
	c, _ := scripted(t, batchIs("in_progress"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.WaitBatch(ctx, "b1", client.BatchPoll{Min: time.Hour}, func(client.Batch) { cancel() })
		done <- err
	}()
	select {
	case err := <-done:
		if chat.ClassOf(err) != chat.ClassCanceled {
			t.Errorf("WaitBatch after a cancel: %v, want class cancelled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WaitBatch did not end with its context")
	}
}

func TestBatchResultLinesAreDecoded(t *testing.T) {
	c := newClient(gpu.ServerConfig{Config: client.Config{Name: "api", URL: "http://x/v1", APIKey: oaitest.PlantedAPIKey}}, nil)
	for _, tc := range []struct {
		name, line string
		ok         bool
		class      chat.ErrorClass
		content    string
		bad        bool // not a result line
	}{
		{name: "an answer", ok: true, content: "hi",
			line: `{"custom_id":"a","response":{"status_code":200,"body":{"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"content":"hi"}}],"usage":{"prompt_tokens":3,"completion_tokens":1}}},"error":null}`},
		{name: "a tool call with no content", ok: true,
			line: `{"custom_id":"a","response":{"status_code":200,"body":{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"content":null,"tool_calls":[{"id":"c1","function":{"name":"f","arguments":"{}"}}]}}]}},"error":null}`},
		{name: "a 429 inside the batch", ok: true, class: chat.ClassRateLimit,
			line: `{"custom_id":"a","response":{"status_code":429,"body":{"error":{"message":"slow down"}}},"error":null}`},
		{name: "a 400 that echoes the key", ok: true, class: chat.ClassHTTP4xx,
			line: `{"custom_id":"a","response":{"status_code":400,"body":{"error":{"message":"bad key ` + oaitest.PlantedAPIKey + `"}}},"error":null}`},
		{name: "an error object", ok: true, class: chat.ClassHTTP5xx,
			line: `{"custom_id":"a","response":null,"error":{"code":"server_error","message":"boom"}}`},
		{name: "an answer that is not a completion", ok: true, class: chat.ClassMalformed,
			line: `{"custom_id":"a","response":{"status_code":200,"body":{"choices":[]}},"error":null}`},
		{name: "never run: expired", line: `{"custom_id":"a","response":null,"error":{"code":"batch_expired","message":"x"}}`},
		{name: "never run: cancelled", line: `{"custom_id":"a","response":null,"error":{"code":"batch_cancelled","message":"x"}}`},
		{name: "no custom id", line: `{"response":null,"error":null}`, bad: true},
		{name: "not JSON", line: `nope`, bad: true},
	} {
		r, ok, err := c.decodeResult([]byte(tc.line))
		switch {
		case (err != nil) != tc.bad:
			t.Errorf("%s: err %v", tc.name, err)
		case ok != tc.ok || chat.ClassOf(r.Err) != tc.class || r.Result.Content != tc.content:
			t.Errorf("%s: %+v ok=%v; want ok=%v class %q content %q", tc.name, r, ok, tc.ok, tc.class, tc.content)
		}
		if r.Err != nil {
			if l := oaitest.Leaks(oaitest.ErrorTexts(r.Err)...); len(l) > 0 {
				t.Errorf("%s: the error oaitest.Leaks: %v", tc.name, l)
			}
		}
	}
}

func TestABatchNeedsUniqueCustomIDs(t *testing.T) {
	c := newClient(gpu.ServerConfig{Config: client.Config{Name: "api", URL: oaitest.ClosedURL(t)}}, nil)
	for _, lines := range [][]client.BatchLine{nil, {{CustomID: ""}}, {batchLines(1)[0], batchLines(1)[0]}} {
		_, err := c.CreateBatch(context.Background(), lines, "", nil)
		if chat.ClassOf(err) != chat.ClassHTTP4xx || !strings.Contains(chat.MessageOf(err), "not sent") {
			t.Errorf("CreateBatch(%d lines) = %v, want it refused before sending", len(lines), err)
		}
	}
}

func TestBatchErrorsCarryNoCredentials(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc // nil: nothing listens
	}{
		{"connection refused", nil},
		{"a 401 that echoes the key and URL", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.WriteHeader(401)
			fmt.Fprintf(w, `{"error":{"message":"bad key %s for %s"}}`, r.Header.Get("Authorization"), r.URL.String())
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := oaitest.ClosedURL(t)
			if tc.handler != nil {
				srv := httptest.NewServer(tc.handler)
				t.Cleanup(srv.Close)
				base = srv.URL + "/v1"
			}
			c := newClient(gpu.ServerConfig{Config: client.Config{Name: "s", URL: oaitest.SecretURL(t, base), APIKey: oaitest.PlantedAPIKey}}, nil)
			ctx := context.Background()
			_, createErr := c.CreateBatch(ctx, batchLines(1), "", nil)
			_, getErr := c.Batch(ctx, "b1")
			_, offeredErr := c.BatchesOffered(ctx)
			_, findErr := c.FindBatches(ctx, nil, time.Time{})
			_, resErr := c.BatchResults(ctx, client.Batch{OutputFileID: "f1"})
			for _, err := range []error{createErr, getErr, offeredErr, findErr, resErr} {
				if err == nil {
					t.Fatal("a call succeeded: nothing was tested")
				}
				if l := oaitest.Leaks(oaitest.ErrorTexts(err)...); len(l) > 0 {
					t.Errorf("the error oaitest.Leaks: %v", l)
				}
			}
		})
	}
}

func TestACancelledBatchEndsCancelledWithNothingToRead(t *testing.T) {
	s := batchSim(t, simspec.Faults{BatchHold: true})
	c := newClient(gpu.ServerConfig{Config: client.Config{Name: "api", URL: s.URL()}}, nil)
	ctx := context.Background()
	b, err := c.CreateBatch(ctx, batchLines(2), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.CancelBatch(ctx, b.ID)
	if err != nil || (got.Status != client.BatchCancelling && got.Status != client.BatchCancelled) {
		t.Fatalf("CancelBatch = %+v, %v", got, err)
	}
	done, err := c.WaitBatch(ctx, b.ID, fastPoll, nil)
	if err != nil || done.Status != client.BatchCancelled {
		t.Fatalf("WaitBatch = %+v, %v; want cancelled", done, err)
	}
	if res, err := c.BatchResults(ctx, done); err != nil || len(res) != 0 {
		t.Errorf("BatchResults = %+v, %v; want none: a cancelled request was never run", res, err)
	}
	if _, err := c.CancelBatch(ctx, "batch_nope"); chat.ClassOf(err) != chat.ClassHTTP4xx {
		t.Errorf("cancelling an unknown batch: %v, want a 4xx", err)
	}
}
