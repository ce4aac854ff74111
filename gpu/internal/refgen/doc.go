// Package refgen describes the reference fleet of the scheduling benchmark
// (BenchmarkReferenceFleet in package gpu, docs/scheduling.md): four 24 GB
// GPUs, twelve models of 5–20 GB, 200 tests, a jury of two judge models. The
// benchmark builds its virtual-time scenario from Reference(), and the
// generator in ./gen writes the same scenario as examples/reference-fleet.toml
// and examples/reference-battery.toml for the real path through the
// simulator, so the two cannot drift apart.
//
// It imports no pitwall package, so that package gpu's tests may import it.
package refgen
