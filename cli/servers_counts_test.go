package cli

import (
	"strings"
	"testing"

	"pitwall/gpu/probe"
)

// A server that does not tell its requests in flight and queued (Ollama, a
// hosted API) shows them as unknown, not as 0/0.
func TestServersShowsAnUntoldCountAsUnknown(t *testing.T) {
	t.Parallel()
	two, none := 2, 0
	var out strings.Builder
	printServers(&out, []probe.Result{
		{Server: "ollama", Kind: "ollama", Reachable: true},
		{Server: "vllm", Kind: "vllm", Reachable: true, Running: &two, Waiting: &none},
	})
	lines := strings.Split(out.String(), "\n")
	if !strings.Contains(lines[1], " ?/? ") {
		t.Errorf("ollama's line %q; want RUN/WAIT ?/?", lines[1])
	}
	if !strings.Contains(lines[2], " 2/0 ") {
		t.Errorf("vllm's line %q; want RUN/WAIT 2/0", lines[2])
	}
}
