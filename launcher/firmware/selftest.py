"""``launcher selftest``: walk through every part of the launcher and say PASS or FAIL for each.

On the Pi a person does each step when asked (press the button, open the lid...) and the
test watches the pins. With ``--auto`` the same walk-through runs against the simulated
launcher, a scripted operator doing each step through the simulator's verbs: that is how
CI proves the self-test itself, fault by fault.

The test runs without the firmware's state machine (it needs the board to itself), but
every motor and rotator command goes through the same actuator owner as the firmware's
(``launcher.firmware.actuators``), with the same layers: a run only while the lid pin reads
closed, stopped on the lid's first edge on the pin library's thread (the owner's own
subscription, whatever the test's loop is doing), a lease the guard thread enforces, for at
most ``MOTOR_PULSE`` seconds, and every actuator off when the test ends, however it ends.
The scripted operator and the simulated unit for ``--auto`` live in
``launcher.sim.selftest``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol, TextIO

from hal.base import Board, Input, Unsubscribe
from launcher.core import cues
from launcher.core.config import Settings
from launcher.core.machine import MachineSettings
from launcher.core.reactor import NEVER, Reactor, RealReactor
from launcher.firmware.actuators import Actuators
from launcher.firmware.sound import AMP_TAIL, CuePlayer

MOTOR_PULSE = 0.3  # seconds; the hard cap of the one motor run the self-test makes
STEP_TIMEOUT = 30.0  # seconds a person gets for each step
POLL = 0.01  # seconds between checks while waiting for a step
REACTION = 0.4  # seconds the scripted operator takes to do what it is asked

PASS, FAIL, SKIP, ABSENT = "PASS", "FAIL", "SKIP", "N/A"

BUTTON = "button"
LID_CLOSED = "lid closed switch"
LID_OPEN = "lid open switch"
ROTATOR = "rotator"
HOME = "home sensor"
SIDE = "side sensor"
BEAM = "exit beam"
MOTOR = "motor"
LED = "status LED"
SOUND_MILD = "sound (Mild)"
SOUND_WILD = "sound (Wild)"
PARTS = (BUTTON, LID_CLOSED, LID_OPEN, ROTATOR, HOME, SIDE, BEAM, MOTOR, LED, SOUND_MILD,
         SOUND_WILD)

# Step ids: what the operator is asked to do (the scripted operator acts on these).
DO_PRESS = "press"
DO_OPEN_AJAR = "open-ajar"
DO_CLOSE = "close"
DO_OPEN_FULL = "open-full"
DO_CLOSE_AGAIN = "close-again"
DO_BLOCK_BEAM = "block-beam"
DO_LOAD = "load"
DO_MOTOR = "motor"
DO_LED = "led"
DO_SOUND = "sound"


@dataclass
class Result:
    """The verdict on one part; the first failure is the one reported."""

    part: str
    status: str = SKIP
    detail: str = "not reached"

    def set(self, status: str, detail: str = "") -> None:
        if self.status == FAIL:
            return
        self.status, self.detail = status, detail


@dataclass
class Report:
    """Every part's result, in walk-through order."""

    results: dict[str, Result] = field(
        default_factory=lambda: {part: Result(part) for part in PARTS})

    def __getitem__(self, part: str) -> Result:
        return self.results[part]

    @property
    def ok(self) -> bool:
        return all(r.status in (PASS, ABSENT) for r in self.results.values())

    def failed(self) -> list[str]:
        return [p for p, r in self.results.items() if r.status not in (PASS, ABSENT)]

    def lines(self) -> list[str]:
        width = max(len(p) for p in PARTS)
        return [f"  {r.status:<4}  {r.part:<{width}}  {r.detail}".rstrip()
                for r in self.results.values()]


class Operator(Protocol):
    """The person at the launcher (or the script standing in for one)."""

    def show(self, text: str) -> None: ...
    def instruct(self, step: str, text: str) -> None: ...
    def confirm(self, step: str, text: str) -> None: ...
    def ask(self, step: str, question: str) -> bool: ...


class Runner(Protocol):
    """Lets reactor time pass until something holds."""

    reactor: Reactor

    def run_until(self, done: Callable[[], bool], timeout: float) -> bool: ...
    def wait(self, seconds: float) -> None: ...


