// Package qualify qualifies judges: every judge of a config answers every
// case of a judge battery (a fixed candidate with the verdict a good judge
// gives it) k times through the fleet, each request recorded in the ledger
// under a run of scoring mode "qualify" (Qualification, Jobs, StartRun), and
// Figures turns the answers into each judge's accuracy, precision and
// recall on FAIL, κ against the expected verdicts, consistency, J-ERR rate
// and cost, pair by pair agreement, and the jury's figures.
//
// It is an edge: it imports the core (config, gpu, judge, runner/ledger) and
// nothing of the core imports it; cli's qualify command calls it. Reading a
// qualify config (config.LoadQualify, config.IsQualifyConfig) stays in
// config, where Load's machinery is.
package qualify
