# ssdkit developer commands. `make help` lists them.
PYTHON ?= python3
PIP ?= $(PYTHON) -m pip
# The extras the tests need beyond the default install (a variable: a comma would split
# `call`'s arguments).
TEST_EXTRAS := [test,dask]
# bash: PIP_INSTALL below reads pip's exit status from PIPESTATUS.
SHELL := /bin/bash

.PHONY: help setup demo test test-rust test-c header examples test-env test-python lint bench bench-core pgo schema

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

# The package the Python tests import is built without link-time optimisation and with many
# codegen units: about half the build time, same code paths. Benchmarks and the demo install the
# fully optimised build.
QUICK_BUILD = CARGO_PROFILE_RELEASE_LTO=off CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16

# Installs that build the Rust core show its progress: `pip install -v` streams the build
# backend's output (maturin, then cargo's `Compiling <crate>` line per crate: the first build takes
# minutes), filtered to the lines that tell where the install is; pip's whole log goes to
# PIP_LOG and its end is printed if the install fails. The exit status is pip's.
# PIP_RUN's arguments: pip's arguments, the environment, and pip with its subcommand last.
PIP_LOG = target/pip-install.log
PIP_SHOW = 'Processing |Collecting |Downloading |Updating crates|Compiling |Finished |Built wheel|Building wheel|C API |ssdkit build: |Installing collected|Successfully|^ *(error|warning)(\[|:)'
define PIP_RUN
	@mkdir -p $(dir $(PIP_LOG))
	@echo "pip $(lastword $(3)) $(1) (building the Rust core: cargo lists each crate it compiles; full log in $(PIP_LOG))"
	@$(2) $(3) -v $(1) 2>&1 | tee $(PIP_LOG) | { grep --line-buffered -E $(PIP_SHOW) || true; }; \
	status=$${PIPESTATUS[0]}; \
	if [ "$$status" -ne 0 ]; then echo "pip failed (status $$status); the end of $(PIP_LOG):"; \
		tail -n 40 $(PIP_LOG); exit "$$status"; fi
endef
PIP_INSTALL = $(call PIP_RUN,$(1),$(2),$(PIP) install)

# The tests run in a virtual environment of their own, target/test-venv (made when missing),
# so `make test` leaves the active environment (the user's own, optimised install) alone. The
# quick build is made once as a wheel, target/test-wheel/ssdkit-*.whl, installed there with the
# test extras; tests/python/test_install.py installs the same wheel (SSDKIT_WHEEL) into a fresh
# environment of its own without them. pip reinstalls a wheel of an unchanged version only
# when forced, hence the second install.
TEST_VENV = target/test-venv
TEST_PYTHON = $(TEST_VENV)/bin/python
TEST_WHEEL_DIR = target/test-wheel

$(TEST_PYTHON):
	$(PYTHON) -m venv $(TEST_VENV)

setup: ## install the quick build with the test extras into the active environment (for development)
	$(call PIP_INSTALL,".$(TEST_EXTRAS)",$(QUICK_BUILD))

test-env: $(TEST_PYTHON) ## build the quick wheel and install it with the test extras in target/test-venv
	rm -rf $(TEST_WHEEL_DIR)
	$(call PIP_RUN,--no-deps -w $(TEST_WHEEL_DIR) .,$(QUICK_BUILD),$(TEST_PYTHON) -m pip wheel)
	$(TEST_PYTHON) -m pip install --quiet "$$(ls $(TEST_WHEEL_DIR)/ssdkit-*.whl)$(TEST_EXTRAS)"
	$(TEST_PYTHON) -m pip install --quiet --no-deps --force-reinstall $(TEST_WHEEL_DIR)/ssdkit-*.whl

demo: ## install, then simulate the built-in mqsim-paper example and print its summary
	$(call PIP_INSTALL,.)
	ssdkit run mqsim-paper

test-rust: ## Rust unit, integration, property and closed-form tests (debug assertions and overflow checks on)
	cargo test -p ssdkit-core
	cargo test -p ssdkit-serve

