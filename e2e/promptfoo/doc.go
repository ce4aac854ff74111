// Package promptfoo is the differential suite against promptfoo itself: the
// same promptfoo YAML, run by real promptfoo (installed by
// scripts/install-promptfoo.sh) and by pitwall against one OpenAI-compatible
// server of the suite's own that serves fixed replies, must give the same
// verdict per assertion. It is opt-in: it runs when PITWALL_PROMPTFOO_DIR
// is set (`.ci/run` sets it) and otherwise skips, saying so; under CI=true
// a missing promptfoo fails it. README.md lists the deliberate differences.
package promptfoo
