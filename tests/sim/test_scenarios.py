"""Whole sequences on the simulated launcher: real adapters, mock pins, manual reactor."""

from __future__ import annotations

import json
from dataclasses import replace

from launcher.core import config, cues
from launcher.core import machine as m
from launcher.firmware.state import StateStore
from launcher.sim.rig import SimRig


def motor_stopped_at(rig: SimRig) -> float | None:
    """When the motor last went from running to not running."""
    h = rig.sim.motor_history
    for a, b in zip(h[::-1][1:], h[::-1], strict=False):
        if a.running and not b.running:
            return b.time
    return None


def test_load_50_press_until_empty(rig):
    rig.load([f"card{i}" for i in range(50)])
    got: list[str] = []
    presses = 0
    while rig.app.machine.memory.inventory != 0 and presses < 1000:
        got += rig.press()
        presses += 1
    assert got == [f"card{i}" for i in range(50)]  # every card, in order, none twice
    assert rig.sim.cartridge == []
    assert rig.cues.played[-1] == cues.RELOAD
    # Empty: presses only ask for a reload, and the motor does not move.
    samples = len(rig.sim.motor_history)
    assert rig.press() == []
    assert rig.cues.played[-1] == cues.RELOAD
    assert len(rig.sim.motor_history) == samples
    assert rig.faults == []


def test_flip_twice(rig):
    assert rig.side == "mild" == rig.sim.side
    assert rig.flip() == "wild" == rig.sim.side
    assert cues.flip("wild") in rig.cues.played
    assert rig.flip() == "mild" == rig.sim.side
    assert rig.app.machine.memory.counters["flips"] == 2
    assert rig.state == m.READY and not rig.sim.level("rotator")


def test_lid_ajar_does_not_rotate_and_reopening_fully_rotates_again(rig):
    rig.sim.open_lid(full=False)
    rig.advance(3)
    assert rig.side == "mild" and rig.state == m.LID_OPEN
    rig.sim.open_lid(full=True)
    rig.settle()
    assert rig.side == "wild"
    rig.sim.open_lid(full=False)  # lowered a little, not closed: no second turn
    rig.advance(0.1)
    rig.sim.open_lid(full=True)
    rig.settle()
    assert rig.side == "wild"
    rig.sim.close_lid()
    rig.advance(0.1)
    rig.sim.open_lid(full=True)  # "close the lid and open it again"
    rig.settle()
    assert rig.side == "mild"


def test_sleep_at_exactly_300_s_idle_and_not_before(rig):
    rig.load_inventory(0)  # an empty launcher: the press below shoots nothing
    rig.advance(10)
    rig.sim.press()
    pressed = rig.now
    rig.advance(0)
    assert rig.cues.played[-1] == cues.RELOAD
    rig.advance(300.0 - 0.001)
    assert rig.state == m.READY
    assert rig.now - pressed < 300.0
    rig.advance(0.002)
    assert rig.state == m.ASLEEP
    assert rig.cues.played[-1] == cues.SLEEP and rig.cues.asleep
    assert rig.sim.level("motor_sleep") == 0 and rig.sim.level("led") == 0


def test_a_lid_movement_also_resets_the_idle_clock(rig):
    rig.advance(200)
    rig.sim.open_lid(full=False)
    rig.advance(0.1)
    rig.sim.close_lid()
    rig.advance(299)
    assert rig.state == m.READY
    rig.advance(1.5)
    assert rig.state == m.ASLEEP


def test_the_waking_press_is_consumed(rig):
    rig.load(["a", "b", "c"])
    rig.advance(301)
    assert rig.state == m.ASLEEP
    presses = rig.app.machine.memory.counters.get("presses", 0)
    rng_state = rig.app.rng.getstate()
    assert rig.press() == []
    assert rig.state == m.READY and rig.cues.played[-1] == cues.WAKE
    assert rig.app.machine.memory.counters.get("presses", 0) == presses
    assert rig.app.rng.getstate() == rng_state  # no luck was drawn
    # The driver stays asleep until a run needs it; the amplifier is back on.
    assert rig.sim.level("motor_sleep") == 0 and rig.app.actuators.roller == "idle"


def shooting_rig(seed: int = 0) -> SimRig:
    """A rig whose next press is a shot (seeded search, so the test states its setup)."""
    for s in range(seed, seed + 200):
        rig = SimRig(seed=s)
        probe = rig.app.rng.getstate()
        from launcher.core import luck

        if luck.draw(rig.settings.luck.mild, 0, rig.app.rng) >= 2:
            rig.app.rng.setstate(probe)
            rig.load([f"c{i}" for i in range(20)])
            return rig
        rig.close()
    raise AssertionError("no seed gives a shot")


