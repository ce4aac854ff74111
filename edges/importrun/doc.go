// Package importrun brings a run that another tool finished into the
// ledger, as a run pitwall made no request for: `pitwall import FILE
// --battery BATTERY`. Once in, the run is shown, exported and re-judged
// like any other.
//
// It reads three kinds of file, told apart by their content (Parse):
//
//	prompt-prix   the results export {"tests", "models", "results"} and the
//	              consistency export {"tests", "models", "runs_total",
//	              "aggregates"}, whose runs become repeats
//	promptfoo     the output of `promptfoo eval -o results.json`
//	inspect       an inspect eval log written as JSON
//
// Each reader turns its file into a Source: models, test ids and one
// Result per (model, test, repeat) the file answered. Import joins the
// results to the battery on the test id, takes the tool calls a reply
// carries in its text (prompt-prix's rendering, a model's raw tool-call
// tokens: ToolCallsInText) as structured calls, and runs pitwall's own
// validation and checks again on every reply rather than trusting the
// other tool's verdict; that tool's fail and its reason stay with the cell
// as one more check result ("verdict (imported from prompt-prix)"), shown in
// the detail view and exported, which does not decide it. A reply the other tool recorded as an error is a ⚠️
// cell, and a cell the file holds no answer for is ⊘.
//
// The run is written through runner/ledger alone (CreateRun, PutCell,
// FinishRun) and has no request rows: the ledger's requests are what
// pitwall sent, and it sent nothing. Beside the ledger it writes a small
// config (imports/RUN.toml) naming the battery and the models, which the
// run's record points at, so that reading the run back finds its tests;
// the record also says where the run came from (Imported), which a command
// that would send the run's requests again asks first.
//
// Every reader bounds what it reads (limits.go): a file past MaxFileBytes,
// or more models, tests, repeats or cells than the limits, is refused with
// an error that says which limit, before anything is allocated for it.
//
// It is an edge: it imports the core (config, judge/check, runner/ledger,
// runner/state) and nothing in the core imports it; cli's import, resume and
// rejudge commands call it. It must not send a request, start a fleet, or
// import the runner engine.
package importrun
