// Package judge owns scoring: deterministic checks and semantic validation
// of a reply, judge prompt templates, parsing a judge's verdict, k-sample
// voting, jury aggregation and disagreement, judge comparison and the cache
// key of a verdict.
//
// It is pure: it renders requests and reads replies, and leaves sending them,
// retrying and recording them to the runner. It imports only gpu, for the
// message and tool-call types.
package judge
