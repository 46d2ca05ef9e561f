"""The state writer thread survives every failure, reports the bugs, and loses no state.

Issue 21, finding 2: a write that raised anything but ``OSError`` ended the thread quietly;
``flush()`` returned False from then on and every later save, the one at stop included,
was lost (on disk after stop: counters ``{}``, inventory 30; in memory 6 presses, 6 shots,
12 cards, inventory 18).

Each test closes what it opened even when it fails (``stores``, ``try``/``finally``): a writer
thread left waiting outlives its test, and the suite fails that test for it (conftest.py).
"""

from __future__ import annotations

import errno
import json
import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from launcher.core import config
from launcher.core import machine as m
from launcher.core.store import Saved, parse
from launcher.firmware.disk import atomic_write
from launcher.firmware.state import StateStore
from launcher.sim.rig import SimRig


class FlakyWrite:
    """The real atomic write, but calls ``first..last`` (counted from 1) raise ``error``."""

    def __init__(self, error: BaseException, first: int = 2, last: int = 10**9) -> None:
        self.error, self.first, self.last = error, first, last
        self.calls = 0

    def __call__(self, path: Path, text: str) -> None:
        self.calls += 1
        if self.first <= self.calls <= self.last:
            raise self.error
        atomic_write(path, text)


class LockstepStore(StateStore):
    """The real store and its writer thread, but ``save`` returns once the writer has dealt
    with the value, its report of a bug posted to the reactor: the reactor's next step runs
    it, wherever the writer thread was scheduled. (With a store that returns at once, the
    test raced the writer: on a loaded machine the last save was still being written at the
    checks, ``unwritten`` was False, the test failed before ``close`` and left the writer
    thread waiting.)"""

    saves = 0

    def save(self, saved: Saved) -> None:
        self.saves += 1
        super().save(saved)
        if not self.flush(HANG):
            pytest.fail(f"the state writer took over {HANG:g} s over one save")


HANG = 60.0  # s: a hang guard only; a write here takes well under a millisecond


@pytest.fixture
def stores() -> Iterator[Callable[..., StateStore]]:
    """``stores(path, ...)``: a StateStore that is closed at the end of the test, passed or
    failed."""
    made: list[StateStore] = []

    def make(*args, **kwargs) -> StateStore:
        made.append(StateStore(*args, **kwargs))
        return made[-1]

    yield make
    for store in made:
        store.close()


def two_card_shots() -> config.Settings:
    s = config.load()
    table = config.side_luck("luck.mild", {"hazard": [1.0], "sizes": [2], "weights": [1]})
    return replace(s, luck=replace(s.luck, mild=table))


def on_disk(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def shoot_into_a_broken_writer(rig: SimRig, clears: int) -> None:
    """Load 30 cards (that save is written), shoot 2 (that save fails: the firmware makes the
    writer's bug an ``internal`` fault), then clear the fault ``clears`` times: each clear's
    save fails too, and the fault is back (it stays latched while the writer fails)."""
    rig.load([f"c{i}" for i in range(30)])
    rig.advance(0.3)  # the save after the load: written (the first write works)
    rig.press()
    for _ in range(clears + 1):
        assert rig.state == m.FAULT
        assert rig.faults[-1]["code"] == "internal"
        assert "state writer" in rig.faults[-1]["error"]
        if _ < clears:
            rig.app.clear_fault()
            rig.advance(0.3)


def test_a_bug_in_a_write_is_reported_and_the_state_at_stop_still_reaches_the_disk(
        tmp_path: Path, caplog) -> None:
    path = tmp_path / "state.json"
    reported: list[BaseException] = []
    write = FlakyWrite(RuntimeError("a bug in the writer"))  # every write after the first
    store = LockstepStore(path, write=write, on_failure=reported.append)
    rig = SimRig(two_card_shots(), seed=5, store=store)
    try:
        with caplog.at_level(logging.ERROR, logger="launcher"):
            shoot_into_a_broken_writer(rig, clears=5)
            memory = rig.app.saved()
            assert memory.counters["shots"] == 1 and memory.inventory == 28
            assert memory.counters["faults"] == 6
            assert on_disk(path)["inventory"] == 30  # the bug kept every later save off disk
            assert store.unwritten and store.writes == 1
            assert store.failed_writes == store.saves - 1 > 6  # each save after the first
            write.last = write.calls  # the bug goes away: the stop's save gets through
    finally:
        rig.close()
    assert parse(on_disk(path)) == memory
    counters = on_disk(path)["counters"]
    assert counters["presses"] == 1 and counters["cards_shot"] == 2 and counters["faults"] == 6
    assert reported and all(isinstance(e, RuntimeError) for e in reported)
    assert len(reported) == store.failed_writes  # each failure reported to the owner
    assert caplog.text.count("Traceback") == 1  # logged once for the outage
    assert "a bug in the writer" in caplog.text


def test_the_writer_thread_lives_on_after_a_bug_and_writes_the_next_save(tmp_path: Path,
                                                                        stores) -> None:
    path = tmp_path / "state.json"
    write = FlakyWrite(TypeError("unexpected"), first=1, last=1)
    store = stores(path, write=write, on_failure=lambda exc: None)
    store.save(Saved(inventory=1))
    assert store.flush(10) and store.unwritten and store.failed_writes == 1
    store.save(Saved(inventory=2))
    assert store.flush(10)  # it returned False for ever before: the thread had died
    assert not store.unwritten and store.writes == 1 and on_disk(path)["inventory"] == 2


def test_retry_writes_what_a_failed_write_kept(tmp_path: Path, stores) -> None:
    path = tmp_path / "state.json"
    write = FlakyWrite(OSError(errno.ENOSPC, "No space left on device"), first=1, last=1)
    store = stores(path, write=write)
    store.save(Saved(inventory=7))
    assert store.flush(10) and store.unwritten and not path.exists()
    store.retry()  # the disk has room again (the owner may call this from a reactor timer)
    assert store.flush(10) and not store.unwritten and on_disk(path)["inventory"] == 7
    assert (store.writes, store.failed_writes) == (1, 1)


def test_a_failure_callback_that_raises_does_not_end_the_writer(tmp_path: Path, stores) -> None:
    path = tmp_path / "state.json"

    def broken(exc: BaseException) -> None:
        raise ValueError("the owner's hook is broken too")

    store = stores(path, write=FlakyWrite(KeyError("x"), first=1, last=1), on_failure=broken)
    store.save(Saved(inventory=3))
    assert store.flush(10)
    store.save(Saved(inventory=4))
    assert store.flush(10) and on_disk(path)["inventory"] == 4


def test_the_failure_callback_runs_on_the_writer_thread(tmp_path: Path, stores) -> None:
    threads: list[str] = []
    store = stores(tmp_path / "s.json", write=FlakyWrite(RuntimeError("x"), first=1),
                       on_failure=lambda exc: threads.append(threading.current_thread().name))
    store.save(Saved())
    assert store.flush(10)
    assert threads[0] == "state-writer"  # so the owner must post it to the reactor
