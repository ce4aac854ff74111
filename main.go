// Command pitwall runs batteries of prompts against many LLMs on many GPUs
// and judges the results live. See README.md.
package main

import (
	"fmt"
	"io"
	"os"
)

const usage = `pitwall — a pit wall for LLM batteries

Usage:
  pitwall run [CONFIG]             run a battery (the live grid on a terminal; plain progress with --headless or when not a TTY)
  pitwall sim [CONFIG]             serve the simulated fleet of CONFIG on loopback for other clients
  pitwall validate [CONFIG...]     check configs and their batteries and print what would run
  pitwall servers [CONFIG]         probe the fleet: reachable, models, slots, GPU telemetry
  pitwall runs                     list runs in the ledger
  pitwall show RUN                 open a finished run in the grid (or print it with --headless)
  pitwall export RUN --format json print a run's export (RUN may be "last")

CONFIG defaults to pitwall.toml. Run "pitwall COMMAND --help" for a command's flags.

Exit codes: 0 all passed; 1 a test failed or errored (WARN too with --strict), or the run
was stopped; 2 config, setup or runtime error; 130 interrupted.
`

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

// dispatch runs one command and returns its exit code.
func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "run":
		return cmdRun(rest, stdout, stderr)
	case "sim":
		return cmdSim(rest, stdout, stderr)
	case "validate":
		return cmdValidate(rest, stdout, stderr)
	case "servers":
		return cmdServers(rest, stdout, stderr)
	case "runs":
		return cmdRuns(rest, stdout, stderr)
	case "show":
		return cmdShow(rest, stdout, stderr)
	case "export":
		return cmdExport(rest, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	case "version", "--version":
		fmt.Fprintln(stdout, "pitwall", version)
		return 0
	default:
		fmt.Fprintf(stderr, "pitwall: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
}

const version = "0.1.0-dev"
