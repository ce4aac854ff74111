// Package cli is pitwall's command line: what `pitwall COMMAND [flags]`
// does, from os.Args to the exit code.
//
// It owns parsing the command line (flags before or after the positional
// arguments, each command's --help listing only its own flags), the wiring
// of a command (config → app: ledger, log file, simulated servers, fleet,
// telemetry → runner → ui), signals (SIGINT and SIGTERM stop a run, exit
// 130), the messages a command prints when it cannot go on, and exit codes.
//
// It must not decide anything a package could test on its own: what a run
// does is the runner's, what a config means is config's, what an export
// holds is history's, what the screen shows is ui's. A function here that
// grows a rule (rather than wiring) belongs in one of those packages.
//
// cli.go has Main, which picks the command; then a file or a few per
// command (run.go, resume.go, rejudge.go, qualify.go, sim.go, validate.go,
// servers.go, runs.go, show.go, import.go, compare.go, export.go, init.go);
// flags.go has the flag parsing they share, app.go the wiring shared by the
// commands that open a run, and gates.go and exitcode.go what a run's end
// returns.
package cli
