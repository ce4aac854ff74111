package importrun_test

// The runs these tests import ran promptfoo, prompt-prix and inspect
// batteries, which those edges read: linking them here registers them for
// every test of the package, as cli links them for the program.
import (
	_ "pitwall/edges/inspect"
	_ "pitwall/edges/promptfoo"
	_ "pitwall/edges/promptprix"
)
