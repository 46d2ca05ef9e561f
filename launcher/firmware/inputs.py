"""The unit's inputs as the machine hears them: each pin debounced on the reactor thread,
and the lid's switches checked for plausibility.

``Inputs`` subscribes to every input pin when started. The pin library's thread only posts
each edge to the reactor; there a leading-edge debounce turns it into one machine event
(the lid leaving closed is never held back), and the lid's switches (the sensing pair, NO and
NC, and fully open) must agree with one lid within ``timing.lid_pair``, else the
``lid_sensor`` fault. It drives nothing but the lid stop it asks of the actuators; what an
event means is the machine's, told through ``on_event``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from hal.base import Board, Input, Unsubscribe
from launcher.core import machine as m
from launcher.core.config import Timing
from launcher.core.reactor import NEVER, Reactor, Timer

OnEvent = Callable[[m.Ev, float], None]


class LidStops(Protocol):
    """What the inputs ask of the actuators: the lid's stop, and a copper check once the lid
    has come to rest (``launcher.firmware.actuators.Actuators``)."""

    def lid_left(self) -> None: ...
    def copper_check_soon(self, delay: float = ...) -> None: ...


@dataclass(slots=True)
class Debounced:
    """One input: its last reported level and the end of its lock-out window."""

    name: str
    device: Input
    rising: m.Ev  # machine event when it becomes active
    falling: m.Ev | None  # ... and inactive (None: not reported)
    window: float
    level: bool
    locked_until: float = float("-inf")
    recheck: Timer | None = None


class Inputs:
    """Every input pin of ``board``, debounced, and the lid's plausibility check.

    ``on_event(event, now)``: an input's machine event (a press included, and the button's
    release, which only the shell's pairing reads) on the reactor thread;
    ``on_lid_sensor(data)``: the lid's switches implausible for ``timing.lid_pair`` (the
    roller already stopped), with what each switch read.
    """

    def __init__(self, board: Board, reactor: Reactor, timing: Timing, actuators: LidStops,
                 contact_settle: float, on_event: OnEvent,
                 on_lid_sensor: Callable[[dict[str, str]], None]) -> None:
        self.board = board
        self.reactor = reactor
        self.timing = timing  # the lid pair's limit is read at each check (a live change)
        self.actuators = actuators
        self.contact_settle = contact_settle
        self.on_event = on_event
        self.on_lid_sensor = on_lid_sensor
        self.debounced = self._wire()
        self._pair_timer = reactor.register_timer(self._pair_due, NEVER, "lid_pair")
        self._unsubscribe: list[Unsubscribe] = []
        self.live = False

    def _wire(self) -> list[Debounced]:
        b, w = self.board, self.timing.debounce
        wired = [
            # The release too: the pairing tells a hold from a press by it (app.py).
            Debounced("button", b.button, m.PRESS, m.RELEASE, w, False),
            Debounced("lid_closed", b.lid_closed, m.LID_CLOSED, m.LID_LEFT_CLOSED, w, True),
            Debounced("lid_open", b.lid_open, m.LID_FULL, m.LID_LEFT_FULL, w, False),
            # Optical and hall sensors do not bounce: no lock-out window.
            Debounced("home", b.home, m.HOME, m.HOME_LEFT, 0.0, True),
            Debounced("yellow_back", b.yellow_back, m.YELLOW_BACK, m.YELLOW_FRONT, 0.0, True),
        ]
        if b.exit_beam is not None:
            wired.append(Debounced("exit_beam", b.exit_beam, m.BEAM_BLOCKED, m.BEAM_CLEAR,
                                   0.0, False))
        return wired

    # -- start and stop --

    def start(self) -> None:
        """Subscribe to every input pin, each debounced copy at its pin's level now."""
        for d in self.debounced:
            d.level = d.device.is_active
            self._unsubscribe.append(d.device.subscribe(self._edge_from_any_thread(d)))
        if self.board.lid_closed_nc is not None:
            self._unsubscribe.append(self.board.lid_closed_nc.subscribe(
                self._lid_nc_from_any_thread))
        self.live = True

    def cancel_timers(self) -> None:
        """Nothing queued of the inputs may act once the unit stops: every re-read and the
        lid pair's timer off, and no posted edge acts any more."""
        self.live = False
        for t in (self._pair_timer, *(d.recheck for d in self.debounced
                                      if d.recheck is not None)):
            self.reactor.update_timer(t, NEVER)

    def detach(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []

    # -- reading --

    def read(self) -> m.Inputs:
        """Every input as its pin reads now; the debounced copies follow."""
        b = self.board
        for d in self.debounced:
            d.level = d.device.is_active
        return m.Inputs(lid_closed=b.lid_closed.is_active, lid_full=b.lid_open.is_active,
                        beam_blocked=bool(b.exit_beam and b.exit_beam.is_active),
                        home=b.home.is_active, yellow_back=b.yellow_back.is_active)

    def _edge_from_any_thread(self, d: Debounced) -> Callable[[bool], None]:
        """The callback for one input, run on whatever thread the pin library uses: it
        only posts. (The interlocks have acted already, on that thread: the actuators
        subscribed to the lid pins first.)"""
        post = self.reactor.post

        def changed(level: bool) -> None:
            post(lambda: self.edge(d, level))

        return changed

    def _lid_nc_from_any_thread(self, level: bool) -> None:
        self.reactor.post(self.check_pair)

    def edge(self, d: Debounced, level: bool) -> None:
        """One edge of ``d``, on the reactor thread. Leading-edge debounce: act on the first
        edge, then re-read once the window ends.

        The lid leaving closed is never held back: the roller stopped on its first edge
        (``_edge_from_any_thread``) and it reaches the machine at once, whatever the
        lock-out window. Debounce delays only re-arming and the closing edge.
        """
        if not self.live:
            return
        now = self.reactor.monotonic()
        if d.name in ("lid_closed", "lid_open"):
            self.check_pair()
            # The lid moved: once it has come to rest, its power contact must say the same.
            self.actuators.copper_check_soon(self.contact_settle)
        if d.falling is m.LID_LEFT_CLOSED and not level:
            if level != d.level:
                self._report(d, level, now)
            return
        if now < d.locked_until or level == d.level:
            return
        self._report(d, level, now)

    def _report(self, d: Debounced, level: bool, now: float) -> None:
        d.level = level
        if d.window > 0:
            d.locked_until = now + d.window
        event = d.rising if level else d.falling
        if event is not None:
            self.on_event(event, now)
        if d.window > 0:  # the re-read, armed once the edge is handled (a press's roller first)
            if d.recheck is None:
                d.recheck = self.reactor.register_timer(
                    lambda t, d=d: self._recheck(d, t), NEVER, f"debounce.{d.name}")
            self.reactor.update_timer(d.recheck, d.locked_until)

    def _recheck(self, d: Debounced, eventtime: float) -> float:
        level = d.device.is_active
        if level != d.level:
            self._report(d, level, eventtime)
            return d.locked_until
        return NEVER

    # -- the lid's switches: the sensing pair (pins.lid_closed_nc), closed and fully open --

    def implausible(self) -> bool:
        """The lid switches say what no lid can be: the NO and NC contacts agree, or closed
        and fully open read at once."""
        b = self.board
        closed = b.lid_closed.is_active
        return ((b.lid_closed_nc is not None and closed == b.lid_closed_nc.is_active)
                or (closed and b.lid_open.is_active))

    def check_pair(self) -> None:
        """The lid switches must be plausible: not for longer than ``timing.lid_pair`` (an
        SPDT's change-over, NO broken before NC makes) is a fault."""
        if not self.live:
            return
        if not self.implausible():
            self.reactor.update_timer(self._pair_timer, NEVER)
        elif self._pair_timer.waketime == NEVER:
            self.reactor.update_timer(self._pair_timer, self.reactor.monotonic()
                                      + self.timing.lid_pair)

    def _pair_due(self, eventtime: float) -> float:
        if self.implausible():
            b = self.board
            self.actuators.lid_left()
            data = {"no": "closed" if b.lid_closed.is_active else "open"}
            if b.lid_closed_nc is not None:
                data["nc"] = "closed" if b.lid_closed_nc.is_active else "open"
            data["full"] = "closed" if b.lid_open.is_active else "open"
            self.on_lid_sensor(data)
        return NEVER

