package gpu

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pitwall/gpu/chat"
	"pitwall/gpu/client"
	"pitwall/gpu/placement"
	"pitwall/internal/oaitest"
)

// jobOutcome is one call of a job's Done.
type jobOutcome struct {
	res chat.Result
	err error
}

// trackedJob is a job whose Done and Dispatched calls the test can wait on and count.
type trackedJob struct {
	job        *Job
	done       chan jobOutcome // receives the first Done
	calls      atomic.Int32
	dispatched chan string
}

func trackJob(model, content string) *trackedJob {
	tj := &trackedJob{done: make(chan jobOutcome, 1), dispatched: make(chan string, 1)}
	tj.job = &Job{
		Request: chat.Request{Model: model, Messages: []chat.Message{{Role: "user", Content: content}}},
		Purpose: chat.PurposeInference,
		Dispatched: func(server string, loading bool) {
			if !loading {
				tj.dispatched <- server
			}
		},
		Done: func(res chat.Result, err error) {
			if tj.calls.Add(1) == 1 {
				tj.done <- jobOutcome{res, err}
			}
		},
	}
	return tj
}

// wait returns the job's outcome, failing the test if it takes unreasonably long
// (a hang is a bug; no test depends on this bound for correctness).
func (tj *trackedJob) wait(t *testing.T) jobOutcome {
	t.Helper()
	select {
	case o := <-tj.done:
		return o
	case <-time.After(20 * time.Second):
		t.Fatalf("job %s never finished", tj.job.Request.Messages[0].Content)
		return jobOutcome{}
	}
}

// pending reports whether Done has not been called.
func (tj *trackedJob) pending() bool { return tj.calls.Load() == 0 }

func wantClass(t *testing.T, o jobOutcome, class chat.ErrorClass) {
	t.Helper()
	if got := chat.ClassOf(o.err); got != class {
		t.Errorf("Done error %v: class %q, want %q", o.err, got, class)
	}
}

func wantOK(t *testing.T, o jobOutcome) {
	t.Helper()
	if o.err != nil {
		t.Errorf("Done error %v, want success", o.err)
	}
}

// greedyPolicy is a policy that puts every queued job on the first server that
// offers its model, slots or not: the fleet must refuse the excess.
var greedyPolicy = placement.PolicyFunc(func(v placement.FleetView) []placement.Assignment {
	var out []placement.Assignment
	for _, j := range v.Queue {
		for _, s := range v.Servers {
			if s.Offered[j.Model] {
				out = append(out, placement.Assignment{Job: j.ID, Server: s.Name})
				break
			}
		}
	}
	return out
})

func TestFleetNeverExceedsAServersSlots(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy placement.Policy
	}{{"first fit", placement.FirstFit}, {"a policy that over-assigns", greedyPolicy}} {
		t.Run(tc.name, func(t *testing.T) {
			var inflight, peak atomic.Int32
			arrived := make(chan struct{}, 16)
			release := make(chan struct{})
			srv := oaitest.Server(t, func(w http.ResponseWriter, r *http.Request) {
				body := oaitest.Decode(r)
				n := inflight.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				arrived <- struct{}{}
				<-release
				// Down before the reply: the fleet frees the slot only after it.
				inflight.Add(-1)
				oaitest.Reply(w, body.Model, "ok")
			})
			f := NewFleet([]ServerConfig{{Config: client.Config{Name: "gpu0", URL: srv.URL + "/v1", Kind: "vllm"}, Slots: 2, Models: []string{"m"}}},
				Options{Policy: tc.policy})
			defer f.Close()

			var jobs []*trackedJob
			for i := range 6 {
				tj := trackJob("m", fmt.Sprint("job", i))
				jobs = append(jobs, tj)
				f.Submit(context.Background(), tj.job)
			}
			<-arrived
			<-arrived
			st := f.State()[0]
			if st.Busy != 2 || st.Queue != 4 || st.Slots != 2 {
				t.Errorf("with both slots held: busy %d, queue %d, slots %d; want 2, 4, 2", st.Busy, st.Queue, st.Slots)
			}
			for range jobs {
				release <- struct{}{}
			}
			for _, tj := range jobs {
				wantOK(t, tj.wait(t))
			}
			if p := peak.Load(); p != 2 {
				t.Errorf("the server saw at most %d requests at once, want exactly its 2 slots", p)
			}
		})
	}
}

