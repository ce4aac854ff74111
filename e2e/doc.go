// Package e2e holds end-to-end suites that drive the pitwall binary through
// its command line against real servers. Each subdirectory is one backend;
// see its README.md. They import no pitwall package but internal/reap (the
// watchdog that ends their servers and folders however the test binary
// ends), so that they keep working while the code inside moves. Under
// go test -short every one of their tests skips, saying so.
package e2e