class RealRunner:
    """For the Pi: runs the ``RealReactor`` until the condition holds or time is up."""

    def __init__(self, reactor: RealReactor) -> None:
        self.reactor = reactor

    def run_until(self, done: Callable[[], bool], timeout: float) -> bool:
        reactor = self.reactor
        deadline = reactor.monotonic() + timeout

        def check(eventtime: float) -> float:
            if done() or eventtime >= deadline:
                reactor.stop()
                return NEVER
            return min(eventtime + POLL, deadline)

        timer = reactor.register_timer(check, reactor.monotonic(), "selftest.wait")
        try:
            reactor.run()
        finally:
            reactor.unregister_timer(timer)
        return done()

    def wait(self, seconds: float) -> None:
        self.run_until(lambda: False, seconds)


class Watch:
    """Records every edge of the launcher's inputs, on reactor time, while a test runs."""

    def __init__(self, board: Board, reactor: Reactor) -> None:
        self.reactor = reactor
        self.inputs: dict[str, Input] = {
            "button": board.button, "lid_closed": board.lid_closed,
            "lid_open": board.lid_open, "home": board.home, "yellow_back": board.yellow_back,
        }
        if board.exit_beam is not None:
            self.inputs["exit_beam"] = board.exit_beam
        if board.lid_closed_nc is not None:
            self.inputs["lid_closed_nc"] = board.lid_closed_nc
        self.edges: list[tuple[float, str, bool]] = []
        self.on_edge: Callable[[str, bool], None] | None = None
        self._unsubscribe: list[Unsubscribe] = [
            device.subscribe(self._callback(name)) for name, device in self.inputs.items()]

    def _callback(self, name: str) -> Callable[[bool], None]:
        def changed(level: bool) -> None:
            # gpiozero calls from its own threads on a Pi: hand the edge to the reactor.
            self.reactor.post(lambda: self._edge(name, level))

        return changed

    def _edge(self, name: str, level: bool) -> None:
        self.edges.append((self.reactor.monotonic(), name, level))
        if self.on_edge is not None:
            self.on_edge(name, level)

    def level(self, name: str) -> bool:
        return self.inputs[name].is_active

    def mark(self) -> int:
        return len(self.edges)

    def seen(self, name: str, level: bool, since: int) -> bool:
        return any(n == name and lv == level for _, n, lv in self.edges[since:])

    def count(self, name: str, level: bool, since: int) -> int:
        return sum(1 for _, n, lv in self.edges[since:] if n == name and lv == level)

    def close(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []


class SelfTest:
    """The walk-through; ``run()`` returns the report and leaves every actuator off."""

    def __init__(self, board: Board, settings: MachineSettings, runner: Runner,
                 operator: Operator,
                 player: CuePlayer, step_timeout: float = STEP_TIMEOUT,
                 actuators: Actuators | None = None) -> None:
        self.board = board
        self.act = actuators or Actuators(board, settings.motor, runner.reactor,
                                          settings.rotator)
        self.settings = settings
        self.runner = runner
        self.reactor = runner.reactor
        self.op = operator
        self.player = player
        self.timeout = step_timeout
        self.report = Report()
        self.watch = Watch(board, self.reactor)
        # A stop that could not write a pin, a lapse, a bug on the pin or guard thread: the
        # actuators made the board safe; the person is told, and the motor does not pass.
        self.faults: list[str] = []
        self.act.on_fault = self._fault
        # A bug in any of the test's timers (the actuators' tick among them): safe first.
        self.reactor.on_error = self._reactor_error

    def _fault(self, detail: str) -> None:
        self.faults.append(detail)  # any thread: only a list append here

    def _reactor_error(self, exc: BaseException, where: str) -> None:
        failed = self.act.safe()
        self.faults.append(f"{where}: {type(exc).__name__}: {exc}" + "".join(
            f"; could not drive {part} safe: {error}" for part, error in failed))

    def run(self) -> Report:
        steps = (self.button, self.lid, self.rotation, self.close_again, self.beam,
                 self.motor, self.led, self.sounds)
        try:
            for step in steps:
                step()
        finally:
            self.watch.close()
            for part, exc in self.act.safe():
                self.faults.append(f"could not drive {part} safe: {exc}")
            self.board.led.off()
            for detail in self.faults:
                self.op.show(f"       the actuators reported: {detail}")
            if self.faults:
                self._verdict(MOTOR, FAIL, f"the actuators reported a fault: {self.faults[0]}")
        return self.report

    # -- helpers --

    def _wait(self, done: Callable[[], bool], timeout: float | None = None) -> bool:
        return self.runner.run_until(done, self.timeout if timeout is None else timeout)

    def _verdict(self, part: str, status: str, detail: str = "") -> None:
        self.report[part].set(status, detail)
        self.op.show(f"       {self.report[part].status} {part}"
                     + (f": {self.report[part].detail}" if self.report[part].detail else ""))

    # -- the steps --

    def button(self) -> None:
        w = self.watch
        if w.level("button"):
            self._verdict(BUTTON, FAIL, "reads pressed before anyone pressed it "
                                        "(stuck switch, or wired to 3V3 instead of GND)")
            return
        self.op.instruct(DO_PRESS, "Press the button once and let it go.")
        since = w.mark()
        if not self._wait(lambda: w.seen("button", True, since)):
            self._verdict(BUTTON, FAIL, f"no press seen in {self.timeout:g} s "
                                        "(switch, wire to GPIO, or ground)")
            return
        if not self._wait(lambda: not w.level("button")):
            self._verdict(BUTTON, FAIL, "pressed, but never let go (stuck switch)")
            return
        self._verdict(BUTTON, PASS)

    def lid(self) -> None:
        w = self.watch
        pair_faults: list[str] = []

        def pair(where: str) -> None:
            """With the NC contact wired, it must read the opposite of the NO contact."""
            if "lid_closed_nc" in w.inputs and w.level("lid_closed") == w.level("lid_closed_nc"):
                pair_faults.append(where)

        self.op.instruct(DO_OPEN_AJAR, "Open the lid a little.")
        opened = self._wait(lambda: not w.level("lid_closed"))
        pair("open")
        if not opened:
            self._verdict(LID_CLOSED, FAIL, "still reads closed with the lid open "
                                            "(stuck switch, or wired to 3V3)")
        self.op.instruct(DO_CLOSE, "Close the lid fully.")
        if not self._wait(lambda: w.level("lid_closed")):
            self._verdict(LID_CLOSED, FAIL, "never read closed (switch, wire, or the lid "
                                            "does not reach it)")
        elif opened:
            self._verdict(LID_CLOSED, PASS)
        pair("closed")
        if w.level("lid_open"):
            self._verdict(LID_OPEN, FAIL, "reads fully open with the lid closed (stuck)")
        self.op.instruct(DO_OPEN_FULL, "Open the lid all the way, and keep it open: "
                                       "the cartridge will turn.")
        # Fully open is both switches agreeing: one already stuck must not pass for it.
        if self._wait(lambda: w.level("lid_open") and not w.level("lid_closed")):
            self._verdict(LID_OPEN, PASS)
            self._verdict(LID_CLOSED, PASS)
        elif not w.level("lid_open"):
            self._verdict(LID_OPEN, FAIL, "never read fully open (switch, wire, or the lid "
                                          "does not reach it)")
        else:
            self._verdict(LID_OPEN, PASS)
            self._verdict(LID_CLOSED, FAIL, "reads closed with the lid fully open (stuck)")
        pair("fully open")
        if pair_faults:
            self._verdict(LID_CLOSED, FAIL, "pins.lid_closed_nc reads the same as lid_closed "
                          f"with the lid {' and '.join(dict.fromkeys(pair_faults))}: its NC "
                          "wire is off or shorted (the firmware faults lid_sensor)")

    def rotation(self) -> None:
        w = self.watch
        if not w.level("lid_open") or w.level("lid_closed"):
            reason = ("not tried: the lid does not read fully open" if not w.level("lid_open")
                      else "not tried: the lid reads closed and fully open at once")
            for part in (ROTATOR, HOME, SIDE):
                self._verdict(part, SKIP, reason)
            return
        started_home = w.level("home")
        since = w.mark()
        arrived = [False]

        def edge(name: str, level: bool) -> None:
            if name == "home" and level and (not started_home or w.seen("home", False, since)):
                self.act.rotator("brake")  # at the next detent: stop right here
                arrived[0] = True
            if name == "lid_open" and not level:
                self.act.rotator("off")  # fingers: never turn with the lid coming down

        w.on_edge = edge
        limit = self.settings.timing.rotation_timeout
        self.act.rotator("ahead")
        try:
            self._wait(lambda: arrived[0] or not w.level("lid_open"), limit)
        finally:
            self.act.rotator("off")
            w.on_edge = None
        left_home = w.seen("home", False, since)
        toggles = w.count("yellow_back", True, since) + w.count("yellow_back", False, since)
        if not arrived[0] and not w.level("lid_open"):
            for part in (ROTATOR, HOME, SIDE):
                self._verdict(part, SKIP, "the lid left fully open during the turn")
            return
        if arrived[0] and toggles == 1:
            side = "Mild" if w.level("yellow_back") else "Wild"
            self._verdict(ROTATOR, PASS, f"half a turn, now {side} side in play")
            self._verdict(HOME, PASS)
            self._verdict(SIDE, PASS)
        elif arrived[0] and not started_home:
            self._verdict(ROTATOR, PASS, "reached a detent")
            self._verdict(HOME, PASS)
            self._verdict(SIDE, SKIP, "the cartridge started between detents: run the "
                                      "self-test again to check this one")
        elif arrived[0]:
            self._verdict(ROTATOR, PASS, "reached the next detent")
            self._verdict(HOME, PASS)
            self._verdict(SIDE, FAIL, f"changed {toggles} times over half a turn, not once "
                                      "(magnet, sensor, or wire)")
        elif toggles:
            self._verdict(ROTATOR, PASS, "the cartridge turned (the side sensor changed)")
            self._verdict(HOME, FAIL, f"no detent seen in {limit:g} s of turning "
                                      "(magnet, sensor, or wire)")
            self._verdict(SIDE, PASS)
        elif left_home:
            self._verdict(ROTATOR, FAIL, f"left the detent but did not reach the next in "
                                         f"{limit:g} s (slipping or stalling)")
            self._verdict(HOME, PASS, "left its detent")
            self._verdict(SIDE, SKIP, "not tested: the cartridge did not turn far enough")
        else:
            self._verdict(ROTATOR, FAIL, f"the cartridge did not move in {limit:g} s "
                                         "(gear motor stalled, MOSFET, or wire)")
            for part in (HOME, SIDE):
                self._verdict(part, SKIP, "not tested: the cartridge did not turn")

    def close_again(self) -> None:
        self.op.instruct(DO_CLOSE_AGAIN, "Close the lid.")
        self._wait(lambda: self.watch.level("lid_closed"))

    def beam(self) -> None:
        w = self.watch
        if self.board.exit_beam is None:
            self._verdict(BEAM, ABSENT, "no exit beam configured (pins.exit_beam = -1)")
            return
        if w.level("exit_beam"):
            self._verdict(BEAM, FAIL, "reads blocked with the slot empty (misaligned, "
                                      "unpowered, or a card in the slot)")
            return
        self.op.instruct(DO_BLOCK_BEAM, "Push a card into the exit slot, then pull it out.")
        since = w.mark()
        if not self._wait(lambda: w.seen("exit_beam", True, since)):
            self._verdict(BEAM, FAIL, f"never saw the card in {self.timeout:g} s "
                                      "(emitter, receiver, or wire)")
            return
        if not self._wait(lambda: not w.level("exit_beam")):
            self._verdict(BEAM, FAIL, "still blocked after the card was pulled out")
            return
        self._verdict(BEAM, PASS)

    def motor(self) -> None:
        w, board = self.watch, self.board
        self.op.confirm(DO_LOAD, "Put a few cards in the cartridge and close the lid.")
        if not w.level("lid_closed"):
            self._verdict(MOTOR, SKIP, "not run: the lid does not read closed")
            return
        use_beam = board.exit_beam is not None and self.report[BEAM].status == PASS
        self.op.instruct(DO_MOTOR, f"The roller turns for {MOTOR_PULSE:g} s now.")
        since = w.mark()
        self.pulse(MOTOR_PULSE)
        if use_beam:
            jam = self.settings.timing.jam_timeout
            self._wait(lambda: not w.level("exit_beam"), jam)
            cards = w.count("exit_beam", False, since)
            if w.level("exit_beam"):
                self._verdict(MOTOR, FAIL, f"a card is stuck in the slot after {jam:g} s "
                                           "(jammed roller or slot): clear it")
            elif cards == 0:
                self._verdict(MOTOR, FAIL, f"no card reached the beam in a {MOTOR_PULSE:g} s "
                                           "run (cards loaded? roller, driver, wires, motor "
                                           "supply)")
            else:
                self._verdict(MOTOR, PASS, f"{cards} card(s) out in {MOTOR_PULSE:g} s")
            return
        if self.op.ask(DO_MOTOR, "Did the roller turn?"):
            self._verdict(MOTOR, PASS, "turned (judged by eye: no working beam to count cards)")
        else:
            self._verdict(MOTOR, FAIL, "did not turn (driver, wires, motor supply)")

    def pulse(self, seconds: float) -> None:
        """Run the roller for ``seconds`` (never more than ``MOTOR_PULSE``), lid closed only."""
        act, w = self.act, self.watch
        seconds = min(seconds, MOTOR_PULSE)
        done = [False]

        def stop(eventtime: float = 0.0) -> float:
            act.idle()
            done[0] = True
            return NEVER

        def edge(name: str, level: bool) -> None:
            if name == "lid_closed" and not level:
                stop()  # the roller stopped on the edge itself (the owner's interlock)

        timer = self.reactor.register_timer(stop, NEVER, "selftest.pulse")
        w.on_edge = edge
        try:
            if not act.run_motor(self.settings.motor.speed):
                return  # the lid pin reads open: the interlock refused the run
            self.reactor.update_timer(timer, self.reactor.monotonic() + seconds)
            self._wait(lambda: done[0], seconds + 1.0)
        finally:
            stop()
            w.on_edge = None
            self.reactor.unregister_timer(timer)

    def led(self) -> None:
        self.board.led.on()
        self.op.instruct(DO_LED, "The status LED is on now.")
        lit = self.op.ask(DO_LED, "Is the status LED lit?")
        self.board.led.off()
        self._verdict(LED, PASS if lit else FAIL, "" if lit else "not lit (LED polarity, "
                                                                 "resistor, or wire)")

    def sounds(self) -> None:
        for part, side in ((SOUND_MILD, "mild"), (SOUND_WILD, "wild")):
            cue = cues.flip(side)
            self.op.instruct(DO_SOUND, f"Listen: the {side.capitalize()} side's flip sound.")
            self.player.play(cue)
            self.runner.wait(self.player.durations[cue] + AMP_TAIL + POLL)
            error = getattr(self.player.speaker, "error", None)
            if error:
                self._verdict(part, FAIL, f"the audio device failed: {error}")
            elif self.op.ask(DO_SOUND, f"Did you hear the {side.capitalize()} sound?"):
                self._verdict(part, PASS)
            else:
                self._verdict(part, FAIL, "not heard (amp wiring, SD pin, I2S overlay, "
                                          "speaker)")


# --- people and scripts --------------------------------------------------------------------


class HumanOperator:
    """Prompts on a terminal; answers come from the keyboard."""

    def __init__(self, out: TextIO = sys.stdout, inp: TextIO = sys.stdin) -> None:
        self.out = out
        self.inp = inp
        self.n = 0

    def show(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def instruct(self, step: str, text: str) -> None:
        self.n += 1
        self.show(f"[{self.n}] {text}")

    def confirm(self, step: str, text: str) -> None:
        self.instruct(step, text + " Then press Enter.")
        self.inp.readline()

    def ask(self, step: str, question: str) -> bool:
        print(f"    {question} [y/n] ", end="", file=self.out, flush=True)
        answer = self.inp.readline()
        return answer.strip().lower() in ("y", "yes")


# --- the command ---------------------------------------------------------------------------


def run_on_hardware(settings: Settings, out: TextIO = sys.stdout,
                    inp: TextIO = sys.stdin) -> Report | None:
    """The interactive self-test on the board the config names; None if there is no Pi."""
    from hal.gpio import factory_name, open_board, pi_model
    from launcher.firmware.sound import build_cue_player

    name = factory_name(settings.pin_factory, pi_model())
    if name == "mock":
        return None
    reactor = RealReactor()
    board = open_board(settings.pins, name)
    operator = HumanOperator(out, inp)
    try:
        machine = MachineSettings.of(settings)
        with guarded_actuators(board, machine, reactor) as actuators:
            player = build_cue_player(settings.audio, actuators.amp, reactor, operator.show)
            try:
                return SelfTest(board, machine, RealRunner(reactor), operator, player,
                                actuators=actuators).run()
            finally:
                player.close()
    finally:
        board.close()


@contextmanager
def guarded_actuators(board: Board, settings: MachineSettings, reactor: Reactor
                      ) -> Iterator[Actuators]:
    """The board's actuator owner with its guard thread running, as in ``launcher run``
    (a run the loop stops renewing lapses); shut down and let go however the test ends."""
    actuators = Actuators(board, settings.motor, reactor, settings.rotator)
    actuators.start_guard()
    try:
        yield actuators
    finally:
        actuators.close()


def print_report(report: Report, out: TextIO) -> None:
    print("\nself-test summary:", file=out)
    for line in report.lines():
        print(line, file=out)
    failed = report.failed()
    if failed:
        print(f"selftest: {len(failed)} of {len(PARTS)} parts not passed: "
              + ", ".join(failed), file=out)
    else:
        print("selftest: every part passed", file=out)
