package promptfoo

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"pitwall/internal/reap"
)

// The suite's shared state, set up once by TestMain.
var (
	pitwallBin   string // the pitwall binary built from the repo root
	promptfooBin string // the runner scripts/install-promptfoo.sh wrote
	skipReason   string // why there is no promptfoo; every test skips with it
)

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) int {
	root, err := repoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e/promptfoo:", err)
		return 1
	}
	if !flag.Parsed() {
		flag.Parse()
	}
	if testing.Short() {
		skipReason = "go test -short: the differential suite against promptfoo runs without -short"
		fmt.Fprintln(os.Stderr, "e2e/promptfoo: every test skips:", skipReason)
		return m.Run()
	}
	dir := os.Getenv("PITWALL_PROMPTFOO_DIR")
	if dir == "" {
		return without(m, "the promptfoo differential suite is opt-in: set PITWALL_PROMPTFOO_DIR (scripts/install-promptfoo.sh installs node and promptfoo there, a minute or two cold)")
	}
	promptfooBin, err = installPromptfoo(root)
	if err != nil {
		return without(m, "no promptfoo to compare with: "+err.Error())
	}
	work, err := os.MkdirTemp("", "pitwall-e2e-promptfoo-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e/promptfoo:", err)
		return 1
	}
	defer os.RemoveAll(work)
	// However this binary ends, the watchdog removes the work folder.
	if _, err := reap.Group(0, work); err != nil {
		fmt.Fprintln(os.Stderr, "e2e/promptfoo:", err)
		return 1
	}
	if b := os.Getenv("PITWALL_BIN"); b != "" {
		pitwallBin = b
	} else {
		pitwallBin = filepath.Join(work, "pitwall")
		build := exec.Command("go", "build", "-o", pitwallBin, ".")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e/promptfoo: go build pitwall failed: %v\n%s", err, out)
			return 1
		}
	}
	return m.Run()
}

// installPromptfoo runs scripts/install-promptfoo.sh (quick once cached)
// and returns the runner it prints last.
func installPromptfoo(root string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "scripts", "install-promptfoo.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("scripts/install-promptfoo.sh: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1], nil
}

// without runs the tests, each skipping with why; under CI it fails, so
// that a CI without promptfoo cannot pass by skipping the suite.
func without(m *testing.M, why string) int {
	skipReason = why
	fmt.Fprintln(os.Stderr, "e2e/promptfoo: every test skips:", why)
	code := m.Run()
	if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		fmt.Fprintln(os.Stderr, "e2e/promptfoo: CI is set, so a missing promptfoo fails the suite")
		return 1
	}
	return code
}

func requirePromptfoo(t *testing.T) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
}

func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root := filepath.Clean(filepath.Join(wd, "..", ".."))
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return "", fmt.Errorf("cannot find the repo root from %s: %w", wd, err)
	}
	return root, nil
}
