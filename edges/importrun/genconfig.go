package importrun

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/BurntSushi/toml"
)

// PlaceholderURL is the url of the one server an imported run's config
// names. Config requires a server, and browsing or exporting the run needs
// none: nothing listens there (port 1), so a command that would send
// inference to it fails at once instead of reaching a stranger's server.
const PlaceholderURL = "http://127.0.0.1:1/v1"

// PlaceholderServer is that server's name.
const PlaceholderServer = "imported-placeholder"

// genConfig is the config an imported run points at: the battery and the
// models, so that reading the run back (`show`, a re-judge) finds its
// tests. Fields are written in this order.
type genConfig struct {
	Name    string      `toml:"name"`
	Battery string      `toml:"battery"`
	Models  []string    `toml:"models"`
	DB      string      `toml:"db"`
	Run     genRun      `toml:"run"`
	Servers []genServer `toml:"servers"`
}

type genRun struct {
	Repeat int `toml:"repeat"`
}

type genServer struct {
	Name string `toml:"name"`
	URL  string `toml:"url"`
	Kind string `toml:"kind"`
}

// writeConfig writes the config of run id to path (the folder is made);
// battery and db are absolute paths.
func writeConfig(path, id, file, format string, c genConfig) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, `# Written by pitwall import for run %s, brought in from
#   %s (%s).
# It names the battery and the models of that run, so that pitwall show,
# export and rejudge can read the run back; pitwall sent no request for it.
# The server is a placeholder that nothing listens on: browsing and exporting
# need no server. To re-judge the run, give pitwall rejudge a config that has
# your [[scoring.judges]] and the [[servers]] they run on.
`, id, tomlComment(file), format)
	c.Servers = []genServer{{Name: PlaceholderServer, URL: PlaceholderURL, Kind: "openai"}}
	enc := toml.NewEncoder(&b)
	enc.Indent = ""
	if err := enc.Encode(c); err != nil {
		return fmt.Errorf("writing the run's config: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("writing the run's config: %w", err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing the run's config: %w", err)
	}
	return nil
}

// tomlComment keeps a path on one comment line.
func tomlComment(s string) string {
	return string(bytes.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, []byte(s)))
}
