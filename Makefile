# Every target creates or reuses the project-local virtualenv and installs the
# project from its own files, so nothing installed by hand is needed.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install test lint typecheck pytest demo bench bench-quick clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,postgres]'
	touch $(STAMP)

install: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy src

pytest: $(STAMP)
	$(BIN)/pytest -q

test: lint typecheck pytest

demo: $(STAMP)
	$(BIN)/elelem demo

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python -m benchmarks.run

bench-quick: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python -m benchmarks.run --quick

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .mypy_cache .pytest_cache .ruff_cache
