# capsim — build, test and lint. `make test` is what CI runs.
GO ?= go
PKGS := ./...

.PHONY: build test bench lint fuzz docs

build:
	$(GO) build -o bin/capsim ./cmd/capsim

test:
	$(GO) vet $(PKGS)
	$(GO) test -count=1 -timeout 30m $(PKGS)

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) tool staticcheck $(PKGS)

# fuzz runs every fuzz target for FUZZTIME each.
FUZZTIME ?= 10s
fuzz:
	@for pkg in $$($(GO) list $(PKGS)); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done