func TestFleetCountsTheTimeoutFromDispatchNotEnqueue(t *testing.T) {
	srv := oaitest.Server(t, func(w http.ResponseWriter, r *http.Request) {
		body := oaitest.Decode(r)
		if body.Messages[0].Content == "hang" {
			<-r.Context().Done() // the body is read: the server notices the client leave
			return
		}
		oaitest.Reply(w, body.Model, "ok")
	})
	f := NewFleet([]ServerConfig{{Config: client.Config{Name: "gpu0", URL: srv.URL + "/v1", Kind: "vllm"}, Slots: 1, Models: []string{"m"}}}, Options{})
	defer f.Close()

	// Each job may take 300ms from dispatch. The first holds the only slot
	// for all of that, so the others wait in the queue longer than their
	// own timeout: counted from enqueue, they would fail on dispatch.
	const timeout = 300 * time.Millisecond
	hang, quick1, quick2 := trackJob("m", "hang"), trackJob("m", "quick1"), trackJob("m", "quick2")
	for _, tj := range []*trackedJob{hang, quick1, quick2} {
		tj.job.Timeout = timeout
		f.Submit(context.Background(), tj.job)
	}
	o := hang.wait(t)
	wantClass(t, o, chat.ClassTimeout)
	for _, tj := range []*trackedJob{quick1, quick2} {
		wantOK(t, tj.wait(t))
		if s := <-tj.dispatched; s != "gpu0" {
			t.Errorf("Dispatched(%q), want gpu0", s)
		}
	}
}

// oaiHangServer holds every request open until the client leaves, and says
// when each one arrives.
func oaiHangServer(t *testing.T) (srvURL string, arrived chan string, count *atomic.Int32) {
	arrived = make(chan string, 16)
	count = &atomic.Int32{}
	srv := oaitest.Server(t, func(w http.ResponseWriter, r *http.Request) {
		body := oaitest.Decode(r)
		count.Add(1)
		arrived <- body.Messages[0].Content
		<-r.Context().Done()
	})
	return srv.URL + "/v1", arrived, count
}

// oaiHangingServer answers "ok", except a request whose first message
// starts with "hang", which it holds until the client gives up.
func oaiHangingServer(t *testing.T) *httptest.Server {
	return oaitest.Server(t, func(w http.ResponseWriter, r *http.Request) {
		body := oaitest.Decode(r)
		if strings.HasPrefix(body.Messages[0].Content, "hang") {
			<-r.Context().Done()
			return
		}
		oaitest.Reply(w, body.Model, "ok")
	})
}

func TestFleetCancelWhileQueuedAndInFlight(t *testing.T) {
	url, arrived, count := oaiHangServer(t)
	f := NewFleet([]ServerConfig{{Config: client.Config{Name: "gpu0", URL: url, Kind: "vllm"}, Slots: 1, Models: []string{"m"}}}, Options{})

	ctxA, cancelA := context.WithCancel(context.Background())
	ctxB, cancelB := context.WithCancel(context.Background())
	defer cancelA()
	a, b := trackJob("m", "A"), trackJob("m", "B")
	a.job.Timeout = time.Hour
	f.Submit(ctxA, a.job)
	f.Submit(ctxB, b.job)
	if got := <-arrived; got != "A" {
		t.Fatalf("first request %q, want A", got)
	}

	cancelB()
	ob := b.wait(t)
	wantClass(t, ob, chat.ClassCanceled)
	if !strings.Contains(ob.err.Error(), "queued") {
		t.Errorf("queued cancel says %q; want it to say it was queued", ob.err)
	}
	if st := f.State()[0]; st.Queue != 0 || st.Busy != 1 {
		t.Errorf("after cancelling the queued job: queue %d, busy %d; want 0, 1", st.Queue, st.Busy)
	}

	cancelA()
	oa := a.wait(t)
	wantClass(t, oa, chat.ClassCanceled)
	if oa.res.Server != "gpu0" {
		t.Errorf("in-flight cancel: Result.Server = %q, want gpu0", oa.res.Server)
	}
	f.Close()
	if n := count.Load(); n != 1 {
		t.Errorf("the server saw %d requests, want 1 (the cancelled queued job is never sent)", n)
	}
	if a.calls.Load() != 1 || b.calls.Load() != 1 {
		t.Errorf("Done calls: A %d, B %d; want 1 each", a.calls.Load(), b.calls.Load())
	}
	oaitest.NoLeakedGoroutines(t)
}