# Every example with a small argument, so they keep working: built with the test profile,
# which `cargo test` has already used to build them (no second build).
EXAMPLE_RUN = cargo run --quiet --profile test -p ssdkit-core --example
EXAMPLE_TMP = target/examples-check
SHRUNK = flash.blocks_per_plane=128

examples: ## run every Rust example once with small arguments
	mkdir -p $(EXAMPLE_TMP)
	$(EXAMPLE_RUN) bench_core -- 300 $(SHRUNK)
	$(EXAMPLE_RUN) write_gc -- 2000 $(SHRUNK)
	$(EXAMPLE_RUN) prof_case -- flow.0.requests=300 $(SHRUNK)
	$(EXAMPLE_RUN) snapshot_io -- mqsim-paper $(EXAMPLE_TMP)/check.snap $(SHRUNK)
	$(EXAMPLE_RUN) trace_parse -- --generate 2000 $(EXAMPLE_TMP)/gen.trace.zst mqsim
	$(EXAMPLE_RUN) trace_parse -- $(EXAMPLE_TMP)/gen.trace.zst
	$(EXAMPLE_RUN) trace_parse -- tests/data/mqsim/traces/tpcc-small.trace mqsim

# The C API (crates/ssdkit-c): its Rust tests (the committed header is the one cbindgen generates
# now; every call through the C ABI), then examples/c/closed_loop.c compiled against the header
# and libssdkit.so and run. The library is the test-profile build `cargo test -p ssdkit-c` has
# just made (optimised, checks on), not a release build.
ifeq ($(origin CC),default)
CC = gcc
endif
C_LIB_DIR = $(abspath $(or $(CARGO_TARGET_DIR),target))/debug
C_FLAGS = -std=c11 -O2 -Wall -Wextra -Wpedantic -Werror

test-c: ## C API: header up to date, FFI tests, examples/c/closed_loop.c built with gcc and run
	cargo test -p ssdkit-c
	cargo build --quiet --profile test -p ssdkit-c
	mkdir -p $(EXAMPLE_TMP)
	$(CC) $(C_FLAGS) -I crates/ssdkit-c/include examples/c/closed_loop.c \
		-L $(C_LIB_DIR) -lssdkit -Wl,-rpath,$(C_LIB_DIR) -o $(EXAMPLE_TMP)/closed_loop
	$(EXAMPLE_TMP)/closed_loop 2000

header: ## regenerate crates/ssdkit-c/include/ssdkit.h (cbindgen) after changing the C API
	UPDATE_HEADER=1 cargo test -p ssdkit-c --test header

test-python: test-env ## pytest suite against the quick build, in target/test-venv
	SSDKIT_WHEEL="$$(ls $(TEST_WHEEL_DIR)/ssdkit-*.whl)" $(TEST_PYTHON) -m pytest -q tests/python

test: lint test-rust test-c examples test-python ## every check: lint, Rust tests, C API, examples, pytest

# ruff's version is pinned once, in pyproject.toml's test extras.
RUFF_PIN = $(shell grep -o '"ruff==[^"]*"' pyproject.toml | tr -d '"')

lint: $(TEST_PYTHON) ## rustfmt, clippy (warnings are errors), ruff check and ruff format
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings
	$(TEST_PYTHON) -m pip install --quiet "$(RUFF_PIN)"
	$(TEST_PYTHON) -m ruff check python tests/python build_backend
	$(TEST_PYTHON) -m ruff format --check python tests/python build_backend

bench: ## simulator speed on mqsim-paper, 1M requests per case: requests/s, events/s, peak memory
	$(call PIP_INSTALL,.)
	ssdkit bench

pgo: ## record the profile that guides the optimised build (build_backend/pgo/; needs rustup's llvm-tools)
	$(PYTHON) scripts/pgo.py

bench-core: ## the same cases timed in Rust alone (no Python)
	cargo run --release -p ssdkit-core --example bench_core

schema: ## regenerate docs/config.schema.json and docs/result.schema.json from the Rust types
	UPDATE_SCHEMA=1 cargo test -p ssdkit-core --lib -- schema_file_is_current committed_schema_is_current
