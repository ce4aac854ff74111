// Package placement decides which queued job starts on which server: the
// Policy interface, the FleetView a decision is made from, pitwall's policy
// (Default: resident models first, prefetch, swap only when nothing
// resident has work, the drain guard) and FirstFit.
//
// A policy is a pure function of the view: no clock, no randomness, maps
// read in sorted order, so the same policy drives the live fleet (package
// gpu) and the discrete-event simulation (package des). It knows nothing of
// HTTP, cells or judges.
package placement
