// Package judge owns scoring: judge prompt templates, the one path by which
// a candidate's reply reaches a judge (RenderCandidate, neutralise.go),
// parsing a judge's verdict so that only the judge decides it (ParseReply),
// k-sample voting, jury aggregation and disagreement, judge comparison, and
// the cache key of a verdict (qualifying judges on a judge battery is the
// edge edges/qualify, built on these). Deterministic checks and reply validation are judge/check;
// the verdict types are judge/scoring.
//
// It is pure: it renders requests and reads replies, and leaves sending them,
// retrying and recording them to the runner. It imports only vocabulary:
// gpu/chat, judge/check, judge/scoring and internal/textutil.
package judge
