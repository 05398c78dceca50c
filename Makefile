# capsim — build, test and lint. `make test` is what CI runs.
GO ?= go
PKGS := ./...

.PHONY: build test bench lint fuzz docs docs-text tools research

build:
	$(GO) build -o bin/capsim ./cmd/capsim

# End-to-end tests (TestEndToEnd*) time a real server, so they run after the
# others, one package at a time, not competing for the CPU with other tests.
# The peer they need is built only then, and only when tools/go.mod changed.
test:
	$(GO) vet $(PKGS)
	$(GO) test -count=1 -timeout 30m -skip '^TestEndToEnd' $(PKGS)
	$(MAKE) tools
	$(GO) test -count=1 -timeout 10m -p 1 -run '^TestEndToEnd' $(PKGS)

# research runs the research harnesses (build tag research): the
# calibrate/*_heldout_test.go studies, each a few fits of the corpus that
# compare held-out errors with and without a mechanism, and
# the comparisons of two profiles' predictions of every record
# (CAPSIM_BASE_PROFILE, CAPSIM_NEW_PROFILE) and of two fit --cv JSON
# outputs (CAPSIM_BASE_CV, CAPSIM_NEW_CV), which skip unless those name files.
research:
	$(GO) test -count=1 -timeout 30m -tags research -run 'HeldOut|OnePointPerDeployment|Compare' -v ./calibrate/

# tools builds the end-to-end test peer llm-d-inference-sim into tools/bin/
# from the separate tools module (its dependencies stay out of go.mod). Its
# ~130 modules come from the Go module proxy into the shared module cache
# (go env GOMODCACHE) once; the binary is rebuilt only when tools/go.mod or
# tools/go.sum change. llm-d-inference-sim listens on every interface (it
# has no address flag): the tests send traffic to 127.0.0.1 only.
PEER := tools/bin/llm-d-inference-sim
tools: $(PEER)
$(PEER): tools/go.mod tools/go.sum
	cd tools && CGO_ENABLED=0 $(GO) build -o bin/llm-d-inference-sim github.com/llm-d/llm-d-inference-sim/cmd/llm-d-inference-sim

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

lint:
	@if git grep -n -E '^(<<<<<<<|>>>>>>>)( |$$)'; then echo "merge conflict markers left in"; exit 1; fi
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) tool staticcheck $(PKGS)

# fuzz runs every fuzz target (parsers, sidecars, profiles, the SSE reader)
# for FUZZTIME each. Minimising a new interesting input is capped at
# FUZZMINIMIZE so a target spends its time fuzzing. A crasher is written to
# PKG/testdata/fuzz/TARGET/ and from then on runs in `make test` as a
# regression case: commit it with the fix.
FUZZTIME ?= 10s
FUZZMINIMIZE ?= 1s
fuzz:
	@for pkg in $$($(GO) list $(PKGS)); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$t"; \
	    $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) $$pkg || exit 1; \
	  done; \
	done

# docs regenerates docs/cli.md from the commands' flag sets and every
# example output between capsim:begin/capsim:end markers in README.md and
# docs/*.md (cmd/capsim/docs_test.go; without -update those tests fail when
# a document is stale), then the figures.
docs: docs-text docs-plots
docs-text:
	$(GO) test -count=1 -run '^TestDocs' ./cmd/capsim -update

# docs-plots regenerates the figures the docs show (docs/plot-*.png,
# docs/plan-pareto.png): one series against its calibrated simulation, the
# summary of every series, a prediction with its band, knee and overlay,
# and the frontier of docs/plan.md's first example. It uses the
# embedded profile; PROFILE=FILE draws another one's fit.
PROFILE ?=
DOCS_PLOT_DIR := bin/docs-plot
.PHONY: docs-plots
docs-plots: build
	rm -rf $(DOCS_PLOT_DIR)
	./bin/capsim plot --out $(DOCS_PLOT_DIR) $(if $(PROFILE),--profile $(PROFILE)) > /dev/null
	cp $(DOCS_PLOT_DIR)/summary.png docs/plot-summary.png
	cp $$(ls $(DOCS_PLOT_DIR)/h20-qwen3-32b-dynamo-0.3.0-12p-tp1-1d-tp4*-isl3000-osl150-conc.png | head -n 1) docs/plot-series-h20-dynamo.png
	./bin/capsim predict $(if $(PROFILE),--profile $(PROFILE)) --gpu H20 --model Qwen3-32B --prefill 12xTP1 --decode 1xTP4 \
	  --isl 3000 --osl 150 --concurrency 1,2,4,8,16,32,64,128,256 --plot docs/plot-predict-h20-dynamo.png > /dev/null
	./bin/capsim plan --quiet $(if $(PROFILE),--profile $(PROFILE)) --model Qwen3-32B --isl 3000 --osl 150 --rate 8 --slo ttft_p99=2000ms,tpot_p99=50ms \
	  --gpu H20,H200 --max-gpus 24 --gpu-cost H20=1.9,H200=3.5 --top 3 --plot docs/plan-pareto.png > /dev/null
