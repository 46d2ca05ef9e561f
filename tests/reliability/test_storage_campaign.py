"""The storage campaign (``bench/storage_faults.py``): the state file, the config and the code
corrupted so that they still read, and what the firmware does. Each part's fast tier holds,
and fails with its safeguard switched off (the campaign's own mutants); the full tier's kept
results render hardware/SAFETY.md's rows (tests/docs/test_generated.py)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from types import ModuleType

import pytest


@pytest.fixture
def storage(bench: Callable[[str], ModuleType]) -> ModuleType:
    return bench("storage_faults")


@pytest.fixture(autouse=True)
def quiet() -> Iterator[None]:
    logging.disable(logging.CRITICAL)  # each refused file is logged, as it must be
    yield
    logging.disable(logging.NOTSET)


def failures(kinds: list) -> list[str]:
    return [line for k in kinds for line in k.failures]


@pytest.mark.parametrize("part, mutant", [("state", 0), ("config", 1), ("code", 2)])
def test_each_part_holds_and_fails_with_its_safeguard_switched_off(storage, part, mutant):
    kinds = storage.kinds("fast", (part,))
    assert failures(kinds) == []
    assert all(sum(k.outcomes.values()) > 0 for k in kinds), [k.data() for k in kinds]
    what, owner, patches = storage.MUTANTS[mutant]
    assert owner == part
    with ExitStack() as stack:
        for p in patches():
            stack.enter_context(p)
        assert failures(storage.kinds("fast", (part,))), f"{what}: not caught"


def test_the_state_files_refusals_hold_every_latch_and_say_so(storage):
    """What the rows count: a flipped bit is refused (unreadable, or failing its checksum),
    never read as other content; a stale copy is read, and the weld found again."""
    flips, cuts, lost, old, stale = storage.kinds("fast", ("state",))
    assert set(flips.outcomes) == {f"refused (unreadable), {storage.HELD_CLASSES}",
                                   f"refused (failed its check), {storage.HELD_CLASSES}"}
    # A cut JSON does not parse; cut after its last brace, it is the same content.
    assert set(cuts.outcomes) <= {f"refused (unreadable), {storage.HELD_CLASSES}",
                                  "read the same content"}
    assert set(lost.outcomes) == {f"refused (failed its check), {storage.HELD_CLASSES}"}
    assert list(old.outcomes) == ["read the same content"]
    [said] = stale.outcomes
    assert said.startswith("read as the truth (whole, older); the weld found again")


def test_a_number_outside_the_schema_is_refused_naming_its_key_and_range(storage):
    assert storage.judge_range("motor.lease_ms", 1001, 20, 1000) == (
        "refused, naming the key and its range", True)
    assert storage.judge_range("luck.wild.hazard[0]", 1.01, 0.0, 1.0)[1]
    assert storage.judge_range("console.baud", 4_000_001, 1200, 4_000_000)[1]
