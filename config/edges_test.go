package config_test

// config's tests read promptfoo batteries and run javascript checks, which
// edges provide: linking them here registers them for every test of the
// package, as cli links them for the program.
import (
	_ "pitwall/edges/jsassert"
	_ "pitwall/edges/promptfoo"
)
