package cli

import (
	"fmt"
	"io"
	"strings"

	"pitwall/runner/state"
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

const version = "0.1.0-dev"

// exitInterrupted is the exit code of a run that SIGINT or SIGTERM stopped.
const exitInterrupted = 130

// Main runs one command (args without the program's name) and returns its
// exit code. stdin and stdout decide whether the live grid opens: it needs
// both to be terminals.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return state.ExitSetup
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "run":
		return cmdRun(rest, stdin, stdout, stderr)
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
		return state.ExitOK
	case "version", "--version":
		fmt.Fprintln(stdout, "pitwall", version)
		return state.ExitOK
	default:
		fmt.Fprintf(stderr, "pitwall: unknown command %q\n\n%s", cmd, usage)
		return state.ExitSetup
	}
}

// failf prints an error the way every command does and returns exit 2.
func failf(stderr io.Writer, err error) int {
	msg := err.Error()
	if !strings.HasPrefix(msg, "pitwall") {
		msg = "pitwall: " + msg
	}
	fmt.Fprintln(stderr, msg)
	return state.ExitSetup
}
