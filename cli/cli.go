package cli

import (
	"fmt"
	"io"
	"strings"

	"pitwall/internal/textutil"
	"pitwall/runner/state"
)

const usage = `pitwall — a pit wall for LLM batteries

Usage:
  pitwall run [CONFIG]             run a battery (the live grid on a terminal; plain progress with --headless or when not a TTY)
  pitwall resume RUN               finish a stopped or interrupted run; completed requests are never sent again
  pitwall retry RUN                run a finished run's ⚠️ and ⊘ cells again (--errors, --cancelled)
  pitwall rejudge RUN              judge a finished run again (--judge NAME|jury, --only failed|warn|all), no inference
  pitwall import FILE --battery B  bring a finished prompt-prix, promptfoo or inspect run into the ledger (show, export, rejudge)
  pitwall qualify CONFIG           measure the config's judges on a judge battery: accuracy, κ, consistency, cost
  pitwall sim [CONFIG]             serve the simulated fleet of CONFIG on loopback for other clients
  pitwall validate [CONFIG...]     check configs and their batteries and print what would run
  pitwall servers [CONFIG]         probe the fleet: reachable, models, slots, GPU telemetry
  pitwall init                     write a starter pitwall.toml from the servers found on this machine
  pitwall runs                     list runs in the ledger, with their results
  pitwall show RUN                 open a finished run in the grid (or print it with --headless)
  pitwall compare RUN [RUN...]     rank models with intervals and tell real differences from noise
  pitwall export RUN [RUN...]      write a run's report: --format json|csv|md|html|junit|text [-o FILE]
  pitwall ledger copy FROM TO      copy runs between ledgers (a file, a postgres:// URL); again adds nothing

CONFIG defaults to pitwall.toml; RUN is a run id, a unique prefix of one, or "last".
Run "pitwall COMMAND --help" for a command's flags.

Exit codes:
  0    every cell passed (with --fail-under / --fail-on: every gate passed); qualify: every judge qualified
  1    a test failed or errored (WARN too with --strict), a gate failed, or the run was stopped;
       qualify: a judge is below --min-accuracy or gave no verdict
  2    config, setup or runtime error (unreadable config, missing API key, no reachable server)
  130  interrupted (SIGINT or SIGTERM, or ctrl+c in the live grid)
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
	defer startProfiles(stderr)()
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "run":
		return cmdRun(rest, stdin, stdout, stderr)
	case "resume":
		return cmdResume(rest, stdin, stdout, stderr)
	case "retry":
		return cmdRetry(rest, stdin, stdout, stderr)
	case "rejudge":
		return cmdRejudge(rest, stdin, stdout, stderr)
	case "qualify":
		return cmdQualify(rest, stdin, stdout, stderr)
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
	case "import":
		return cmdImport(rest, stdout, stderr)
	case "compare":
		return cmdCompare(rest, stdout, stderr)
	case "export":
		return cmdExport(rest, stdout, stderr)
	case "ledger":
		return cmdLedger(rest, stdout, stderr)
	case "init":
		return cmdInit(rest, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return state.ExitOK
	case "version", "--version":
		fmt.Fprintln(stdout, "pitwall", version)
		return state.ExitOK
	default:
		hint := ""
		if n := textutil.Nearest(cmd, commands, max(2, len(cmd)/3)); n != "" {
			hint = fmt.Sprintf(" (did you mean `pitwall %s`?)", n)
		}
		fmt.Fprintf(stderr, "pitwall: unknown command %q%s\n\n%s", cmd, hint, usage)
		return state.ExitSetup
	}
}

// commands are the commands Main knows, for "did you mean".
var commands = []string{"run", "resume", "retry", "rejudge", "qualify", "sim", "validate", "servers", "runs",
	"show", "import", "compare", "export", "ledger", "init", "help", "version"}

// failf prints an error the way every command does and returns exit 2.
func failf(stderr io.Writer, err error) int {
	msg := textutil.Terminal(err.Error()) // it may quote a battery's or a server's words
	if !strings.HasPrefix(msg, "pitwall") {
		msg = "pitwall: " + msg
	}
	fmt.Fprintln(stderr, msg)
	return state.ExitSetup
}
