package state

// Exit codes of a run, as docs/cli.md's table gives them.
const (
	ExitOK    = 0 // every cell passed
	ExitFail  = 1 // a test failed or errored (WARN too under strict), or the run was stopped
	ExitSetup = 2 // config, setup or runtime error (the ledger included)
)

// ExitCode is the exit code a finished run earns. Verdicts are those of the
// judge in view; with no judge, the checks alone decide.
func ExitCode(b *BatteryRun, strict bool) int {
	if b == nil {
		return ExitSetup
	}
	if b.Status == RunFailed {
		return ExitSetup
	}
	if b.Status == RunStopped {
		return ExitFail
	}
	c := b.Counts
	if c.Failed > 0 || c.Errored > 0 || c.Cancelled > 0 || c.Done() < c.Cells() {
		return ExitFail
	}
	if b.Plan.InView != "" {
		if c.Fail > 0 || c.JudgeError > 0 || (strict && c.Warn > 0) || c.Judged < c.ToJudge {
			return ExitFail
		}
	}
	return ExitOK
}