func TestFleetCloseCancelsEverything(t *testing.T) {
	url, arrived, _ := oaiHangServer(t)
	f := NewFleet([]ServerConfig{{Config: client.Config{Name: "gpu0", URL: url, Kind: "lmstudio"}, Slots: 1, Models: []string{"m"}}}, Options{})
	var jobs []*trackedJob
	for i := range 3 {
		tj := trackJob("m", fmt.Sprint(i))
		jobs = append(jobs, tj)
		f.Submit(context.Background(), tj.job)
	}
	<-arrived // the first job's warm-up holds the slot; the rest queue
	f.Close()
	for _, tj := range jobs {
		if tj.pending() {
			t.Fatalf("Close returned before job %s was done", tj.job.Request.Messages[0].Content)
		}
		wantClass(t, tj.wait(t), chat.ClassCanceled)
	}
	late := trackJob("m", "late")
	f.Submit(context.Background(), late.job)
	if late.pending() {
		t.Fatal("Submit after Close did not finish the job at once")
	}
	wantClass(t, late.wait(t), chat.ClassCanceled)
	f.Close() // twice is fine
	oaitest.NoLeakedGoroutines(t)
}

func TestFleetCallsDoneExactlyOnce(t *testing.T) {
	srv := oaiHangingServer(t)
	servers := []ServerConfig{
		{Config: client.Config{Name: "gpu0", URL: srv.URL + "/v1", Kind: "vllm"}, Slots: 2, Models: []string{"m"}},
		{Config: client.Config{Name: "gpu1", URL: srv.URL + "/v1", Kind: "ollama"}, Slots: 2, Models: []string{"m", "n"}},
	}
	f := NewFleet(servers, Options{})
	var jobs []*trackedJob
	var cancels []context.CancelFunc
	firstDone := make(chan struct{})
	var once sync.Once
	for i := range 120 {
		content := fmt.Sprint("job", i)
		if i%7 == 0 {
			content = fmt.Sprint("hang", i)
		}
		tj := trackJob([]string{"m", "n"}[i%2], content)
		inner := tj.job.Done
		tj.job.Done = func(res chat.Result, err error) {
			inner(res, err)
			once.Do(func() { close(firstDone) })
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancels = append(cancels, cancel)
		switch i % 5 {
		case 1:
			cancel() // cancelled before it is submitted
		case 2:
			// cancelled the moment it is dispatched
			tj.job.Dispatched = func(string, bool) { cancel() }
		case 3:
			tj.job.Timeout = time.Nanosecond
		}
		jobs = append(jobs, tj)
		f.Submit(ctx, tj.job)
		if i%4 == 0 {
			go cancel() // cancelled at some moment
		}
	}
	<-firstDone
	f.Close()
	for i, tj := range jobs {
		if n := tj.calls.Load(); n != 1 {
			t.Errorf("job %d: Done called %d times after Close, want 1", i, n)
		}
	}
	for _, c := range cancels {
		c()
	}
	oaitest.NoLeakedGoroutines(t)
}

// TestFleetRunsJobsOnWorkersThatEndWithIt: a job placed while a worker
// waits runs on that worker (its stack already grown), not on a new
// goroutine, and Close ends the workers that wait.
func TestFleetRunsJobsOnWorkersThatEndWithIt(t *testing.T) {
	srv := oaitest.Server(t, func(w http.ResponseWriter, r *http.Request) {
		oaitest.Reply(w, oaitest.Decode(r).Model, "ok")
	})
	f := NewFleet([]ServerConfig{{Config: client.Config{Name: "gpu0", URL: srv.URL + "/v1", Kind: "vllm"}, Slots: 2, Models: []string{"m"}}}, Options{})
	f.workerIdle = time.Hour // no worker ends on its own during the test
	for i := range 20 {
		if i > 0 {
			waitForWaitingWorkers(t, 1)
		}
		tj := trackJob("m", fmt.Sprint("job", i))
		f.Submit(context.Background(), tj.job)
		wantOK(t, tj.wait(t))
	}
	if n := len(workerStacks()); n != 1 {
		t.Errorf("%d workers after 20 jobs, each placed while one waited; want 1", n)
	}
	f.Close()
	oaitest.NoLeakedGoroutines(t)
}

// workerStacks are the stacks of the fleet's worker goroutines.
func workerStacks() []string {
	buf := make([]byte, 1<<20)
	var out []string
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "gpu.(*Fleet).worker(") {
			out = append(out, g)
		}
	}
	return out
}

// waitForWaitingWorkers returns once n workers wait for a job (a worker
// parks after its job's Done, which the test hears first).
func waitForWaitingWorkers(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		waiting := 0
		for _, g := range workerStacks() {
			if strings.Contains(g, " [select") && !strings.Contains(g, "gpu.(*Fleet).run(") {
				waiting++
			}
		}
		if waiting >= n {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("no %d workers waiting for a job after 10s", n)
}
