# The dev loop's commands; CONTRIBUTING.md says when to use which.
# `make short` is the quick loop, `make lint race` what CI runs before the end-to-end suites.

GO          ?= go
STATICCHECK ?= $(shell $(GO) env GOPATH)/bin/staticcheck
PKGS        ?= ./...

.PHONY: test race short lint golden demo e2e pg

# Every test, as a plain go test runs them (the end-to-end suites skip unless turned on).
test:
	$(GO) test -count=1 -timeout 20m $(PKGS)

# Every test under the race detector, as .ci/run runs them.
race:
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

# The quick loop: no end-to-end suites, no runs of 10,000 cells or more, no long fuzz corpora.
short:
	$(GO) test -short -timeout 10m $(PKGS)

# gofmt, go vet and staticcheck, as .ci/run runs them (any finding fails).
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	@test -x "$(STATICCHECK)" || $(GO) install honnef.co/go/tools/cmd/staticcheck@v0.8.2
	$(STATICCHECK) $(PKGS)

# Rewrite the ui's golden screens (ui/testdata/*.golden) from what the code draws now;
# read the diff before committing it.
golden:
	$(GO) test ./ui -count=1 -update
	git diff --stat -- ui/testdata

# The demo on the simulated fleet: the live grid on a terminal.
demo:
	$(GO) run . run examples/demo.toml

# The suites against a real Ollama (built once by scripts/install-ollama.sh, minutes cold)
# and, where scripts/install-promptfoo.sh has installed it, a real promptfoo.
e2e:
	PITWALL_E2E=1 $(GO) test -count=1 -timeout 20m ./e2e/ollama
	@dir=$${PITWALL_PROMPTFOO_DIR:-$$HOME/.cache/pitwall/promptfoo}; \
	if [ -d "$$dir" ]; then PITWALL_PROMPTFOO_DIR="$$dir" $(GO) test -count=1 -timeout 10m ./e2e/promptfoo; \
	else echo "e2e/promptfoo: not installed (scripts/install-promptfoo.sh); skipped"; fi

# The ledger, runner and cli tests with their PostgreSQL pass (the server installed by
# scripts/install-postgres.sh when missing).
pg:
	PITWALL_PG_BIN=$${PITWALL_PG_BIN:-$$(scripts/install-postgres.sh | tail -n 1)} CI=true \
		$(GO) test -count=1 -timeout 20m ./runner/ledger ./runner ./cli
