// Package compare ranks the models of one or more finished runs with the
// uncertainty a small battery really has, and says what changed between two
// runs of the same battery.
//
// For each run: models ranked by pass rate (Wilson interval) or mean score
// (bootstrap over tests), models whose intervals overlap marked as tied, a
// per-category breakdown, latency, time to first token and tokens/s medians
// and 95th percentiles, tokens, judges' agreement with each other, and a
// paired McNemar test between every two models on the cells both have. For
// each later run against the first: the cells that were fixed, broke or
// flipped, and a McNemar test per model saying whether the change is more
// than noise.
//
// It reads plain Run and Cell values (runner/history builds them from the
// ledger), decides nothing about formats beyond a plain-text table for the
// terminal, and uses no clock and no unseeded randomness: the same runs give
// the same report, byte for byte.
package compare
