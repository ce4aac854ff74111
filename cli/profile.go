package cli

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
)

// envCPUProfile names a file to write the command's CPU profile to. It is
// for measuring pitwall (BenchmarkBinaryJudged), not a user's setting, so
// no help lists it.
const envCPUProfile = "PITWALL_CPUPROFILE"

// startCPUProfile starts the CPU profile PITWALL_CPUPROFILE asks for, if
// any; stop writes it out. A profile that cannot start is said on stderr
// and the command goes on without it.
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
