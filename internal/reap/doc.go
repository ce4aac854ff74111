// Package reap ends what a test started, however the test binary ends.
//
// A test that starts a server (PostgreSQL, Ollama, a simulated fleet) stops
// it in a cleanup, but a cleanup does not run when the binary is killed:
// go test's -timeout panics past every defer, and a SIGKILL from CI or a
// user runs nothing at all. Group hands the server's process group and its
// folders to a watchdog shell that outlives the binary: it waits on a pipe
// only the binary holds, and when that pipe closes without a word it kills
// the group and removes the folders. A test that stops its server itself
// releases the watchdog first, so a pid used again later is never signalled.
//
// It is for tests and end-to-end suites only.
package reap
