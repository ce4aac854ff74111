package cli

import (
	"fmt"
	"pitwall/config"
	"pitwall/gpu/chat"
	"pitwall/internal/redact"
)

// serverWhere is a server's url as pitwall shows it anywhere it prints one:
// masked by redact.URL (userinfo and every query value off the allow-list),
// or where a sim server given no url listens.
func serverWhere(kind chat.Kind, url string) string {
	if kind == chat.KindSim && url == "" {
		return "simulated, on loopback"
	}
	return redact.URL(url)
}

// describeServer is the one description of a configured server, for
// `validate` on a config and on a judge qualification alike: name, kind,
// slots and where, with its credentials masked.
func describeServer(s config.Server) string {
	kind := string(s.Kind)
	if kind == "" {
		kind = "kind detected when run"
	}
	return fmt.Sprintf("%s (%s, %s) %s", s.Name, kind, plural(s.Slots, "slot"), serverWhere(s.Kind, s.URL))
}
