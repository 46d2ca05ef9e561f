"""The machine itself: ``Machine.handle`` (or ``step``) is the only way in; it looks the
rows up in ``transitions`` and, as it enters a state, sends that state's LED."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace

from launcher.core import cues
from launcher.core.config import SideLuck
from launcher.core.machine.actions import idle, rotate, wait_for_turn
from launcher.core.machine.led import led_of
from launcher.core.machine.memory import Inputs, Memory, Owed
from launcher.core.machine.settings import MachineSettings
from launcher.core.machine.transitions import ENTERS, Transition, rows
from launcher.core.machine.vocabulary import (
    BEAM_BLOCKED,
    BEAM_CLEAR,
    CUE,
    FAULT,
    HOME,
    HOME_LEFT,
    LATCHED,
    LED,
    LID_CLOSED,
    LID_FULL,
    LID_LEFT_CLOSED,
    LID_LEFT_FULL,
    LID_OPEN,
    POWER,
    PRESS,
    PROOFS,
    READY,
    ROTATING,
    SAVE,
    YELLOW_BACK,
    YELLOW_FRONT,
    Command,
    Ev,
    Event,
    State,
    emit,
    whole,
)
from launcher.core.profiles import Profile

_PROBE = Event(PRESS)  # the press ``luck_wanted`` puts to the guards before a draw

# The input level each sensor event sets: (the ``Inputs`` field, its new value).
_INPUT_OF: dict[Ev, tuple[str, bool]] = {
    LID_CLOSED: ("lid_closed", True), LID_LEFT_CLOSED: ("lid_closed", False),
    LID_FULL: ("lid_full", True), LID_LEFT_FULL: ("lid_full", False),
    BEAM_BLOCKED: ("beam_blocked", True), BEAM_CLEAR: ("beam_blocked", False),
    HOME: ("home", True), HOME_LEFT: ("home", False),
    YELLOW_BACK: ("yellow_back", True), YELLOW_FRONT: ("yellow_back", False),
}


class Machine:
    """The launcher's behaviour. ``handle`` (or ``step``, the same made lazily) is the only
    way in. ``state`` is what the console and the log say; ``at``, the table's state (a part
    of one, such as ``leaving`` of ``rotating``)."""

    def __init__(self, settings: MachineSettings, memory: Memory | None = None,
                 has_beam: bool = True) -> None:
        self.settings = settings
        self.memory = memory or Memory()
        self.inputs = Inputs()
        self.at: State = READY
        self.has_beam = has_beam
        self.profile: Profile = settings.profile  # what a press does (``profile`` changes it)
        self.led: str | int | None = None  # the LED pattern last sent (``led_of``)

    @property
    def state(self) -> State:
        """The state as the console, the log and the shell say it (a part's whole)."""
        return whole(self.at)

    @state.setter
    def state(self, state: State) -> None:
        """Put the machine in ``state`` as if it had entered it, its LED sent (tests)."""
        self.at = state
        self.led = led_of(state, self.memory)

    @property
    def turn_owed(self) -> bool:
        """The cartridge owes a turn (stopped by the lid, or found between detents): no shot
        until it is done, at the next full opening of the lid."""
        return self.memory.owed is not Owed.NOTHING

    # The one entry point (and its lazy form).
    def handle(self, event: Event, now: float) -> list[Command]:
        return list(self.step(event, now))

    def step(self, event: Event, now: float) -> Iterable[Command]:
        """``handle``, with the commands handed over as the action makes them: a shot's
        motor command comes before the rest is built, so the shell can start the roller
        first. The state is the new one on return; the memory, once every command is taken.
        The last command is the LED of the state entered, when it differs from the last sent.
        """
        name = event.name
        if event.inputs is not None:
            self.inputs = replace(event.inputs)
        level = _INPUT_OF.get(name)
        if level is not None:
            setattr(self.inputs, *level)
        for t in rows(self.at, name):
            if t.guard is None or t.guard(self, event, now):
                out = t.action(self, event, now) if t.action else []
                self.at = self._target(t)
                if isinstance(out, list):
                    out += self._enter()
                    return out
                return self._then_enter(out)
        return []

    def luck_wanted(self, now: float) -> SideLuck | None:
        """The luck table a press at ``now`` draws from, or None when it would draw nothing.

        The shell asks before it sends a press, draws, and puts the result in the event;
        so the random source is the shell's, and replaying a seed replays every shot. It only
        reads: the press that follows puts the same guards again (they are a few compares).
        """
        for t in rows(self.at, PRESS):
            if t.draws:
                return self.settings.luck.side(self.memory.side)
            if t.guard is None or t.guard(self, _PROBE, now):
                return None
        return None

    def start(self, inputs: Inputs, now: float) -> list[Command]:
        """Power-on: take the input levels, then home the cartridge if it is between detents."""
        self.inputs = inputs
        self.led = None  # whatever the LED showed before, the state's is sent
        out = [Command(POWER, True), Command(CUE, cues.STARTUP)]
        sensed = "mild" if inputs.yellow_back else "wild"
        if sensed != self.memory.side:
            out.append(emit("side_changed_while_off", was=self.memory.side, now=sensed))
            self.memory.side = sensed
            out.append(Command(SAVE))
        mem = self.memory
        if mem.latched or mem.fault in PROOFS:
            # A latched fault survives the restart: the check that found it must pass again
            # (this start's included), and then `clear` leaves it.
            mem.proof = {code: [] for code in mem.latched}
            mem.fault = mem.latched[-1] if mem.latched else mem.fault
            self.at = LATCHED if mem.latched else FAULT
            assert mem.fault is not None
            return [*out, *self._enter(),
                    emit("fault", code=mem.fault, latched=",".join(mem.latched) or "proven",
                         at="start")]
        self.at = READY if inputs.lid_closed else LID_OPEN
        if not inputs.home:
            # Between detents: home it, but only with the lid fully open (fingers).
            self.memory.expected_side = None
            if inputs.lid_full:
                out += rotate(self, now)
                self.at = ENTERS[ROTATING](self)
                return [*out, *self._enter()]
            return [*out, *wait_for_turn(self, now), *self._enter()]
        return [*out, *self._enter(), *idle(self, now)]

    def _target(self, t: Transition) -> State:
        """The state a row enters: for a state with parts, the part ``ENTERS`` picks (unless
        the row stays where it is)."""
        pick = ENTERS.get(t.target)
        if pick is None or (t.target is t.source and not t.reenters):
            return t.target
        return pick(self)

    def _enter(self) -> list[Command]:
        """The entry of the state the machine is in: its LED (``led_of``), once."""
        pattern = led_of(self.at, self.memory)
        if pattern == self.led:
            return []
        self.led = pattern
        return [Command(LED, pattern)]

    def _then_enter(self, out: Iterable[Command]) -> Iterator[Command]:
        yield from out
        yield from self._enter()
