package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"pitwall/gpu/internal/refgen"
)

func main() {
	dir := flag.String("dir", "examples", "folder to write reference-fleet.toml and reference-battery.toml into")
	flag.Parse()
	if err := write(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "refgen:", err)
		os.Exit(1)
	}
}

func write(dir string) error {
	f := refgen.Reference()
	files := map[string][]byte{
		refgen.FleetFile:   f.FleetTOML(refgen.BatteryFile),
		refgen.BatteryFile: f.BatteryTOML(),
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}
