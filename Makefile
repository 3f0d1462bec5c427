# Every target creates or reuses the project-local virtualenv and installs the
# project from its own files, so nothing installed by hand is needed.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.installed-bench

.PHONY: install test test-slow lint typecheck pytest demo bench bench-quick clean mcp-example

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[all,dev]'
	touch $(STAMP)

install: $(STAMP)

# The mcp SDK's example OAuth server, which the wheel does not ship: fetched
# from the sdist of the installed version into tests/mcp_examples (ignored),
# for tests/test_mcp_example_auth.py; CI runs it (.ci/run).
mcp-example: $(STAMP)
	.ci/mcp_example $(BIN)/python

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy src

# The default run: every test but the long variants, in parallel on every
# core. `make test-slow` runs the long variants (CI runs both).
pytest: $(STAMP)
	$(BIN)/pytest -q -n auto -m "not slow"

test-slow: $(STAMP)
	$(BIN)/pytest -q -m slow

test: lint typecheck pytest

# The demo installs only what it runs (the cli extra) in a virtualenv of its
# own; DEMO_VENV names another (the suite points it at the one it runs in).
DEMO_VENV ?= .venv-demo
DEMO_BIN := $(DEMO_VENV)/bin
DEMO_STAMP := $(DEMO_VENV)/.installed-demo

$(DEMO_STAMP): pyproject.toml
	test -x $(DEMO_BIN)/python || $(PY) -m venv $(DEMO_VENV)
	$(DEMO_BIN)/python -m pip install --quiet -e '.[cli]'
	touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(DEMO_BIN)/elelem demo
	@echo
	@echo "Next steps (elelem is $(abspath $(DEMO_BIN))/elelem; to type just elelem:"
	@echo "  export PATH=\"$(abspath $(DEMO_BIN)):\$$PATH\")"
	@echo "  elelem -m test \"Hello\"          every command, no key: ask, chat, --functions, serve"
	@echo "  ANTHROPIC_API_KEY=... elelem \"How tall is the Eiffel Tower?\""
	@echo "  elelem serve                   your conversations in the browser (add the web extra:"
	@echo "                                 $(DEMO_BIN)/pip install -e '.[web]')"
	@echo "  README.md: Install; docs/cli.md: the command, how-to by how-to"

# The peers (official SDKs, pydantic-ai, LiteLLM) come from the optional bench
# extra, installed once; the test suite never needs them.
$(BENCH_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BIN)/python -m benchmarks.run
	$(BIN)/python -m benchmarks.providers
	$(BIN)/python -m benchmarks.sync_iteration
	$(BIN)/python -m benchmarks.search
	$(BIN)/python -m benchmarks.gateway

bench-quick: $(BENCH_STAMP)
	$(BIN)/python -m benchmarks.run --quick

clean:
	rm -rf $(VENV) $(DEMO_VENV) build *.egg-info src/*.egg-info .mypy_cache .pytest_cache .ruff_cache
