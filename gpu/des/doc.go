// Package des runs the placement policy in virtual time: a discrete-event
// simulation of a fleet (Simulate), the makespan lower bound it is measured
// against (LowerBound), the baseline policies it is compared with
// (PromptPrix, FIFO) and the reference scenario of the scheduling benchmark
// (Reference). docs/scheduling.md explains the figures.
//
// Only tests and benchmarks import it: it is not linked into the pitwall
// binary. It owns no live state and sends nothing over the network.
package des
