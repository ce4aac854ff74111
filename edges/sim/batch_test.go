package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"pitwall/gpu/simspec"
)

// batchClient speaks the Batch API over raw HTTP, as any client would.
type batchClient struct {
	t testing.TB
	c *http.Client
	s *Server
}

func newBatchClient(t testing.TB, s *Server) *batchClient {
	return &batchClient{t: t, c: client(t), s: s}
}

func (b *batchClient) do(method, path, contentType string, body []byte) (int, []byte) {
	b.t.Helper()
	req, err := http.NewRequest(method, b.s.URL()+path, bytes.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return resp.StatusCode, out
}

// upload sends data as a file with the given purpose and returns its id.
func (b *batchClient) upload(purpose string, data []byte) string {
	b.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("purpose", purpose)
	fw, _ := mw.CreateFormFile("file", "in.jsonl")
	_, _ = fw.Write(data)
	_ = mw.Close()
	status, out := b.do(http.MethodPost, "/files", mw.FormDataContentType(), buf.Bytes())
	if status != http.StatusOK {
		b.t.Fatalf("upload: %d %s", status, out)
	}
	var f fileObject
	if err := json.Unmarshal(out, &f); err != nil || f.ID == "" || f.Bytes != len(data) || f.Purpose != purpose {
		b.t.Fatalf("upload answered %s (%v)", out, err)
	}
	return f.ID
}

func (b *batchClient) create(fileID, window string, meta map[string]string) (int, batchObject, []byte) {
	b.t.Helper()
	body, _ := json.Marshal(map[string]any{"input_file_id": fileID, "endpoint": "/v1/chat/completions",
		"completion_window": window, "metadata": meta})
	status, out := b.do(http.MethodPost, "/batches", "application/json", body)
	var o batchObject
	if status == http.StatusOK {
		if err := json.Unmarshal(out, &o); err != nil {
			b.t.Fatalf("create answered %s: %v", out, err)
		}
	}
	return status, o, out
}

func (b *batchClient) get(id string) batchObject {
	b.t.Helper()
	status, out := b.do(http.MethodGet, "/batches/"+id, "", nil)
	var o batchObject
	if status != http.StatusOK || json.Unmarshal(out, &o) != nil {
		b.t.Fatalf("GET batch %s: %d %s", id, status, out)
	}
	return o
}

// wait polls a batch until it has ended and returns every status it saw.
func (b *batchClient) wait(id string) (batchObject, []string) {
	b.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var seen []string
	for time.Now().Before(deadline) {
		o := b.get(id)
		if len(seen) == 0 || seen[len(seen)-1] != o.Status {
			seen = append(seen, o.Status)
		}
		switch o.Status {
		case statusCompleted, statusFailed, statusExpired, statusCancelled:
			return o, seen
		}
		time.Sleep(time.Millisecond)
	}
	b.t.Fatalf("batch %s never ended: %v", id, seen)
	return batchObject{}, nil
}

// lines downloads a file and decodes its lines by custom id.
func (b *batchClient) lines(fileID *string) map[string]map[string]json.RawMessage {
	b.t.Helper()
	out := map[string]map[string]json.RawMessage{}
	if fileID == nil {
		return out
	}
	status, data := b.do(http.MethodGet, "/files/"+*fileID+"/content", "", nil)
	if status != http.StatusOK {
		b.t.Fatalf("content of %s: %d %s", *fileID, status, data)
	}
	for l := range strings.Lines(string(data)) {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			b.t.Fatalf("a result line that is not JSON: %q", l)
		}
		var id string
		_ = json.Unmarshal(m["custom_id"], &id)
		out[id] = m
	}
	return out
}

