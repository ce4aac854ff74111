//go:build !race

package client

// raceBuild is set when the tests run under -race, whose shadow memory
// counts in the resident set.
const raceBuild = false
