# lab — an interactive learning lab for controller-runtime.
# `make help` lists the targets.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

BIN        := bin/lab
VERSION    ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS    := -X github.com/operator-lab/lab/internal/buildinfo.Version=$(VERSION)
GO_TEST    ?= go test
TEST_FLAGS ?= -timeout 60m
LAB        ?= 3.1
# Every go command here builds with -trimpath, as lab's own check and runner
# builds do (checker.TrimPath): one compiled copy of each dependency in the
# go build cache serves lab, its tests and every workspace's checks.
export GOFLAGS := $(strip -trimpath $(GOFLAGS))
# Root in CI containers; sudo elsewhere (only for apt-get).
SUDO       := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

##@ General

.PHONY: help
help: ## Show this help
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make \033[36m<target>\033[0m\n"} \
	  /^[a-zA-Z0-9_.-]+:.*?##/ { printf "  \033[36m%-14s\033[0m %s\n", $$1, $$2 } \
	  /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Build

.PHONY: build
build: ## Build the lab binary into bin/lab
	go build -ldflags '$(LDFLAGS)' -o $(BIN) .

.PHONY: manifests
manifests: ## Regenerate CRDs and deepcopy code with the pinned controller-gen
	cd tools/codegen && go run sigs.k8s.io/controller-tools/cmd/controller-gen \
	  object paths=../../operator/api/... \
	  crd paths=../../operator/api/... output:crd:artifacts:config=../../operator/crds

##@ Setup

.PHONY: setup
setup: build ## Obtain the control-plane binaries (found, downloaded, or built once: 15–20 min)
	$(BIN) setup

.PHONY: test-deps
test-deps: ## Install what the end-to-end tests drive (tmux)
	@command -v tmux >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq tmux >/dev/null; }

##@ Run

.PHONY: run
run: setup ## Start the lab (LAB=3.1 or LAB=4.4)
	$(BIN) start $(LAB)

##@ Test

# The packages with concurrent code run under the race detector only, in a
# lane of their own beside the rest; the fault suite, which times how fast
# lab quits on a signal, runs after both.
RACE_PKGS  := ./operator/... ./internal/tui/... ./internal/controlplane/ ./internal/learnerctl/
FAULT_PKGS := ./internal/faults/
TEST_OUT   ?= test-results

.PHONY: test
test: setup test-deps lint ## Run every test against a real control plane (provisions it first), then print what the suite cost
	go build -o $(TEST_OUT)/suitereport ./internal/suitereport
	KUBEBUILDER_ASSETS="$$($(BIN) setup --print-path)" $(TEST_OUT)/suitereport -o $(TEST_OUT) -flags '$(TEST_FLAGS)' \
	  main="$$(go list ./... | grep -v -e '/internal/faults$$' -e '/operator\(/\|$$\)' -e '/internal/tui\(/\|$$\)' -e '/internal/controlplane$$' -e '/internal/learnerctl$$' | tr '\n' ' ')" \
	  race="-race $(RACE_PKGS)" \
	  --then faults="$(FAULT_PKGS)"

.PHONY: lint
lint: ## Run the linters (golangci-lint, pinned in tools/lint)
	go tool -modfile=tools/lint/go.mod golangci-lint run ./...

.PHONY: bench
bench: setup ## Run the benchmarks (control plane, events, UI, checker)
	KUBEBUILDER_ASSETS="$$($(BIN) setup --print-path)" go test -run '^$$' -bench . -benchmem -timeout 60m ./...

.PHONY: clean
clean: ## Remove build output (the binary store is kept: `lab setup` reuses it)
	rm -rf bin $(TEST_OUT)
