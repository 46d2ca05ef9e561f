# Two commands do all the set-up on a fresh machine (see README.md):
#   make play   - the firmware on the simulated launcher
#   make test    - lint and the whole test suite (the slow tier aside: make test-slow)
VENV ?= .venv
STAMP := $(VENV)/.installed-stamp

.PHONY: setup play test test-slow lint benchmarks sounds clean

$(STAMP): pyproject.toml .ci/setup
	bash .ci/setup $(VENV)
	touch $@

setup: $(STAMP)

play: $(STAMP)
	$(VENV)/bin/launcher play

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports

test: lint
	$(VENV)/bin/pytest

test-slow: $(STAMP)
	$(VENV)/bin/pytest -m slow

benchmarks: $(STAMP)
	$(VENV)/bin/python bench/bench_press_latency.py
	$(VENV)/bin/python bench/bench_games.py

sounds: $(STAMP)
	$(VENV)/bin/launcher sounds render

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
