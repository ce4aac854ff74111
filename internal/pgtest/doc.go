// Package pgtest starts a throwaway PostgreSQL cluster for the tests of a
// package (initdb into a temporary folder, the server on a free loopback
// port, its socket in that folder), makes a database per test, and stops
// the cluster at the end. It needs the server's binaries (Debian's
// postgresql package; scripts/install-postgres.sh) and no running service
// or credentials of the machine. Without them Start says why, and a test
// package skips its PostgreSQL cases (fails, where CI=true).
//
// As root, initdb refuses to run: the cluster then runs as nobody, in a
// folder owned by nobody.
package pgtest
