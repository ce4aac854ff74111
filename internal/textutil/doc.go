// Package textutil holds the small text helpers that several layers share:
// the edit distance behind every "did you mean". It imports nothing of
// pitwall's and knows nothing of configs, checks or runs.
package textutil
