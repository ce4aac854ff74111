// Command pitwall runs batteries of prompts against many LLMs on many GPUs
// and judges the results live. See README.md; the command line itself is
// package cli.
package main

import (
	"os"
	"runtime"

	"pitwall/cli"
)

func main() {
	runtime.MemProfileRate = cli.MemProfileRate()
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
