package runner

// Exit codes, as DESIGN.md says.
const (
	ExitOK    = 0 // every cell passed
	ExitFail  = 1 // a test failed or errored (WARN too under strict), or the run was stopped
	ExitSetup = 2 // config, setup or runtime error
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
	if c.Failed > 0 || c.Errored > 0 || c.Cancelled > 0 || c.Pending > 0 || c.Queued > 0 || c.Running > 0 {
		return ExitFail
	}
	if b.ActiveJudge != "" {
		if c.Fail > 0 || c.JudgeError > 0 || (strict && c.Warn > 0) || c.Judged < c.ToJudge {
			return ExitFail
		}
	}
	return ExitOK
}
