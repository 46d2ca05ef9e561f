"""Web pairing on the launcher's button (launcher/firmware/pairing.py), on the simulated unit
and the manual reactor: a hold confirms, a short press cancels and plays, windows expire and
are rate-limited, a token is taken once, and the LED shows an open window."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from rigs import dealing_rig

from launcher.core import machine as m
from launcher.firmware.pairing import HOLD, RATE, RATE_PERIOD, WINDOW, Pairing
from launcher.firmware.registry import E_STATE, E_UNAVAILABLE, CommandError
from launcher.sim.rig import SimRig


@pytest.fixture
def rig() -> Iterator[SimRig]:
    r = dealing_rig(3)  # every press shoots 3 cards: a press that reached the machine shows
    yield r
    r.close()


def shots(rig: SimRig) -> int:
    return len(rig.app.events("shoot"))


def test_the_contract_figures() -> None:
    assert (Pairing.WINDOW, Pairing.HOLD) == (WINDOW, HOLD) == (30.0, 3.0)


def test_a_hold_of_three_seconds_confirms_and_is_no_press(rig: SimRig) -> None:
    pid = rig.app.pairing.open()
    rig.sim.press(hold=HOLD + 0.5)
    rig.advance(HOLD - 0.1)
    assert rig.app.pairing.state(pid) == "pending"
    assert rig.app.pairing.shown()["held"] is True
    rig.advance(0.2)
    assert rig.app.pairing.state(pid) == "confirmed"
    assert rig.app.events("pair_confirmed") == [("pair_confirmed", {"by": "button"})]
    rig.advance(1.0)  # let go after the hold
    rig.settle()
    assert shots(rig) == 0 and rig.state == m.READY
    assert rig.app.machine.memory.counters.get("presses", 0) == 0
    assert rig.app.pairing.take(pid) is True
    assert rig.app.pairing.take(pid) is False
    assert rig.app.pairing.state(pid) == "taken"


def test_a_short_press_cancels_the_window_and_shoots_as_usual(rig: SimRig) -> None:
    pid = rig.app.pairing.open()
    rig.sim.press()  # let go after physics.press_time
    rig.advance(0.0)
    assert shots(rig) == 0  # held back while it might be a hold
    rig.advance(rig.sim.physics.press_time + 0.01)
    assert rig.app.pairing.state(pid) == "expired"
    assert ("pair_closed", {"reason": "pressed"}) in rig.app.events()
    assert rig.state == m.SHOOTING and shots(rig) == 1
    rig.settle()
    assert len(rig.sim.take()) == 3
    assert rig.app.pairing.take(pid) is False


def test_without_a_window_a_press_shoots_when_pressed(rig: SimRig) -> None:
    rig.sim.press(hold=5.0)
    rig.advance(0.0)
    assert rig.state == m.SHOOTING  # not held back: nothing waits for the release


def test_a_release_as_the_hold_falls_due_confirms(rig: SimRig) -> None:
    pairing = rig.app.pairing
    pid = pairing.open()
    t = rig.now
    assert pairing.button(True, t) is False
    assert pairing.button(False, t + HOLD) is False  # before the hold's timer ran
    assert pairing.state(pid) == "confirmed" and shots(rig) == 0


def test_a_hold_outlasting_its_window_is_still_no_press(rig: SimRig) -> None:
    pid = rig.app.pairing.open()
    rig.advance(WINDOW - 1.0)
    rig.sim.press(hold=HOLD + 0.5)
    rig.advance(HOLD + 1.0)
    rig.settle()
    assert rig.app.pairing.state(pid) == "expired" and shots(rig) == 0


def test_a_window_expires_after_thirty_seconds(rig: SimRig) -> None:
    pid = rig.app.pairing.open()
    rig.advance(WINDOW - 0.1)
    assert rig.app.pairing.state(pid) == "pending"
    rig.advance(0.2)
    assert rig.app.pairing.state(pid) == "expired"
    assert rig.app.events("pair_closed") == [("pair_closed", {"reason": "expired"})]
    assert rig.app.pairing.shown() == {"window": "none"}
    rig.sim.press()  # the button is the button again
    rig.advance(0.0)
    assert rig.state == m.SHOOTING


def test_a_confirmed_window_not_taken_in_time_expires(rig: SimRig) -> None:
    pid = rig.app.pairing.open()
    rig.app.pairing.confirm(pid)
    rig.advance(WINDOW + 0.1)
    assert rig.app.pairing.state(pid) == "expired"
    assert rig.app.pairing.take(pid) is False


def test_only_a_pending_window_can_be_confirmed(rig: SimRig) -> None:
    with pytest.raises(CommandError) as err:
        rig.app.pairing.confirm("nosuchid")
    assert err.value.code == E_STATE and rig.app.pairing.state("nosuchid") == "unknown"
    assert rig.app.pairing.take("nosuchid") is False


def test_windows_are_rate_limited_and_one_is_open_at_a_time(rig: SimRig) -> None:
    pairing = rig.app.pairing
    ids = []
    for _ in range(RATE):
        ids.append(pairing.open())
        rig.advance(1.0)
    assert [pairing.state(p) for p in ids] == ["expired"] * (RATE - 1) + ["pending"]
    assert [d["reason"] for _, d in rig.app.events("pair_closed")] == ["replaced"] * (RATE - 1)
    assert len(set(ids)) == RATE and all(len(p) >= 22 for p in ids)  # 16 random bytes each
    with pytest.raises(CommandError) as err:
        pairing.open()
    assert err.value.code == E_STATE and "at most" in err.value.message
    assert pairing.state(ids[-1]) == "pending"  # a refused open closes nothing
    rig.advance(RATE_PERIOD - RATE + 0.1)  # the first window's minute is over
    assert pairing.state(pairing.open()) == "pending"


def test_the_led_shows_an_open_window_through_the_machine(rig: SimRig) -> None:
    assert rig.app.led.pattern == "ready" and rig.sim.level("led") == 1
    rig.app.pairing.open()
    assert rig.app.machine.led == "pairing" and rig.app.led.pattern == "pairing"
    assert rig.app.events("led")[-1] == ("led", {"pattern": "slow_blink"})
    levels = []
    for _ in range(8):
        rig.advance(0.25)
        levels.append(rig.sim.level("led"))
    assert levels.count(1.0) == 4 and levels.count(0.0) == 4  # a 1 s blink, half lit
    rig.advance(WINDOW)
    assert rig.app.led.pattern == "ready" and rig.sim.level("led") == 1


def test_a_fault_s_blink_code_wins_over_a_window(rig: SimRig) -> None:
    rig.sim.jam()
    rig.press()
    assert rig.state == m.FAULT
    code = rig.app.led.pattern
    assert isinstance(code, int)
    rig.app.pairing.open()
    assert rig.app.led.pattern == code


def test_asleep_the_window_blinks_and_then_the_led_is_off_again(rig: SimRig) -> None:
    rig.app.sleep()
    assert rig.app.led.pattern == "off"
    rig.app.pairing.open()
    assert rig.app.led.pattern == "pairing"
    rig.advance(WINDOW + 0.1)
    assert rig.state == m.ASLEEP and rig.app.led.pattern == "off"


def test_stopping_closes_the_window_and_its_timers(rig: SimRig) -> None:
    pid = rig.app.pairing.open()
    rig.sim.hold_button()
    rig.advance(0.1)
    rig.app.stop()
    before = len(rig.app.history)
    rig.advance(WINDOW + HOLD)
    assert rig.app.pairing.state(pid) == "expired" and len(rig.app.history) == before
    with pytest.raises(CommandError, match="stopped") as refused:
        rig.app.pairing.open()  # the LED is the stopped unit's: off
    assert refused.value.code == E_UNAVAILABLE  # not the rate limit's state
    assert rig.app.led.pattern == "off" and rig.sim.level("led") == 0
