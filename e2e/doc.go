// Package e2e holds end-to-end suites that drive the pitwall binary through
// its command line against real servers. Each subdirectory is one backend;
// see its README.md. They import no pitwall package, so that they keep
// working while the code inside moves.
package e2e
