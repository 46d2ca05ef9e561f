"""Two consoles on one launcher (the serial one and a web session) share its one running
configuration: what one sets the other reads and saves; each is gated by its own `debug on`.
A web session's console is JSON only."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from launcher.core import config
from launcher.firmware.console import Console
from launcher.firmware.registry import E_DEBUG, E_UNAVAILABLE
from launcher.sim.rig import SimRig
from launcher.sim.unit import console_extras


class Two:
    """The first console as the runner makes it; the second handed its running config."""

    def __init__(self, path: Path) -> None:
        self.rig = SimRig(seed=1)
        self.serial = Console(self.rig.app, **console_extras(self.rig.sim),
                              raw_config=config.load_raw(path), config_path=path, seed=7)
        self.web = Console(self.rig.app, **console_extras(self.rig.sim),
                           live=self.serial.config, remote=True)

    def serial_says(self, line: str) -> str:
        out = self.serial.handle_line(line)
        self.rig.advance(0)
        return out[-1]

    def web_says(self, line: str) -> dict:
        out = self.web.handle_line(line)
        self.rig.advance(0)
        return json.loads(out[-1])

    def close(self) -> None:
        self.web.close()
        self.serial.close()
        self.rig.close()


@pytest.fixture
def two(tmp_path: Path) -> Iterator[Two]:
    path = tmp_path / "launcher.toml"
    path.write_text("[audio]\nvolume = 0.5\n", encoding="utf-8")
    t = Two(path)
    yield t
    t.close()


def test_a_value_set_on_one_console_is_read_on_the_other(two: Two) -> None:
    assert two.web_says("config set timing.sleep_after_s 100")["ok"]
    assert two.serial_says("config get timing.sleep_after_s") == "ok timing.sleep_after_s=100"
    assert two.serial_says("config set audio.volume 0.25").startswith("ok ")
    # Saved, and used after a restart: both say so alike.
    assert two.web_says("config get audio.volume")["data"] == {"audio.volume": 0.25,
                                                               "running": 0.5}
    assert two.serial_says("luck set mild hazard [0.5, 1.0]").startswith("ok ")
    assert two.web_says("config get luck.mild.hazard")["data"] == {
        "luck.mild.hazard": [0.5, 1.0]}


def test_one_save_writes_what_either_changed(two: Two, tmp_path: Path) -> None:
    two.web_says("config set timing.mash_guard_ms 300")
    two.serial_says("config set audio.volume 0.25")
    saved = two.serial_says("config save")
    assert saved.endswith("saved=2 written=true"), saved
    s = config.load(tmp_path / "launcher.toml")
    assert s.timing.mash_guard == 0.3 and s.audio.volume == 0.25
    assert two.web_says("config save")["data"]["saved"] == 0  # nothing left unsaved


def test_the_seed_is_the_launchers_not_a_consoles(two: Two) -> None:
    assert two.web_says("luck show")["data"]["seed"] == 7  # the one the owner drew
    two.web_says("seed 42")
    assert "seed=42" in two.serial_says("luck show")


def test_each_console_is_gated_by_its_own_debug_mode(two: Two) -> None:
    assert two.serial_says("debug on") == "ok debug=on"
    refused = two.web_says("config set motor.speed 0.5")
    assert refused["error"] == E_DEBUG, refused
    assert two.web_says("profile deal 20")["error"] == E_DEBUG
    assert two.serial_says("config set motor.speed 0.5").startswith("ok ")
    assert two.web_says("config get motor.speed")["data"] == {"motor.speed": 0.5}


def test_a_console_handed_the_running_config_reads_no_other(two: Two) -> None:
    with pytest.raises(TypeError, match="reads no other"):
        Console(two.rig.app, live=two.serial.config, raw_config=config.default_raw())


def test_a_remote_session_stays_json(two: Two) -> None:
    refused = two.web_says("json off")
    assert refused["error"] == E_UNAVAILABLE and "json stays on" in refused["message"]
    assert two.web_says("debug on")["data"] == {"debug": "on"}
    fresh = two.web_says("session new")["data"]
    assert fresh["json"] == "on" and fresh["debug"] == "off"
    assert two.web_says("status")["data"]["debug"] == "off"
    assert two.serial_says("session new").startswith("ok session=new json=off ")


@pytest.mark.parametrize("line", ["config set web.enabled false", "config set web.port 9000",
                                  'config set web.tls_cert "/tmp/x.pem"',
                                  'config set state.path "/tmp/elsewhere.json"'])
def test_the_networks_own_access_and_the_files_are_set_on_the_units_console_alone(
        two: Two, line: str) -> None:
    """A paired phone could lock everyone out, or move the unit's files: refused from the
    web, `debug on` or not, before its value is read; the serial console (with `debug on`
    where the key asks) judges the value."""
    key = line.split()[2]
    before = two.serial_says(f"config get {key}")
    for debug in ("off", "on"):
        two.web_says(f"debug {debug}")
        refused = two.web_says(line)
        assert refused["error"] == E_UNAVAILABLE and "unit's own console" in refused["message"]
    assert two.serial_says(f"config get {key}") == before
    two.serial_says("debug on")
    local = two.serial_says(line)
    assert local.startswith(("ok ", "error value web.", "error value state.")), local
    assert "own console" not in local
