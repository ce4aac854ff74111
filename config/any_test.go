package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAJudgeOnAnyServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	battery := "[[tests]]\nid = \"a\"\nuser = \"hi\"\n"
	if err := os.WriteFile(filepath.Join(dir, "b.toml"), []byte(battery), 0o644); err != nil {
		t.Fatal(err)
	}
	base := "name = \"x\"\nbattery = \"b.toml\"\nmodels = [\"m\"]\n"
	cases := []struct {
		name, body string
		errs       []string // empty: loads
	}{
		{"any server", base + "[[servers]]\nname = \"s\"\nkind = \"sim\"\nmodels = [\"m\", \"j\"]\n[[scoring.judges]]\nname = \"j\"\nmodel = \"j\"\nserver = \"any\"\n", nil},
		{"a server named any", base + "[[servers]]\nname = \"any\"\nkind = \"sim\"\nmodels = [\"m\"]\n", []string{"servers[0].name", "reserved"}},
		{"a judge model no listed server offers", base + "[[servers]]\nname = \"s\"\nkind = \"sim\"\nmodels = [\"m\"]\n[[scoring.judges]]\nname = \"j\"\nmodel = \"j9\"\nserver = \"any\"\n", []string{"pitwall.toml:10", "scoring.judges[0].model", "no server offers model \"j9\""}},
		{"a sim url without a port", base + "[[servers]]\nname = \"s\"\nkind = \"sim\"\nurl = \"http://127.0.0.1/v1\"\nmodels = [\"m\"]\n", []string{"pitwall.toml:7", "servers[0].url", "needs a port"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "pitwall.toml")
			if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, err := Load(path, Overrides{}, func(string) string { return "" })
			if len(tc.errs) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if err := CheckOffered(cfg, map[string][]string{"s": {"m"}}); err == nil || !strings.Contains(err.Error(), `no reachable server offers model "j"`) {
					t.Errorf("a judge model no server offers: %v", err)
				}
				if err := CheckOffered(cfg, map[string][]string{"s": {"m"}, "t": {"j"}}); err != nil {
					t.Errorf("another server offers the judge model: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("loaded, want an error")
			}
			for _, w := range tc.errs {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not say %q", err, w)
				}
			}
		})
	}
}