// jsonl renders batch requests for model, one per prompt, custom ids r1, r2…
func jsonl(model string, prompts ...string) []byte {
	var buf bytes.Buffer
	for i, p := range prompts {
		l, _ := json.Marshal(map[string]any{"custom_id": fmt.Sprintf("r%d", i+1), "method": "POST",
			"url": "/v1/chat/completions", "body": json.RawMessage(body(model, p, map[string]any{"seed": 7}))})
		buf.Write(l)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

func TestABatchAnswersEachRequestByCustomIDAndErrorsStayPerRequest(t *testing.T) {
	s := start(t, instant("m"))
	bc := newBatchClient(t, s)
	in := append(jsonl("m", "Say blue.", "Say red."), []byte(`{"custom_id":"r3","method":"POST","url":"/v1/chat/completions","body":{"model":"nope","messages":[{"role":"user","content":"hi"}]}}`+"\n")...)
	status, created, out := bc.create(bc.upload("batch", in), "24h", map[string]string{"run": "x"})
	if status != http.StatusOK || created.Status != statusValidating || created.Metadata["run"] != "x" {
		t.Fatalf("create: %d %s", status, out)
	}
	done, _ := bc.wait(created.ID)
	if done.Status != statusCompleted || done.RequestCounts["total"] != 3 || done.RequestCounts["completed"] != 2 || done.RequestCounts["failed"] != 1 {
		t.Fatalf("ended %s with counts %v, want completed 3/2/1", done.Status, done.RequestCounts)
	}
	ok, bad := bc.lines(done.OutputFileID), bc.lines(done.ErrorFileID)
	if len(ok) != 2 || len(bad) != 1 || bad["r3"] == nil {
		t.Fatalf("output %d lines, errors %v: want r1 and r2 answered and r3 failed", len(ok), bad)
	}
	for _, id := range []string{"r1", "r2"} {
		var resp struct {
			StatusCode int `json:"status_code"`
			Body       struct {
				Object  string `json:"object"`
				Choices []struct {
					Message struct {
						Content string `json:"content"`
					} `json:"message"`
				} `json:"choices"`
			} `json:"body"`
		}
		if err := json.Unmarshal(ok[id]["response"], &resp); err != nil || resp.StatusCode != 200 ||
			resp.Body.Object != "chat.completion" || len(resp.Body.Choices) != 1 || resp.Body.Choices[0].Message.Content == "" {
			t.Errorf("%s: %s (%v)", id, ok[id]["response"], err)
		}
	}
	var failed struct {
		StatusCode int `json:"status_code"`
	}
	if err := json.Unmarshal(bad["r3"]["response"], &failed); err != nil || failed.StatusCode != http.StatusNotFound {
		t.Errorf("r3's error line %s: want the 404 a live request gets", bad["r3"]["response"])
	}
	// A batched request answers as the same request sent live.
	c := client(t)
	_, _, live := post(t, c, s, body("m", "Say blue.", map[string]any{"seed": 7}))
	var lv, bv struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	var r1 struct {
		Body json.RawMessage `json:"body"`
	}
	_ = json.Unmarshal(ok["r1"]["response"], &r1)
	if json.Unmarshal(live, &lv) != nil || json.Unmarshal(r1.Body, &bv) != nil || lv.Choices[0].Message.Content != bv.Choices[0].Message.Content {
		t.Errorf("batched answer %s differs from the live one %s", r1.Body, live)
	}
}

func TestABatchMovesThroughItsStatesInOrder(t *testing.T) {
	cfg := instant("m")
	cfg.Instant, cfg.TimeScale = false, 0.01 // validating and finalizing take 50 ms each
	s := start(t, cfg)
	bc := newBatchClient(t, s)
	_, created, _ := bc.create(bc.upload("batch", jsonl("m", "Say blue.")), "24h", nil)
	done, seen := bc.wait(created.ID)
	order := []string{statusValidating, statusInProgress, statusFinalizing, statusCompleted}
	last := -1
	for _, st := range seen {
		i := slices.Index(order, st)
		if i <= last {
			t.Fatalf("statuses %v are not in the order %v", seen, order)
		}
		last = i
	}
	if seen[0] != statusValidating || done.Status != statusCompleted || done.CompletedAt == nil || done.InProgressAt == nil ||
		done.FinalizingAt == nil || *done.CompletedAt < done.CreatedAt {
		t.Errorf("saw %v, ended %+v", seen, done)
	}
	if done.ExpiresAt == nil || *done.ExpiresAt-done.CreatedAt > 900 {
		t.Errorf("expires_at %v: the 24h window under a time scale of 0.01 is 864 s", done.ExpiresAt)
	}
}

func TestBatchFaults(t *testing.T) {
	for _, tc := range []struct {
		name     string
		faults   simspec.Faults
		cancel   bool
		want     []string // the status of each of two batches
		notRun   string   // the code of the error lines of requests never run
		answered int      // requests of the first batch answered
	}{
		{name: "the first batch fails, the second completes", faults: simspec.Faults{BatchFail: 1},
			want: []string{statusFailed, statusCompleted}},
		{name: "two batches expire with half their requests unanswered", faults: simspec.Faults{BatchExpire: 2},
			want: []string{statusExpired, statusExpired}, notRun: "batch_expired", answered: 2},
		{name: "a failure, then an expiry", faults: simspec.Faults{BatchFail: 1, BatchExpire: 1},
			want: []string{statusFailed, statusExpired}},
		{name: "a held batch that is cancelled", faults: simspec.Faults{BatchHold: true}, cancel: true,
			want: []string{statusCancelled}, notRun: "batch_cancelled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := instant("m")
			cfg.Spec.Faults = tc.faults
			s := start(t, cfg)
			bc := newBatchClient(t, s)
			file := bc.upload("batch", jsonl("m", "a", "b", "c", "d"))
			var got []string
			for i := range tc.want {
				_, b, _ := bc.create(file, "24h", nil)
				if tc.cancel {
					waitStatus(t, bc, b.ID, statusInProgress)
					status, out := bc.do(http.MethodPost, "/batches/"+b.ID+"/cancel", "", nil)
					var o batchObject
					if status != http.StatusOK || json.Unmarshal(out, &o) != nil || (o.Status != statusCancelling && o.Status != statusCancelled) {
						t.Fatalf("cancel: %d %s", status, out)
					}
				}
				done, _ := bc.wait(b.ID)
				got = append(got, done.Status)
				if i > 0 {
					continue
				}
				if done.Status == statusFailed && (done.Errors == nil || done.FailedAt == nil) {
					t.Errorf("a failed batch says no why: %+v", done)
				}
				errs := bc.lines(done.ErrorFileID)
				if n := len(bc.lines(done.OutputFileID)); n != tc.answered && tc.notRun != "" {
					t.Errorf("%d requests answered, want %d", n, tc.answered)
				}
				for id, l := range errs {
					var e struct{ Code string }
					if json.Unmarshal(l["error"], &e) != nil || e.Code != tc.notRun {
						t.Errorf("%s: error line %s, want code %q", id, l["error"], tc.notRun)
					}
				}
				if tc.notRun != "" && len(errs) != 4-tc.answered {
					t.Errorf("%d error lines, want one for each of the %d requests never run", len(errs), 4-tc.answered)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("batches ended %v, want %v", got, tc.want)
			}
			if n := len(s.Batches()); n != len(tc.want) {
				t.Errorf("the server lists %d batches, want %d", n, len(tc.want))
			}
		})
	}
}

func waitStatus(t *testing.T, bc *batchClient, id, status string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for bc.get(id).Status != status {
		if time.Now().After(deadline) {
			t.Fatalf("batch %s never reached %s", id, status)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestABatchExpiresWhenItsWindowPassesUnderTheTimeScale(t *testing.T) {
	cfg := instant("m")
	// 24 h at 1e-5 is 0.86 s; the requests hang, so the window ends them.
	cfg.Instant, cfg.TimeScale = false, 1e-5
	cfg.Spec.Faults = simspec.Faults{HangRate: 1}
	s := start(t, cfg)
	bc := newBatchClient(t, s)
	_, b, _ := bc.create(bc.upload("batch", jsonl("m", "a", "b")), "24h", nil)
	done, _ := bc.wait(b.ID)
	errs := bc.lines(done.ErrorFileID)
	if done.Status != statusExpired || done.ExpiredAt == nil || len(errs) != 2 || done.OutputFileID != nil {
		t.Fatalf("ended %s with %d error lines (output %v), want expired with both unanswered", done.Status, len(errs), done.OutputFileID)
	}
}

func TestBatchInputIsValidated(t *testing.T) {
	s := start(t, instant("m"))
	bc := newBatchClient(t, s)
	in := []byte(`{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{"model":"m","messages":[{"role":"user","content":"x"}]}}
{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{"model":"m","messages":[{"role":"user","content":"x"}]}}
{"custom_id":"b","method":"POST","url":"/v1/embeddings","body":{}}
not json
`)
	_, b, _ := bc.create(bc.upload("batch", in), "24h", nil)
	done, _ := bc.wait(b.ID)
	raw, _ := json.Marshal(done.Errors)
	if done.Status != statusFailed || !strings.Contains(string(raw), "duplicate_custom_id") ||
		!strings.Contains(string(raw), "mismatched_endpoint") || !strings.Contains(string(raw), "invalid_json_line") {
		t.Fatalf("a batch with bad lines ended %s: %s", done.Status, raw)
	}
}

func TestBatchRequestsRefused(t *testing.T) {
	s := start(t, instant("m"))
	bc := newBatchClient(t, s)
	file := bc.upload("batch", jsonl("m", "a"))
	other := bc.upload("fine-tune", jsonl("m", "a"))
	for _, tc := range []struct {
		name, file, window string
		meta               map[string]string
		want               string
	}{
		{"a window OpenAI does not offer", file, "1h", nil, "completion_window"},
		{"an unknown file", "file-nope", "24h", nil, "No such File"},
		{"a file of another purpose", other, "24h", nil, "purpose"},
		{"a metadata value too long", file, "24h", map[string]string{"k": strings.Repeat("v", 513)}, "metadata"},
	} {
		status, _, out := bc.create(tc.file, tc.window, tc.meta)
		if status != http.StatusBadRequest || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s: %d %s, want 400 naming %s", tc.name, status, out, tc.want)
		}
	}
	if status, out := bc.do(http.MethodGet, "/batches/batch_nope", "", nil); status != http.StatusNotFound || !strings.Contains(string(out), "No such Batch object") {
		t.Errorf("an unknown batch: %d %s", status, out)
	}
	_, b, _ := bc.create(file, "24h", nil)
	bc.wait(b.ID)
	if status, out := bc.do(http.MethodPost, "/batches/"+b.ID+"/cancel", "", nil); status != http.StatusBadRequest {
		t.Errorf("cancelling a completed batch: %d %s, want 400", status, out)
	}
}

func TestBatchesAreListedNewestFirstInPages(t *testing.T) {
	s := start(t, instant("m"))
	bc := newBatchClient(t, s)
	file := bc.upload("batch", jsonl("m", "a"))
	var ids []string
	for range 3 {
		_, b, _ := bc.create(file, "24h", nil)
		ids = append(ids, b.ID)
	}
	var page struct {
		Data    []batchObject `json:"data"`
		HasMore bool          `json:"has_more"`
		LastID  string        `json:"last_id"`
	}
	_, out := bc.do(http.MethodGet, "/batches?limit=2", "", nil)
	if json.Unmarshal(out, &page) != nil || len(page.Data) != 2 || !page.HasMore || page.Data[0].ID != ids[2] || page.Data[1].ID != ids[1] {
		t.Fatalf("first page %s, want %v newest first", out, ids)
	}
	_, out = bc.do(http.MethodGet, "/batches?limit=2&after="+page.LastID, "", nil)
	if json.Unmarshal(out, &page) != nil || len(page.Data) != 1 || page.HasMore || page.Data[0].ID != ids[0] {
		t.Fatalf("second page %s, want %s alone", out, ids[0])
	}
}

func TestLocalBackendsHaveNoBatchAPI(t *testing.T) {
	for _, backend := range []string{BackendLMStudio, BackendOllama, BackendLlamaCpp, BackendVLLM} {
		cfg := instant("m")
		cfg.Spec.Backend = backend
		s := start(t, cfg)
		status, _ := get(t, client(t), s, "/v1/batches?limit=1")
		if status != http.StatusNotFound {
			t.Errorf("%s: GET /v1/batches answered %d, want 404", backend, status)
		}
	}
}
