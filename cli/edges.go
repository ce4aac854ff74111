package cli

// The edges: packages of edges/ that import the core and register with it
// (as database/sql drivers do), so that the core reads on its own and links
// no foreign format or engine. cli is where they are wired in; a package
// that needs one in its tests imports it there.
//
// edges/importrun is not here: the import, resume and rejudge commands
// call it by name.

// Formats of other tools and the JavaScript engine.
import (
	// javascript checks, run in goja (judge/check's ScriptEngine)
	_ "pitwall/edges/jsassert"
	// promptfoo's YAML batteries and judge batteries (config's Format)
	_ "pitwall/edges/promptfoo"
)
