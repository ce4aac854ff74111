package importrun_test

// The runs these tests import ran promptfoo batteries, which edges/promptfoo
// reads: linking it here registers it for every test of the package, as cli
// links it for the program.
import _ "pitwall/edges/promptfoo"
