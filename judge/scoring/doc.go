// Package scoring is the vocabulary of verdicts that every layer shares: a
// verdict, one judge sample, a judge's vote over its samples, a jury's
// aggregate, a deterministic check's result (CheckResult), and the scoring
// plan (mode, judging, which judges exist and which is in view), decided
// once by NewPlan.
//
// It holds types and pure functions only and imports nothing of pitwall's:
// parsing, voting and templates are the judge package's.
package scoring