def test_a_jam_mid_shot_stops_the_motor_within_the_timeout():
    rig = shooting_rig()
    rig.sim.jam()
    rig.sim.press()
    rig.advance(0.5)
    assert rig.sim.motor_running
    blocked_at = rig.now
    rig.advance(rig.settings.timing.jam_timeout + 0.5)
    assert rig.app.machine.memory.fault == "jam" and rig.state == m.FAULT
    stopped = motor_stopped_at(rig)
    assert stopped is not None
    assert stopped - blocked_at <= rig.settings.timing.jam_timeout
    assert rig.cues.played[-1] == cues.JAM
    # Presses are refused while faulted; clearing the jam and cycling the lid recovers.
    rig.press()
    assert not rig.sim.motor_running and rig.state == m.FAULT
    rig.sim.clear_jam()
    rig.flip()
    assert rig.state == m.READY
    rig.close()


def test_opening_the_lid_mid_shot_stops_the_motor_at_once():
    rig = shooting_rig(50)
    rig.sim.press()
    rig.advance(0.05)
    assert rig.sim.motor_running
    rig.sim.open_lid(full=False)
    opened = rig.now
    rig.advance(0)
    # Both interlocks: the power contact opened the lead, and the firmware its pins.
    assert not rig.sim.motor_running and not rig.sim.motor_commanded
    assert motor_stopped_at(rig) == opened
    assert rig.sim.motor_history[-1].time == opened
    rig.advance(5)
    assert rig.state == m.LID_OPEN and not rig.sim.motor_running
    rig.close()


def test_the_interlock_refuses_the_motor_when_the_lid_pin_is_open():
    rig = shooting_rig(100)
    # The lid switch opens, and a press lands before the debounced event is handled.
    rig.sim.stick("lid_closed", False)
    rig.app.press()
    assert not rig.sim.motor_running
    assert any(k == "interlock" for k, _ in rig.app.events())
    rig.close()


def test_contact_bounce_gives_one_press(rig):
    rig.sim.bounce(7)
    rig.advance(0.2)
    rig.sim.release()
    rig.advance(0.5)
    assert rig.app.machine.memory.counters.get("presses", 0) == 1


def test_a_seeded_run_is_replayable():
    def run(seed: int) -> list:
        rig = SimRig(seed=seed)
        rig.load([f"c{i}" for i in range(40)])
        for i in range(30):
            rig.press()
            if i == 12:
                rig.flip()
        events = [(round(t, 6), k, d) for t, k, d in rig.app.history]
        rig.close()
        return events

    first = run(42)
    assert first == run(42)
    assert first != run(43)


def test_no_beam_timed_fallback_shoots_the_asked_number(tmp_path):
    # The simulated roller ejects a card every 0.12 s / 0.85 duty = 0.141 s; 160 ms a card
    # is a calibration that fits it (the maker sets timed_card_ms for their roller).
    p = tmp_path / "c.toml"
    p.write_text("[pins]\nexit_beam = -1\n[timing]\ntimed_card_ms = 160\n")
    rig = SimRig(settings=config.load(p), seed=3)
    rig.load([f"c{i}" for i in range(60)])
    got = [len(rig.press()) for _ in range(25)]
    asked = [d["cards"] for k, d in rig.app.events("shot")]
    assert len(asked) >= 3
    assert [n for n in got if n] == asked
    assert rig.faults == []
    rig.close()


def test_state_survives_a_restart_and_a_corrupt_file_is_replaced(tmp_path):
    path = tmp_path / "state.json"
    rig = SimRig(seed=1, store=StateStore(path))
    rig.load([f"c{i}" for i in range(10)])
    rig.flip()
    for _ in range(5):
        rig.press()
    rig.advance(1)
    assert rig.app.store.flush(timeout=10)  # the writer thread has put it on disk
    saved = json.loads(path.read_text())
    assert saved["side"] == "wild" and saved["counters"]["flips"] == 1
    assert saved["counters"]["presses"] == 5
    rig.close()
    again = SimRig(seed=1, store=StateStore(path), side="wild")
    assert again.app.machine.memory.counters["presses"] == 5
    again.close()
    path.write_text("{not json")
    third = SimRig(seed=1, store=StateStore(path))
    assert third.app.events("state_reset")
    third.advance(1)
    assert third.app.store.flush(timeout=10)
    assert json.loads(path.read_text())["version"] == 2  # with its checksum
    third.close()


def test_settings_change_takes_effect_without_restart(rig):
    s = rig.settings
    always = replace(s, luck=replace(s.luck, mild=config.side_luck(
        "luck.mild", {"hazard": [1.0], "sizes": [1], "weights": [1]})))
    rig.app.retune(m.MachineSettings.of(always))
    rig.load(["x", "y"])
    assert rig.press() == ["x"]
    assert rig.press() == ["y"]
