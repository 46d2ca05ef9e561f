"""The self-test on the simulated launcher: a scripted operator doing each step.

``launcher selftest --auto`` and the console's ``selftest`` run the same walk-through
as a person does on the Pi (``launcher.firmware.selftest.SelfTest``), against a fresh
simulated unit on a manual reactor; tests inject faults through ``prepare``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

from hal.sim import Physics, SimLauncher
from launcher.core.config import Settings
from launcher.core.machine import MachineSettings
from launcher.core.reactor import NEVER, ManualReactor
from launcher.firmware.actuators import Amp
from launcher.firmware.selftest import (
    DO_BLOCK_BEAM,
    DO_CLOSE,
    DO_CLOSE_AGAIN,
    DO_LED,
    DO_LOAD,
    DO_MOTOR,
    DO_OPEN_AJAR,
    DO_OPEN_FULL,
    DO_PRESS,
    DO_SOUND,
    POLL,
    REACTION,
    Report,
    SelfTest,
    guarded_actuators,
)
from launcher.firmware.sound import CuePlayer
from launcher.sim.rig import sim_build


class ManualRunner:
    """For the simulated launcher: moves a ``ManualReactor`` on in small steps."""

    def __init__(self, reactor: ManualReactor) -> None:
        self.reactor = reactor

    def run_until(self, done: Callable[[], bool], timeout: float) -> bool:
        end = self.reactor.monotonic() + timeout
        self.reactor.advance(0)
        while not done():
            left = end - self.reactor.monotonic()
            if left <= 1e-9:
                return False
            self.reactor.advance(min(POLL, left))
        return True

    def wait(self, seconds: float) -> None:
        self.reactor.advance(seconds)


class ScriptedOperator:
    """Does each step on the simulated launcher as a person would, ``REACTION`` s after asked.

    It knows nothing of the faults a test injected: it acts through the simulator's
    verbs, and answers questions from what a person would see and hear: the roller
    turning, the LED pin, and the sound that reached the speaker while the amp was on.
    """

    def __init__(self, sim: SimLauncher, player: CuePlayer, out: TextIO | None = None,
                 cards: int = 6) -> None:
        self.sim = sim
        self.player = player
        self.reactor = sim.reactor
        self.out = out
        self.cards = cards
        self.heard: list[str] = []
        self.log: list[str] = []
        self._since = 0.0
        self._ear = self.reactor.register_timer(self._listen, NEVER, "operator.ear")
        self._timers = [self._ear]

    def show(self, text: str) -> None:
        if self.out is not None:
            print(text, file=self.out)

    def instruct(self, step: str, text: str) -> None:
        self.show(f"[{step}] {text}")
        self.log.append(step)
        self._since = self.reactor.monotonic()
        action = self._actions().get(step)
        if action is not None:
            self._later(action, REACTION, step)
        if step == DO_SOUND:
            self.heard = []
            self.reactor.update_timer(self._ear, self._since)

    def confirm(self, step: str, text: str) -> None:
        self.show(f"[{step}] {text}")
        self.log.append(step)
        if step == DO_LOAD:
            self.sim.load(f"card{i}" for i in range(self.cards))
            self.sim.close_lid()

    def ask(self, step: str, question: str) -> bool:
        if step == DO_MOTOR:
            answer = any(s.running and s.time >= self._since for s in self.sim.motor_history)
        elif step == DO_LED:
            answer = self.sim.level("led") > 0
        elif step == DO_SOUND:
            answer = bool(self.heard)
            self.reactor.update_timer(self._ear, NEVER)
        else:
            answer = False
        self.show(f"    {question} {'yes' if answer else 'no'}")
        return answer

    def _actions(self) -> dict[str, Callable[[], None]]:
        sim = self.sim
        return {
            DO_PRESS: sim.press,
            DO_OPEN_AJAR: lambda: sim.open_lid(full=False),
            DO_CLOSE: sim.close_lid,
            DO_OPEN_FULL: lambda: sim.open_lid(full=True),
            DO_CLOSE_AGAIN: sim.close_lid,
            DO_BLOCK_BEAM: self._card_in_and_out,
        }

    def _card_in_and_out(self) -> None:
        self.sim.hold_in_slot(True)
        self._later(lambda: self.sim.hold_in_slot(False), REACTION, "unblock")

    def _later(self, action: Callable[[], None], delay: float, name: str) -> None:
        def fire(eventtime: float) -> float:
            action()
            return NEVER

        self._timers.append(self.reactor.register_timer(
            fire, self.reactor.monotonic() + delay, f"operator.{name}"))

    def _listen(self, eventtime: float) -> float:
        # Heard = the speaker is sounding a cue while the amplifier is powered.
        speaker = self.player.speaker
        sounding = getattr(speaker, "current", None)
        if sounding is not None and self.sim.level("amp_enable") > 0:
            self.heard.append(sounding)
        return eventtime + POLL

    def close(self) -> None:
        for timer in self._timers:
            self.reactor.unregister_timer(timer)


def simulated_unit(settings: Settings, physics: Physics | None = None
                    ) -> tuple[SimLauncher, CuePlayer, ManualRunner]:
    """A simulated launcher with a recording speaker on its amp pin, on a manual reactor."""
    from hal.audio import RecordingSpeaker
    from launcher.firmware.sound import load_pack

    reactor = ManualReactor()
    sim = SimLauncher(reactor, settings.pins, physics, build=sim_build(settings.rotator))
    pack = load_pack(settings.audio.pack)
    speaker = RecordingSpeaker(clock=reactor.monotonic)
    speaker.load(pack.files)
    player = CuePlayer(speaker, Amp(sim.board), reactor, pack.durations)
    return sim, player, ManualRunner(reactor)


def run_auto(settings: Settings, out: TextIO | None = sys.stdout,
             prepare: Callable[[SimLauncher, CuePlayer], None] | None = None,
             physics: Physics | None = None) -> Report:
    """The self-test on the simulated launcher with the scripted operator.

    ``prepare`` runs after the unit is built and before the test: tests inject faults there.
    """
    sim, player, runner = simulated_unit(settings, physics)
    if prepare is not None:
        prepare(sim, player)
    operator = ScriptedOperator(sim, player, out)
    try:
        machine = MachineSettings.of(settings)
        with guarded_actuators(sim.board, machine, runner.reactor) as actuators:
            return SelfTest(sim.board, machine, runner, operator, player,
                            actuators=actuators).run()
    finally:
        operator.close()
        player.close()
        sim.board.close()


