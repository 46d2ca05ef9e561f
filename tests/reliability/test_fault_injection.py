"""A few tries of tests/reliability/fault_injection.py in the default tier (the campaign's
size, 900 tries, is in docs/RELIABILITY.md with its command)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from fault_injection import one_try


def test_a_bug_in_any_kind_of_callback_leaves_the_board_safe_and_a_unit_that_shoots_again():
    results = [one_try(seed) for seed in range(30)]
    fired = [r for r in results if r["fired"]]
    assert len(fired) >= 10, results
    for r in fired:
        assert r["code"] == "internal" and r["safe"] and r["shoots_again"], r
