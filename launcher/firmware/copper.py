"""The copper, read back: the actuators' wires checked against what reads them.

One ``Copper`` belongs to each ``Actuators`` (``actuators.copper``), which reads its
read-backs only with both channels idle (``Actuators.at_rest``) and drives the board safe
through its owner. Copper that has failed is found, not merely survived:

- **nSLEEP** (``pins.sleep_sense``) must follow what the driver was told within
  ``SLEEP_SETTLE``: at start (``StartTest``: woken, then let sleep, each read again until
  it follows; with the dead-man, its wave must hold nSLEEP up and its end let it fall, and
  edges with the one-shot's CLR held low must not raise it), while a drive runs
  (``woken_reads_low``, from the actuators' tick) and once it has ended (``driver_sleep``).
- **The power contacts**: the lid's (``pins.power_contact_sense``), read with the roller's
  channel idle once the lid has settled after each move (``CONTACT_SETTLE``) and at start,
  must say what the lid says, and so must the full-open contact in the rotator's lead
  (``pins.rotator_contact_sense``) (``power_contact``).
- **The driver's inputs**, read back at the Pi's own pads at rest and before the start
  test wakes the driver (``Board.input_pads``): one held high is ``driver_input``.

A disagreement is reported through the owner's ``on_copper``; a check that passed through
its ``on_checked`` (what proves a latched fault gone).
"""

from __future__ import annotations

import logging
from enum import Enum
from typing import TYPE_CHECKING

from hal.base import NEVER, Input, Scheduler

if TYPE_CHECKING:
    from launcher.firmware.actuators import Actuators

log = logging.getLogger(__name__)

DEADMAN_HALF_PERIOD = 0.01  # s: the dead-man square wave toggles this often (50 Hz)
SLEEP_SETTLE = 0.05  # s: nSLEEP follows the driver's pin (the one-shot: 13-45 ms) within this
SENSE_POLL = 0.005  # s: the start's test reads a read-back that has not followed yet this often
CONTACT_SETTLE = 0.25  # s: the lid at rest after an edge, its power contact read then
DEADMAN_TEST_EDGES = 6  # the start test's burst of dead-man edges (60 ms at 50 Hz)
DEADMAN_CLEARED_EDGES = 2  # and before it, edges with CLR low, which must not wake it


class Phase(Enum):
    """Where nSLEEP's start test is."""

    IDLE = "idle"  # not testing
    CLEARED = "cleared"  # dead-man edges with the one-shot's CLR low: nSLEEP must stay low
    WOKEN = "woken"  # the driver woken (with the dead-man, by its edges): nSLEEP must rise
    ASLEEP = "asleep"  # the driver let sleep (no more edges): nSLEEP must fall


class StartTest:
    """nSLEEP's test at start, one step each time the copper timer fires (``step``): the
    time of the next step, or NEVER once it has passed or failed (the board safe then)."""

    def __init__(self, copper: Copper) -> None:
        self.copper = copper
        self.phase = Phase.IDLE
        self.edges = 0  # the dead-man edges still to come in this phase
        self.since = 0.0  # when the test last moved nSLEEP (without the dead-man)
        self._steps = {Phase.CLEARED: self._cleared, Phase.WOKEN: self._woken,
                       Phase.ASLEEP: self._asleep}

    @property
    def running(self) -> bool:
        return self.phase is not Phase.IDLE

    def begin(self, deadman: bool) -> None:
        """With the dead-man, edges with CLR low first: the one-shot must hold Q low."""
        if deadman and DEADMAN_CLEARED_EDGES:
            self.phase, self.edges = Phase.CLEARED, DEADMAN_CLEARED_EDGES
        else:
            self.phase, self.edges = Phase.WOKEN, DEADMAN_TEST_EDGES if deadman else 0

    def abandon(self) -> None:
        """A drive began (or a stop): it checks nSLEEP itself."""
        self.phase = Phase.IDLE

    def step(self, now: float) -> float:
        return self._steps[self.phase](now)

    def _sense(self) -> Input:
        sense = self.copper.board.sleep_sense
        assert sense is not None  # only begun with the read-back wired
        return sense

    def _cleared(self, now: float) -> float:
        self.copper.owner.deadman_edge()
        self.edges -= 1
        if not self.edges:
            if self._sense().is_active:
                self._end()
                self.copper.report("driver_sleep", "nSLEEP rose on dead-man edges with the "
                                   "one-shot's CLR held low (CLR's wire off, or shorted high): "
                                   "motor_sleep cannot hold the driver asleep")
                return NEVER
            self.phase, self.edges = Phase.WOKEN, DEADMAN_TEST_EDGES
        return now + DEADMAN_HALF_PERIOD

    def _woken(self, now: float) -> float:
        b = self.copper.board
        if not b.motor_enable.is_active:
            b.motor_enable.on()  # both inputs low: the roller coasts, awake or not
            self.since = now
        if b.deadman is not None:
            self.copper.owner.deadman_edge()
            self.edges -= 1
            if self.edges:
                return now + DEADMAN_HALF_PERIOD
        if not self._sense().is_active:
            if b.deadman is None and now - self.since < SLEEP_SETTLE:
                return now + SENSE_POLL  # read again: it follows within that
            self._end()
            self.copper.report("driver_sleep", "nSLEEP did not rise when the driver was woken "
                               "at start (its wire, the one-shot, its CLR, or the read-back)")
            return NEVER
        self.phase = Phase.ASLEEP
        if b.deadman is not None:  # no more edges: the one-shot must let nSLEEP fall
            self.copper.owner.deadman_low()
            return now + SLEEP_SETTLE
        b.motor_enable.off()
        self.since = now
        return now

    def _asleep(self, now: float) -> float:
        deadman = self.copper.board.deadman is not None
        asleep = not self._sense().is_active
        if not asleep and not deadman and now - self.since < SLEEP_SETTLE:
            return now + SENSE_POLL  # read again: it follows within that
        self._end()
        if not asleep:
            self.copper.report("driver_sleep", "nSLEEP stayed high " + (
                "with no dead-man edges (the one-shot's Q stuck high, its Rext open, or its "
                "B input on a toggling line)" if deadman else
                "with the driver told to sleep (a short to 3.3 V or to the pack)"))
        else:
            self.copper.checked("start_test", ("driver_sleep",))
            self.copper.check_soon()  # and the power contact, the test over
        return NEVER

    def _end(self) -> None:
        """Over (passed or failed): the board safe, as the test found it."""
        self.phase = Phase.IDLE
        self.copper.owner.safe()


