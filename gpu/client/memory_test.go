package client

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"pitwall/gpu/chat"
	"pitwall/internal/oaitest"
	"pitwall/internal/textutil"
)

// memoryChildEnv names the flood a child process of
// TestAFloodedReplyKeepsMemoryBounded receives. The measure is taken in a
// fresh process so that no other test's garbage or heap is counted, and
// so that the heap's high-water mark is this flood's alone.
const memoryChildEnv = "PITWALL_GPU_MEMORY_CHILD"

// floodHeapBound is the most the heap may grow while one reply is read
// under the default cap (DefaultMaxReplyBytes, 8 MiB): the stream reader's
// line buffer, the accumulated text, and the copies a growing buffer makes.
// Before the cap, an endless stream grew without limit (3.66 GB of RSS in
// ten seconds).
const floodHeapBound = 48 << 20

// floodRSSBound is the same for the process's resident set, which also
// holds the runtime's own overhead; it is checked without -race only, as
// the race detector's shadow memory multiplies it.
const floodRSSBound = 96 << 20

var floods = map[string]http.HandlerFunc{
	"an endless stream": endlessSSE(strings.Repeat("tok ", 64)),
	"a 50 MB reply in many chunks": bigBody("text/event-stream", "", 50<<20,
		"data: "+oaitest.Content("m", strings.Repeat("x", 200))+"\n\n", "data: [DONE]\n\n"),
	"a 50 MB reply in one chunk": bigBody("text/event-stream",
		`data: {"model":"m","choices":[{"index":0,"delta":{"content":"`, 50<<20, "y", `"}}]}`+"\n\n"),
}

func TestAFloodedReplyKeepsMemoryBounded(t *testing.T) {
	if name := os.Getenv(memoryChildEnv); name != "" {
		floodChild(t, name)
		return
	}
	for name := range floods {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestAFloodedReplyKeepsMemoryBounded$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), memoryChildEnv+"="+name)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			m := parseFloodReport(t, string(out))
			t.Logf("class %s, heap grew %s (bound %s), RSS grew %s (bound %s), in %s", m["class"],
				textutil.ByteSize(m.int(t, "heap")), textutil.ByteSize(floodHeapBound), textutil.ByteSize(m.int(t, "rss")), textutil.ByteSize(floodRSSBound), m["took"])
			if m["class"] != string(chat.ClassTooLarge) {
				t.Errorf("the flood ended %q, want too_large", m["class"])
			}
			if h := m.int(t, "heap"); h > floodHeapBound {
				t.Errorf("the heap grew %s reading one reply, more than %s", textutil.ByteSize(h), textutil.ByteSize(floodHeapBound))
			}
			if r := m.int(t, "rss"); !raceBuild && r > floodRSSBound {
				t.Errorf("the RSS grew %s reading one reply, more than %s", textutil.ByteSize(r), textutil.ByteSize(floodRSSBound))
			}
		})
	}
}

// floodChild reads one flood with the default cap and prints what it cost.
func floodChild(t *testing.T, name string) {
	handler, ok := floods[name]
	if !ok {
		t.Fatalf("no flood %q", name)
	}
	srv := oaitest.Server(t, handler)
	c := New(Config{Name: "s", URL: srv.URL + "/v1"}, nil)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rssBefore := peakRSS()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	_, err := c.Chat(ctx, hiRequest("m"))
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	// HeapSys is what the heap has taken from the system: it does not
	// shrink when the garbage is collected, so it is the high-water mark.
	fmt.Printf("FLOOD class=%s heap=%d rss=%d took=%s\n", chat.ClassOf(err),
		after.HeapSys-before.HeapSys, peakRSS()-rssBefore, took.Round(time.Millisecond))
}

// peakRSS is the process's peak resident set (VmHWM), 0 where /proc does
// not tell.
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

type floodReport map[string]string

func (m floodReport) int(t *testing.T, k string) int64 {
	n, err := strconv.ParseInt(m[k], 10, 64)
	if err != nil {
		t.Fatalf("report field %s = %q: %v", k, m[k], err)
	}
	return n
}

func parseFloodReport(t *testing.T, out string) floodReport {
	for _, line := range strings.Split(out, "\n") {
		rest, ok := strings.CutPrefix(line, "FLOOD ")
		if !ok {
			continue
		}
		m := floodReport{}
		for _, f := range strings.Fields(rest) {
			k, v, _ := strings.Cut(f, "=")
			m[k] = v
		}
		return m
	}
	t.Fatalf("the child printed no report:\n%s", out)
	return nil
}
