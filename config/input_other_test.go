//go:build !unix

package config

import "testing"

// makeFIFO: there are no named pipes in the file system here.
func makeFIFO(t *testing.T) (string, bool) { return "", false }