class Copper:
    """The read-backs of one ``Actuators``' board, on the reactor thread."""

    def __init__(self, owner: Actuators, reactor: Scheduler) -> None:
        self.owner = owner
        self.board = owner.board
        self.reactor = reactor
        self.timer = reactor.register_timer(self._check, NEVER, "actuators.copper")
        self.test = StartTest(self)

    def check_soon(self, delay: float = 0.0) -> None:
        """Read the read-backs ``delay`` from now (once nothing is driven)."""
        if self.test.running:
            return  # the start test is reading them
        now = self.reactor.monotonic()
        at = now + delay
        waketime = self.timer.waketime
        # Unarmed, firing now (its own call), or armed sooner: the later time wins.
        if waketime == NEVER or waketime <= now or at > waketime:
            self.reactor.update_timer(self.timer, at)

    def start(self) -> None:
        """The driver's inputs' pads, then the start's test of nSLEEP (only with
        ``pins.sleep_sense`` wired), then the read-backs at rest."""
        b = self.board
        if not self.pads_low():  # before the test wakes the driver: it would run the roller
            return
        if b.sleep_sense is None:
            self.check_soon()
            return
        self.test.begin(deadman=b.deadman is not None)
        self.reactor.update_timer(self.timer, self.reactor.monotonic())

    def woken_reads_low(self, now: float, woke_at: float) -> bool:
        """nSLEEP's read-back while the driver is woken: low once it has had
        ``SLEEP_SETTLE`` to follow is reported (the board safe first)."""
        b = self.board
        sense = b.sleep_sense
        if (sense is None or not b.motor_enable.is_active or now - woke_at < SLEEP_SETTLE
                or sense.is_active):
            return False
        self.owner.safe()
        self.report("driver_sleep", "nSLEEP reads low with the driver woken (its wire, the "
                    "one-shot, its CLR, or the read-back)")
        return True

    def _check(self, eventtime: float) -> float:
        if not self.owner.at_rest:
            self.test.abandon()  # a drive began (or a stop): it checks nSLEEP itself
            return NEVER
        if self.test.running:
            return self.test.step(eventtime)
        b, owner = self.board, self.owner
        pads = self.pads_low()
        sense = b.sleep_sense
        if sense is not None and not b.motor_enable.is_active and sense.is_active:
            self.report("driver_sleep", "nSLEEP reads high with the driver told to sleep (a "
                        "short to 3.3 V, the one-shot's Q stuck)")
        lid = "closed" if owner.lid_closed else "full" if owner.lid_full else "ajar"
        agree = [self.contact_check(b.power_contact, owner.lid_closed, "the lid's power "
                                    "contact", "lid open", "lid shut", "the roller cannot run"),
                 self.contact_check(b.rotator_contact, owner.lid_full, "the rotator's "
                                    "full-open contact", "lid not fully open", "lid fully open",
                                    "the cartridge cannot turn")]
        wired = [ok for ok in agree if ok is not None]
        self.checked(lid, (*(("power_contact",) if wired and all(wired) else ()),
                           *(("driver_input",) if pads else ())))
        return NEVER

    def pads_low(self) -> bool:
        """The driver's inputs read back at the Pi's pads, every one driven low now (both
        channels idle): one that reads high is held there by a short (to 3.3 V, to the
        pack), which would drive its channel whenever the driver wakes, the lid's contact
        then the one barrier left. Reported (``driver_input``); True if none reads high (or
        the pins cannot tell)."""
        read = self.board.input_pads
        high = [key for key, level in read().items() if level] if read is not None else []
        if high:
            self.report("driver_input", f"{', '.join(high)} read{'s' if len(high) == 1 else ''}"
                        " high at the Pi's pad with every driver input driven low (shorted to "
                        "3.3 V or to the pack): its channel would run whenever the driver "
                        "wakes")
        return not high

    def contact_check(self, contact: Input | None, should_close: bool, name: str,
                      open_lid: str, closing_lid: str, stuck: str) -> bool | None:
        """A power contact's read-back against the lid position that closes it: whether it
        agrees (None: not read back)."""
        if contact is None:
            return None
        if contact.is_active and not should_close:
            self.report("power_contact", f"{name} reads closed with the {open_lid} (welded, "
                        "its leads pinched, its plunger stuck)")
            return False
        if should_close and not contact.is_active:
            self.report("power_contact", f"{name} reads open with the {closing_lid} (broken, "
                        f"misadjusted: {stuck})")
            return False
        return True

    def report(self, code: str, detail: str) -> None:
        """A read-back that says the copper is not as driven: logged, then ``on_copper``."""
        log.error("%s: %s", code, detail)
        hook = self.owner.on_copper
        if hook is not None:
            hook(code, detail)

    def checked(self, where: str, codes: tuple[str, ...]) -> None:
        hook = self.owner.on_checked
        if hook is not None:
            hook(where, codes)
