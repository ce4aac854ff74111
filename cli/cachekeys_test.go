package cli

import (
	"os"
	"path/filepath"
	"testing"

	"pitwall/gpu/chat"
	"pitwall/runner/ledger"
)

// TestALedgerOfAnEarlierBuildStillAnswersFromItsCache holds the cache keys
// still: testdata/cachekeys/ledger.db was written by an earlier build (its
// README says which and how), and a --reuse run of the same config against
// a copy must take every answer that run completed and every verdict from
// the cache, sending none of them again. A change to how a request's
// messages, parameters or a judge's prompt are encoded for the key fails it.
func TestALedgerOfAnEarlierBuildStillAnswersFromItsCache(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, f := range []string{"pitwall.toml", "battery.toml", "ledger.db"} {
		b, err := os.ReadFile(filepath.Join("testdata", "cachekeys", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db := filepath.Join(dir, "ledger.db")
	led, err := ledger.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	first, err := led.Run(ledger.LastRun)
	if err != nil {
		t.Fatal(err)
	}
	before, err := led.Requests(first.ID)
	led.Close()
	if err != nil {
		t.Fatal(err)
	}
	paid := map[string]bool{}
	answers, verdicts := 0, 0
	for _, r := range before {
		if r.Status == ledger.StatusCompleted && r.CacheKey != "" && !paid[r.CacheKey] {
			paid[r.CacheKey] = true
			switch r.Purpose {
			case ledger.PurposeInference:
				answers++
			case ledger.PurposeJudge:
				verdicts++
			}
		}
	}
	if answers == 0 || verdicts == 0 {
		t.Fatalf("the fixture holds %d completed answers and %d verdicts: not the ledger its README describes", answers, verdicts)
	}

	code, _, stderr := pitwall(t, dir, nil, "run", "pitwall.toml", "--headless", "--time-scale", "0", "--reuse", "--db", db)
	if code != 0 && code != 1 {
		t.Fatalf("reuse run: exit %d:\n%s", code, stderr)
	}
	led, err = ledger.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	defer led.Close()
	last, err := led.Run(ledger.LastRun)
	if err != nil || last.ID == first.ID {
		t.Fatalf("the reuse run is not in the ledger (%v)", err)
	}
	after, err := led.Requests(last.ID)
	if err != nil {
		t.Fatal(err)
	}
	cached := map[string]int{}
	for _, r := range after {
		if r.Purpose != ledger.PurposeInference && r.Purpose != ledger.PurposeJudge {
			continue
		}
		if r.Server == chat.ServerCache {
			cached[r.Purpose]++
			continue
		}
		if paid[r.CacheKey] {
			t.Errorf("%s request %s × %s was sent again though the earlier build's ledger has its answer", r.Purpose, r.Model, r.Test)
		}
	}
	if cached[ledger.PurposeInference] < answers || cached[ledger.PurposeJudge] < verdicts {
		t.Errorf("from the cache: %d answers of %d, %d verdicts of %d", cached[ledger.PurposeInference], answers, cached[ledger.PurposeJudge], verdicts)
	}
}
