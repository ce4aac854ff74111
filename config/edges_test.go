package config_test

// config's tests read other tools' batteries (prompt-prix, BFCL, inspect,
// promptfoo) and run javascript checks, which edges provide: linking them
// here registers them for every test of the package, as cli links them for
// the program.
import (
	_ "pitwall/edges/bfcl"
	_ "pitwall/edges/inspect"
	_ "pitwall/edges/jsassert"
	_ "pitwall/edges/promptfoo"
	_ "pitwall/edges/promptprix"
)
