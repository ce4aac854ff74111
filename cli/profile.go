package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"time"
)

// envCPUProfile names a file to write the command's CPU profile to, and
// envHeapProfile one to write its heap to each time the live heap has
// grown a tenth past the last one written (so the file holds the heap at
// its peak). They are for measuring pitwall (BenchmarkBinaryJudged), not a
// user's settings, so no help lists them.
const (
	envCPUProfile  = "PITWALL_CPUPROFILE"
	envHeapProfile = "PITWALL_HEAPPROFILE"
)

// MemProfileRate is what main sets runtime.MemProfileRate to, before
// anything else: Go samples an allocation every 512 KiB for heap profiles,
// with a walk of its stack, which nothing reads unless envHeapProfile asks
// for the heap; then it stays Go's default.
func MemProfileRate() int {
	if os.Getenv(envHeapProfile) != "" {
		return runtime.MemProfileRate
	}
	return 0
}

// startProfiles starts the profiles the environment asks for, if any;
// stop writes them out. A profile that cannot be written is said on
// stderr and the command goes on without it.
func startProfiles(stderr io.Writer) (stop func()) {
	stopCPU, stopHeap := startCPUProfile(stderr), startHeapProfile(stderr)
	return func() {
		stopHeap()
		stopCPU()
	}
}

func startCPUProfile(stderr io.Writer) (stop func()) {
	path := os.Getenv(envCPUProfile)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		if err = pprof.StartCPUProfile(f); err != nil {
			f.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "pitwall: %s: %v\n", envCPUProfile, err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(stderr, "pitwall: %s: %v\n", envCPUProfile, err)
		}
	}
}

func startHeapProfile(stderr io.Writer) (stop func()) {
	path := os.Getenv(envHeapProfile)
	if path == "" {
		return func() {}
	}
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		var last uint64
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			metrics.Read(live)
			if n := live[0].Value.Uint64(); n > last+last/10 {
				last = n
				f, err := os.Create(path)
				if err == nil {
					err = errors.Join(pprof.WriteHeapProfile(f), f.Close())
				}
				if err != nil {
					fmt.Fprintf(stderr, "pitwall: %s: %v\n", envHeapProfile, err)
					return
				}
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
