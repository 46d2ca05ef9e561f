"""The unit's memory across a power cut: what the state file gives the machine at start,
and the saves that keep it.

``remembered`` makes the machine's memory from the state file (a latched fault still
latched; a file that does not read, or reads but fails its check, holds every fault class
this board can prove gone). ``Saver`` coalesces the saves of one burst of events into one
write 0.2 s after the first, which the ``StateStore``'s writer thread puts on disk: the
reactor never waits for the disk.
"""

from __future__ import annotations

from collections.abc import Callable

from hal.base import Board
from launcher.core import machine as m
from launcher.core.luck import DryStreak
from launcher.core.reactor import NEVER, Reactor
from launcher.core.store import FaultRecord, Saved
from launcher.firmware.state import StateStore

SAVE_DELAY = 0.2  # s: the saves of one burst of events become one write, after its cue


def provable(board: Board) -> list[str]:
    """The latched fault classes whose check this board has, so that each can be proven
    gone (``m.PROOFS``): what a unit whose state file does not read holds latched, since the
    file may have held any of them. The lid switch's is always there."""
    have = {"power_contact": board.power_contact is not None
            or board.rotator_contact is not None,
            "lid_sensor": True, "driver_sleep": board.sleep_sense is not None,
            "driver_input": board.input_pads is not None}
    return [code for code in m.PROOFS if have[code]]


def remembered(store: StateStore, board: Board) -> m.Memory:
    """The machine's memory as the state file left it."""
    saved = store.load()
    memory = m.Memory(side=saved.side, streak=DryStreak(saved.dry_streak),
                      inventory=saved.inventory, counters=dict(saved.counters))
    if saved.fault is not None:  # latched before the restart: it still is
        memory.fault, memory.latched = saved.fault.code, list(saved.fault.unproven)
    elif store.problem:  # a state file that does not read may have held one
        memory.latched = provable(board)
        memory.fault = memory.latched[-1]
    return memory


def saved(memory: m.Memory) -> Saved:
    """What the state file keeps of the machine's memory."""
    record = None
    if memory.latched or memory.fault in m.PROOFS:
        code = memory.fault if memory.fault in m.PROOFS else memory.latched[-1]
        record = FaultRecord(code, tuple(memory.latched))
    return Saved(memory.side, memory.dry_streak, memory.inventory, dict(memory.counters),
                 record)


class Saver:
    """The saves of the machine's memory to ``store``: one write a burst of events."""

    def __init__(self, store: StateStore, reactor: Reactor,
                 memory: Callable[[], m.Memory]) -> None:
        self.store = store
        self.reactor = reactor
        self.memory = memory
        self._timer = reactor.register_timer(self._due, NEVER, "save")

    def soon(self) -> None:
        """A save, coalesced with the others of this burst of events."""
        if self._timer.waketime == NEVER:
            self.reactor.update_timer(self._timer, self.reactor.monotonic() + SAVE_DELAY)

    def now(self) -> None:
        """A save handed over at once (the unit stopping), the coalesced one cancelled."""
        self.reactor.update_timer(self._timer, NEVER)
        self._due(self.reactor.monotonic())

    def cancel(self) -> None:
        self.reactor.update_timer(self._timer, NEVER)

    def _due(self, eventtime: float) -> float:
        self.store.save(saved(self.memory()))  # to the writer thread; never waits for disk
        return NEVER
