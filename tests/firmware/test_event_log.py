"""The event log on the press path: every event's line, in order, written once the pins are;
nothing formatted when the log is off; the console's event lines unchanged."""

from __future__ import annotations

import logging

import pytest

from launcher.firmware import app as app_module
from launcher.firmware.console import Console
from launcher.sim.rig import SimRig


def _rig() -> SimRig:
    rig = SimRig(seed=3)
    rig.load(list(range(60)))
    rig.load_inventory(60)
    return rig


def _expected_line(kind: str, data: dict) -> str:
    # Written out here (not by the code under test): the journal's line for one event.
    return kind + " " + " ".join(f"{k}={v}" for k, v in data.items())


def test_every_event_has_its_log_line_in_order(caplog: pytest.LogCaptureFixture) -> None:
    rig = _rig()
    start = len(rig.app.history)
    with caplog.at_level(logging.INFO, logger="launcher"):
        for _ in range(12):
            rig.press()
    events = [(kind, data) for _, kind, data in list(rig.app.history)[start:]]
    assert {"state", "shoot", "shot"} <= {k for k, _ in events}  # shots among the presses
    lines = [r.getMessage() for r in caplog.records if r.name == "launcher"]
    assert lines == [_expected_line(k, d) for k, d in events]
    rig.close()


def test_a_press_writes_its_pins_before_its_log_lines(caplog: pytest.LogCaptureFixture) -> None:
    rig = _rig()
    order: list[str] = []
    in1 = rig.sim.pin(rig.settings.pins.motor_in1)
    physics = in1.listener

    def in1_written(pin: object) -> None:
        order.append(f"in1={in1.state}")
        if physics is not None:
            physics(pin)

    in1.listener = in1_written

    class Spy(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            order.append(record.getMessage().split()[0])

    spy = Spy()
    log = logging.getLogger("launcher")
    log.addHandler(spy)
    try:
        with caplog.at_level(logging.INFO, logger="launcher"):
            while not any(o.startswith("in1=0.") for o in order):
                order.clear()
                rig.press()
    finally:
        log.removeHandler(spy)
    shot_start = order.index(next(o for o in order if o.startswith("in1=0.")))
    # ready -> shooting, then the BAM the speaker was told to play (the ``cue`` event), the shot
    assert order[shot_start + 1:shot_start + 4] == ["state", "cue", "shoot"]
    assert "state" not in order[:shot_start]  # the press's first line waited for IN1
    rig.close()


def test_nothing_is_formatted_when_the_log_is_off(monkeypatch: pytest.MonkeyPatch,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    formatted: list[str] = []
    real = app_module._Fields.__str__

    def counting(self: app_module._Fields) -> str:
        text = real(self)
        formatted.append(text)
        return text

    monkeypatch.setattr(app_module._Fields, "__str__", counting)
    rig = _rig()
    formatted.clear()
    with caplog.at_level(logging.WARNING, logger="launcher"):
        for _ in range(5):
            rig.press()
    assert formatted == [] and len(rig.app.history) > 5
    with caplog.at_level(logging.INFO, logger="launcher"):
        rig.press()
    assert formatted and caplog.records[-1].getMessage().endswith(formatted[-1])  # logged
    rig.close()


def test_the_consoles_event_lines_keep_their_content() -> None:
    rig = _rig()
    lines: list[str] = []
    console = Console(rig.app, sim=rig.sim, write=lines.append)
    start = len(rig.app.history)
    for _ in range(8):
        rig.press()
    events = [(kind, data) for _, kind, data in list(rig.app.history)[start:]]
    assert lines == [console.event_line(k, d) for k, d in events]
    assert any(ln.startswith("# event shoot side=") for ln in lines)
    assert "# event state from=ready to=shooting on=press" in lines
    console.close()
    rig.close()


def test_a_press_is_handled_at_one_time_however_the_clock_moves_meanwhile() -> None:
    """The edge's time is the press's: the luck draw's guards and the machine's step see the
    same time (so the step's guards agree with the draw's), and the run timer is set
    from it, even on a clock that moves at every read, as the real reactor's does."""
    rig = _rig()
    rig.advance(1.0)
    reactor, mach = rig.reactor, rig.app.machine
    seen: list[tuple[str, float]] = []

    def ticking() -> float:  # each read a microsecond later than the one before
        reactor._now += 1e-6
        return reactor._now

    def luck_wanted(now: float):  # type: ignore[no-untyped-def]
        seen.append(("draw", now))
        return type(mach).luck_wanted(mach, now)

    def step(event, now):  # type: ignore[no-untyped-def]
        seen.append((event.name, now))
        return type(mach).step(mach, event, now)

    reactor.monotonic = ticking  # type: ignore[method-assign]
    mach.luck_wanted, mach.step = luck_wanted, step  # type: ignore[method-assign]
    rig.sim.press()
    reactor.advance(0)
    del reactor.monotonic, mach.luck_wanted, mach.step
    assert mach.state == "shooting"
    (draw, t), (name, t_step) = seen[:2]
    assert (draw, name) == ("draw", "press") and t_step == t == mach.memory.last_press
    assert rig.app.timer_due("run") == t + rig.settings.timing.max_run
    rig.close()
