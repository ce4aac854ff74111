// Command gen writes the reference fleet's config and battery for the real
// path through the simulator:
//
//	go run ./gpu/internal/refgen/gen            # into examples/
//	go run ./gpu/internal/refgen/gen -dir DIR
package main
