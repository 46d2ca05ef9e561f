"""Hostile config files: each is one line naming the key or the file, never a traceback."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from launcher.core import config
from launcher.core.errors import ConfigError

LAUNCHER = [sys.executable, "-m", "launcher.cli.main"]


def test_a_latin1_byte_is_a_clear_error_naming_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "launcher.toml"
    path.write_bytes("# café on a Windows laptop\n[motor]\nspeed = 0.8\n".encode("latin-1"))
    with pytest.raises(ConfigError) as err:
        config.load(path)
    assert str(err.value) == (f"file = '{path}': not UTF-8: byte 0xe9 on line 1 "
                              "(save the file as UTF-8)")
    proc = subprocess.run([*LAUNCHER, "config", "check", str(path)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"config error: {err.value}"]


def test_a_value_nested_thousands_deep_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.toml"
    path.write_text("[motor]\nspeed = " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(ConfigError, match="nested too deeply"):
        config.load(path)
    with pytest.raises(ConfigError, match="nested too deeply"):
        config.parse_value("[" * 5000 + "]" * 5000)


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "+inf"])
def test_durations_must_be_finite(tmp_path: Path, text: str) -> None:
    path = tmp_path / "t.toml"
    path.write_text(f"[timing]\nmax_run_ms = {text}\n")
    with pytest.raises(ConfigError, match=r"timing\.max_run_ms = .*: must be a finite number"):
        config.load(path)


@pytest.mark.parametrize("name", sorted(config.TIMING_RANGES))
def test_every_duration_has_a_finite_documented_range(name: str) -> None:
    key, lo, hi = config.TIMING_RANGES[name]
    assert math.isfinite(hi) and lo >= 0
    default_text = config.default_text()
    assert f"{lo:g}..{hi:g}" in default_text.replace(",", ""), key  # documented beside the key
    raw = config.default_raw()
    for ok in (lo, hi):
        config.settings_from_dict(config.set_key(raw, f"timing.{key}", ok))
    for bad in (lo - 1, hi + 1):
        with pytest.raises(ConfigError, match=rf"timing\.{key} = .*must be within"):
            config.set_key(raw, f"timing.{key}", bad)


def test_max_run_is_capped_for_the_motor() -> None:
    assert config.TIMING_RANGES["max_run"][2] <= 15_000


def _every_key(raw: dict, prefix: str = "") -> list[str]:
    out = []
    for k, v in raw.items():
        out += _every_key(v, f"{prefix}{k}.") if isinstance(v, dict) else [f"{prefix}{k}"]
    return out


def test_every_key_round_trips_through_the_writer(tmp_path: Path) -> None:
    raw = config.default_raw()
    keys = _every_key(raw)
    assert len(keys) >= 25
    path = tmp_path / "all.toml"
    path.write_text(config.to_toml(raw), encoding="utf-8")
    assert config.read_toml(path) == raw
    assert config.load(path) == config.load(None)


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40))
def test_any_string_value_survives_save_and_load(tmp_path_factory, text: str) -> None:
    try:
        raw = config.set_key(config.default_raw(), "audio.pack", text)
    except ConfigError as exc:  # a NUL, an empty path: refused, naming the key
        assert str(exc).startswith("audio.pack = ") and "\n" not in str(exc)
        return
    path = tmp_path_factory.mktemp("s") / "c.toml"
    path.write_text(config.to_toml(raw), encoding="utf-8")
    assert config.read_toml(path)["audio"]["pack"] == text


def test_the_string_that_broke_the_hand_written_writer(tmp_path: Path) -> None:
    raw = config.set_key(config.default_raw(), "audio.pack", "a\nb")
    path = tmp_path / "c.toml"
    path.write_text(config.to_toml(raw), encoding="utf-8")
    assert config.load(path).audio.pack == "a\nb"


def test_config_check_refuses_a_sound_pack_that_is_not_there(tmp_path: Path) -> None:
    path = tmp_path / "launcher.toml"
    path.write_text('[audio]\npack = "no-such-pack"\n')
    proc = subprocess.run([*LAUNCHER, "config", "check", str(path)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.startswith("config error: audio.pack = ")
    assert "no-such-pack" in proc.stderr and "manifest.toml" in proc.stderr
