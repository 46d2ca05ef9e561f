# Two commands do all the set-up on a fresh machine (see README.md):
#   make play   - the firmware on the simulated launcher
#   make test    - lint and the whole test suite (the slow tier aside: make test-slow)
#   make test-loaded - make test with two CPU hogs beside it (a busy 2-core machine)
#   make test-kernel - the real firmware on lgpio and the kernel's gpio-sim, in a VM
# Another Python: make test PYTHON=python3.13 (its own venv, .venv-3.13, unless VENV is given).
PYTHON ?= python3
ifeq ($(origin VENV), undefined)
  ifeq ($(PYTHON),python3)
    VENV := .venv
  else
    VENV := .venv-$(patsubst python%,%,$(notdir $(PYTHON)))
  endif
endif
STAMP := $(VENV)/.installed-stamp

.PHONY: setup play test test-loaded test-slow test-kernel lint benchmarks sounds figures clean clean-state

$(STAMP): pyproject.toml .ci/setup .ci/find-python
	PYTHON=$(PYTHON) bash .ci/setup $(VENV)
	touch $@

setup: $(STAMP)

play: $(STAMP)
	$(VENV)/bin/launcher play

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports

test: lint
	$(VENV)/bin/pytest

# make test with two CPU-bound processes beside it (.ci/loaded; HOGS=N for another number):
# no test may depend on being scheduled promptly. Its exit status is make test's.
test-loaded: $(STAMP)
	bash .ci/loaded $(MAKE) test PYTHON=$(PYTHON) VENV=$(VENV)

test-slow: $(STAMP)
	$(VENV)/bin/pytest -m slow -o timeout=3600

# The kernel tier: the real firmware on lgpio and gpio-sim in a QEMU VM (docs/kernel-tier.md).
test-kernel: $(STAMP)
	bash .ci/kernel/run $(VENV)

# The peers bench/games.py times ours against (RLCard, open-spiel): the `bench` extra.
BENCH_STAMP := $(VENV)/.bench-stamp
$(BENCH_STAMP): $(STAMP)
	$(VENV)/bin/python -m pip install -q -e '.[bench]'
	touch $@

# Every benchmark, repeated; writes docs/PERFORMANCE.md (BENCH_ARGS=--quick: under a minute).
benchmarks: $(BENCH_STAMP)
	$(VENV)/bin/python -m bench --out docs/PERFORMANCE.md $(BENCH_ARGS)

sounds: $(STAMP)
	$(VENV)/bin/launcher sounds render

# Every figure of the docs: the pictures, then each generated block (docs/blocks.py).
figures: $(STAMP)
	$(VENV)/bin/python docs/make_figures.py
	$(VENV)/bin/python docs/blocks.py

# What the dev set-up, the tests and the benchmarks leave in this folder. Your state folder
# (play's state, the console's history) is yours, kept: `make clean-state` removes it.
clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis .import_linter_cache bench-report \
		build dist *.egg-info
	find . -name __pycache__ -type d -not -path './.venv*' -prune -exec rm -rf {} +
	@echo "make clean: kept $(STATE_FOLDER) (make clean-state removes it)"

# The files launcher play, run --simulated and console keep in your state folder.
STATE_FOLDER = $${XDG_STATE_HOME:-$$HOME/.local/state}/launcher
clean-state:
	@d="$(STATE_FOLDER)"; if [ -d "$$d" ]; then \
		( cd "$$d" && rm -f play-state.json run-state.json play-state.json.lock \
			run-state.json.lock console-history last-good-pins.json \
			.play-state.json.* .run-state.json.* ) && rmdir "$$d" 2>/dev/null; \
		echo "make clean-state: removed the launcher's files from $$d"; \
	else echo "make clean-state: no $$d, nothing to remove"; fi
