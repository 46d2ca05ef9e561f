"""`luck` and `config` through the console: checked, gated, applied, saved."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from consoles import Session

from launcher.core import config
from launcher.firmware.registry import (
    E_DEBUG,
    E_IO,
    E_VALUE,
)

# --- luck and config ---------------------------------------------------------------------


def test_luck_set_is_checked_as_config_and_applied(session: Session) -> None:
    reply = session.final("luck set wild sizes [2, 3] weights [1, 3]")
    assert reply.startswith("ok side=wild ") and "sizes=[2,3] weights=[1,3]" in reply
    assert session.rig.app.machine.settings.luck.wild.sizes == (2, 3)
    assert session.rig.app.machine.settings.luck.wild.weights == (1.0, 3.0)
    bad = session.final("luck set wild sizes [2, 3, 4]")
    assert bad == (f"error {E_VALUE} luck.wild.weights = [1.0, 3.0]: "
                   "must have one weight per size (3)")
    assert session.rig.app.machine.settings.luck.wild.sizes == (2, 3)  # nothing half-applied


def test_config_set_live_and_restart_keys(session: Session) -> None:
    session("debug on")  # timing, motor and pin keys are gated (debug_config_gate.txt)
    assert session.final("config set timing.jam_timeout_ms 500") == \
        "ok timing.jam_timeout_ms=500 applied=now unsaved=1"
    assert session.rig.app.machine.settings.timing.jam_timeout == 0.5
    assert session.final("config set pins.led 4") == "ok pins.led=4 applied=restart unsaved=2"
    assert session.rig.app.board.pins.led == 26
    assert session.final("config get pins.led") == "ok pins.led=4 running=26"
    # A live change after a pending pin change still applies (pins are not touched).
    assert session.final("config set motor.speed 0.5").endswith("applied=now unsaved=3")
    assert session.rig.app.machine.settings.motor.speed == 0.5
    assert session.final("config set timing.debounce_ms 10").endswith("applied=restart unsaved=4")


WALK_AROUND = ["config set timing.max_run_ms 15000", "config set timing.card_timeout_ms 10000",
               "config set motor.speed 0.1", "profile deal 30", "load 100", "press"]


def test_the_config_walk_around_of_the_debug_gate_is_refused(session: Session) -> None:
    """Once: 15 s of roller without `debug on`. Every step that lengthens a run is refused."""
    session("cards 100")
    finals = [session.final(line) for line in WALK_AROUND]
    assert [f.split(" ", 2)[:2] for f in finals[:4]] == [["error", E_DEBUG]] * 4
    assert "timing.max_run_ms" in finals[0] and "profile deal 30" in finals[3]
    t = session.rig.app.machine.settings
    assert (t.timing.max_run, t.timing.card_timeout, t.motor.speed) == (8.0, 1.5, 0.85)
    assert session.rig.app.machine.profile.name == "flip-attack"
    session.rig.advance(20)
    assert session.rig.app.events("fault") == []
    # With `debug on` the same lines go through and the roller runs the 15 s asked for.
    session("debug on")
    assert all(session.final(line).startswith("ok ") for line in WALK_AROUND)
    session.rig.advance(14.9)
    assert session.rig.app.board.motor.speed == pytest.approx(0.1)
    session.rig.advance(0.2)
    assert session.rig.app.board.motor.speed == 0
    assert session.rig.app.events("fault")[-1][1]["code"] == "overrun"


@pytest.mark.parametrize("key", [
    "motor.speed", "motor.brake", "motor.brake_ms", "motor.lease_ms", "timing.max_run_ms",
    "timing.card_timeout_ms", "timing.jam_timeout_ms", "timing.timed_card_ms",
    "timing.rotation_timeout_ms", "timing.debounce_ms", "rotator.brake_ms",
    "rotator.creep_speed", "pins.motor_in1", "pins.deadman", "pins.lid_closed_nc",
    "board.pin_factory"])
def test_keys_that_change_how_the_motors_run_are_gated_by_prefix(key: str) -> None:
    from launcher.firmware.live_config import is_gated

    assert is_gated(key)  # keys another branch adds (motor.lease_ms, pins.deadman) too


@pytest.mark.parametrize("key", ["timing.mash_guard_ms", "timing.sleep_after_s", "luck.seed",
                                 "luck.mild.hazard", "luck.wild.weights", "audio.volume",
                                 "console.port", "state.path", "game.profile"])
def test_keys_that_never_lengthen_a_run_are_not_gated_by_name(key: str) -> None:
    from launcher.firmware.live_config import is_gated

    assert not is_gated(key)


def test_every_gated_key_of_the_default_config_is_refused_then_allowed(session: Session) -> None:
    raw = config.default_raw()
    keys = [f"{table}.{k}" for table in ("motor", "timing", "rotator", "pins", "board")
            for k, v in raw[table].items() if not isinstance(v, dict)]
    for key in keys:
        value = config.get_key(raw, key)
        line = f"config set {key} {json.dumps(value)}"
        reply = session.final(line)
        if key in ("timing.mash_guard_ms", "timing.sleep_after_s"):
            assert reply.startswith(f"ok {key}="), reply
        else:
            assert reply.startswith(f"error {E_DEBUG} {key} "), reply
    session("debug on")
    for key in keys:
        value = config.get_key(raw, key)
        assert session.final(f"config set {key} {json.dumps(value)}").startswith("ok "), key


def test_shot_sizes_and_deal_n_are_gated_beyond_the_stock(session: Session) -> None:
    assert session.console.config.shot_cap == 12  # the wild side's largest shot, by default
    assert session.final("luck set mild sizes [12] weights [1]").startswith("ok ")
    assert session.final("luck set wild sizes [13]  weights [1]").startswith(f"error {E_DEBUG} ")
    assert session.final("config set luck.mild.sizes [40]").startswith(f"error {E_DEBUG} ")
    assert session.final("profile deal 12").startswith("ok ")
    assert session.final("profile deal 13").startswith(f"error {E_DEBUG} ")  # count unknown
    session("load 25")
    assert session.final("profile deal 25").startswith("ok ")  # the launcher holds them
    assert session.final("profile deal 26").startswith(f"error {E_DEBUG} ")
    assert session.final('config set game.profile "deal 26"').startswith(f"error {E_DEBUG} ")
    assert session.final('config set game.profile "deal 25"').startswith("ok ")
    session("debug on")
    assert session.final("profile deal 30").startswith("ok ")
    assert session.final("luck set wild sizes [30] weights [1]").startswith("ok ")


def test_config_errors_name_the_key(session: Session) -> None:
    assert session.final("config set motor.speed 2") == \
        f"error {E_VALUE} motor.speed = 2: must be within 0.1..1"
    assert session.final("config set motor.sped 1") == \
        f"error {E_VALUE} motor.sped = (missing): unknown key"
    assert session.final("config get motor").startswith(f"error {E_VALUE} motor is a table")


def test_config_save_writes_a_file_that_loads_back(tmp_path: Path) -> None:
    path = tmp_path / "etc" / "launcher.toml"
    b = Session(config_path=path, raw_config=config.default_raw())
    try:
        b("debug on")
        b("config set timing.jam_timeout_ms 650")
        b("luck set mild hazard [0.5, 1.0]")
        b("config set console.port \"/dev/tty my port\"")
        reply = b.final("config save")
        assert reply == f"ok path={path} saved=3 written=true"
        settings = config.load(path)
        assert settings.timing.jam_timeout == 0.65
        assert settings.luck.mild.hazard == (0.5, 1.0)
        assert settings.console.port == "/dev/tty my port"
        text = path.read_text(encoding="utf-8")
        assert "[pins]" not in text and "button" not in text  # defaults are not written
        assert b.final("config set timing.jam_timeout_ms 700").endswith("unsaved=1")
    finally:
        b.close()


def test_config_save_failure_is_an_io_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    b = Session(config_path=blocker / "launcher.toml", raw_config=config.default_raw())
    try:
        b("config set console.port /dev/ttyX")
        reply = b.final("config save")
        assert reply.startswith(f"error {E_IO} cannot write {blocker}/launcher.toml")
    finally:
        b.close()


def test_console_reads_the_config_file_when_not_given_one(tmp_path: Path) -> None:
    path = tmp_path / "launcher.toml"
    path.write_text("[motor]\nspeed = 0.6\n", encoding="utf-8")
    b = Session(config_path=path)
    try:
        assert b.final("config get motor.speed") == "ok motor.speed=0.6"
    finally:
        b.close()
