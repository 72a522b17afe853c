# ssdkit developer commands. `make help` lists them.
PYTHON ?= python3
PIP ?= $(PYTHON) -m pip

.PHONY: help setup demo test test-rust test-python lint bench bench-core schema

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

setup: ## build the Rust core and install the ssdkit package with its test extras
	$(PIP) install --quiet ".[test]"

demo: ## install, then simulate the built-in mqsim-paper example and print its summary
	$(PIP) install --quiet .
	ssdkit run mqsim-paper

test-rust: ## Rust unit, integration, property and closed-form tests
	cargo test --release -p ssdkit-core

test-python: setup ## pytest suite against the installed package
	$(PYTHON) -m pytest -q tests/python

test: test-rust test-python ## every test, Rust and Python

lint: ## rustfmt, clippy (warnings are errors), ruff
	cargo fmt --all -- --check
	cargo clippy --all-targets -p ssdkit-core -- -D warnings
	$(PIP) install --quiet ruff && $(PYTHON) -m ruff check python tests/python

bench: setup ## the issue-2 benchmark: 1M requests per case on mqsim-paper, req/s, events/s, peak RSS
	ssdkit bench

bench-core: ## the same cases timed in Rust alone (no Python)
	cargo run --release -p ssdkit-core --example bench_core

schema: ## regenerate docs/config.schema.json from the configuration structs
	UPDATE_SCHEMA=1 cargo test --release -p ssdkit-core --lib schema_file_is_current
