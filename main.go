// Command pitwall runs batteries of prompts against many LLMs on many GPUs
// and judges the results live. See README.md; the command line itself is
// package cli.
package main

import (
	"os"

	"pitwall/cli"
	"pitwall/internal/gcbudget"
)

func main() {
	gcbudget.Start() // a large run keeps 1.25× its live heap, not 2× (GOMEMLIMIT overrides)
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
