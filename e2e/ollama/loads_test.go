package ollama

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// isLoadLine reports whether a line of the Ollama v0.17.4 log is a model
// load: the scheduler starts one runner process per load (llm/server.go),
//
//	level=INFO source=server.go:431 msg="starting runner" cmd="/…/ollama runner --model /…/blobs/sha256-… --port 36583"
//
// The runners Ollama starts at boot to discover GPUs have no --model. (The
// other candidate, msg="llama runner started in 0.29 seconds", is logged
// twice per load by v0.17.4, so it is not counted.)
func isLoadLine(l string) bool {
	return strings.Contains(l, `msg="starting runner"`) && strings.Contains(l, " runner --model ")
}

// loadCounter counts the model loads Ollama makes while it runs, two ways:
// from the server log (one loadLine per load) and by sampling GET /api/ps
// every 50 ms (a model that appears in a sample and was not in the previous
// one was loaded; a load and unload both within 50 ms would be missed).
type loadCounter struct {
	logStart int64
	cancel   context.CancelFunc
	done     chan struct{}

	mu      sync.Mutex
	psLoads int
	order   []string // the models as they appeared in /api/ps
	errs    int
}

func startLoadCounter() *loadCounter {
	c := &loadCounter{done: make(chan struct{})}
	if st, err := os.Stat(srv.logPath); err == nil {
		c.logStart = st.Size()
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	prev, _ := resident(ctx)
	go func() {
		defer close(c.done)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			rctx, rcancel := context.WithTimeout(ctx, 2*time.Second)
			now, err := resident(rctx)
			rcancel()
			c.mu.Lock()
			if err != nil {
				c.errs++
				c.mu.Unlock()
				continue
			}
			for _, m := range now {
				if !slices.Contains(prev, m) {
					c.psLoads++
					c.order = append(c.order, m)
				}
			}
			c.mu.Unlock()
			prev = now
		}
	}()
	return c
}

// stop ends the sampling and returns the loads seen in the log and in /api/ps.
func (c *loadCounter) stop() (logLoads, psLoads int, order []string) {
	// One more sample's worth of time, so a load at the very end is seen.
	time.Sleep(120 * time.Millisecond)
	c.cancel()
	<-c.done
	if b, err := os.ReadFile(srv.logPath); err == nil && int64(len(b)) >= c.logStart {
		for _, l := range strings.Split(string(b[c.logStart:]), "\n") {
			if isLoadLine(l) {
				logLoads++
			}
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return logLoads, c.psLoads, append([]string(nil), c.order...)
}

// logSize is where Ollama's log ends now: the start of what a later countLogLines reads.
func logSize() int64 {
	st, err := os.Stat(srv.logPath)
	if err != nil {
		return 0
	}
	return st.Size()
}

// countLogLines counts the lines Ollama logged since offset for which match is true.
func countLogLines(offset int64, match func(string) bool) int {
	b, err := os.ReadFile(srv.logPath)
	if err != nil || int64(len(b)) < offset {
		return 0
	}
	n := 0
	for _, l := range strings.Split(string(b[offset:]), "\n") {
		if match(l) {
			n++
		}
	}
	return n
}

// isChatPost reports whether a line of the Ollama log is one request to the
// OpenAI-compatible chat endpoint, as gin logs it once answered:
//
//	[GIN] 2025/11/26 - 08:01:02 | 200 |  312.5ms |       127.0.0.1 | POST     "/v1/chat/completions"
func isChatPost(l string) bool {
	return strings.HasPrefix(l, "[GIN]") && strings.Contains(l, `POST`) && strings.Contains(l, `"/v1/chat/completions"`)
}
