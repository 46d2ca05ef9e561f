"""`config save` merges into the file as it is now, keeps its mode and owner, and writes
nothing when nothing changed (issue 21, finding 4)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from launcher.core import config
from launcher.firmware.console import Console
from launcher.firmware.registry import E_STATE
from launcher.sim.rig import SimRig
from launcher.sim.unit import console_extras

START = '[motor]\nspeed = 0.8\n\n[console]\nport = "/dev/ttyGS0"\n'


class Saving:
    """A console started on ``path``, as the runner starts it."""

    def __init__(self, path: Path) -> None:
        self.rig = SimRig(seed=1)
        self.console = Console(self.rig.app, **console_extras(self.rig.sim),
                               raw_config=config.load_raw(path if path.exists() else None),
                               config_path=path)

    def final(self, line: str) -> str:
        out = self.console.handle_line(line)
        self.rig.advance(0)
        return out[-1]

    def close(self) -> None:
        self.console.close()
        self.rig.close()


@pytest.fixture
def cfg(tmp_path: Path) -> Path:
    path = tmp_path / "launcher.toml"
    path.write_text(START, encoding="utf-8")
    path.chmod(0o644)  # as systemd/install.sh leaves it
    return path


@pytest.fixture
def saving(cfg: Path) -> Iterator[Saving]:
    s = Saving(cfg)
    yield s
    s.close()


def test_an_edit_made_to_the_file_while_the_firmware_runs_is_kept(cfg: Path,
                                                                   saving: Saving) -> None:
    assert saving.final("config set timing.mash_guard_ms 300").startswith("ok ")
    # Meanwhile someone edits the file by hand: another key, and a new one.
    cfg.write_text(START.replace("speed = 0.8", "speed = 0.6") + '\n[audio]\nvolume = 0.5\n',
                   encoding="utf-8")
    assert saving.final("config save") == f"ok path={cfg} saved=1 written=true"
    s = config.load(cfg)
    assert s.timing.mash_guard == 0.3  # the console's change
    assert s.motor.speed == 0.6 and s.audio.volume == 0.5  # the hand edits, not undone
    assert s.console.port == "/dev/ttyGS0"


def test_the_same_key_changed_underneath_is_refused_naming_it(cfg: Path, saving: Saving) -> None:
    saving.final("config set timing.mash_guard_ms 300")
    saving.final("config set luck.mild.hazard [0.5, 1.0]")
    edited = START + "\n[timing]\nmash_guard_ms = 900\n"
    cfg.write_text(edited, encoding="utf-8")
    reply = saving.final("config save")
    assert reply.startswith(f"error {E_STATE} {cfg} was edited since the firmware read it, "
                            "and so were timing.mash_guard_ms: not saved"), reply
    assert cfg.read_text(encoding="utf-8") == edited  # untouched
    # Set to the file's value, it is no clash: saved, with the other change.
    saving.final("config set timing.mash_guard_ms 900")
    assert saving.final("config save").endswith("saved=2 written=true")
    assert config.load(cfg).luck.mild.hazard == (0.5, 1.0)


def test_the_file_keeps_its_mode(cfg: Path, saving: Saving) -> None:
    saving.final("config set timing.mash_guard_ms 300")
    assert saving.final("config save").endswith("written=true")
    assert stat.S_IMODE(cfg.stat().st_mode) == 0o644  # was reset to 0600


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another owner")
def test_the_file_keeps_its_owner_and_group(cfg: Path, saving: Saving) -> None:
    os.chown(cfg, 4321, 4322)
    saving.final("config set timing.mash_guard_ms 300")
    assert saving.final("config save").endswith("written=true")
    st = cfg.stat()
    assert (st.st_uid, st.st_gid) == (4321, 4322)


def test_nothing_changed_writes_nothing_and_says_so(cfg: Path, saving: Saving) -> None:
    before = cfg.stat()
    assert saving.final("config save") == (f'ok path={cfg} saved=0 written=false '
                                           'reason="nothing changed since the last save"')
    after = cfg.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert cfg.read_text(encoding="utf-8") == START
    # A change to the value the file already holds: nothing to write either.
    assert saving.final('config set console.port "/dev/ttyGS0"').startswith("ok ")
    assert saving.final("config save").endswith(
        'saved=1 written=false reason="the file already holds these values"')
    assert cfg.stat().st_ino == before.st_ino
    # A second save after a real one writes nothing more.
    saving.final("config set timing.mash_guard_ms 300")
    assert saving.final("config save").endswith("written=true")
    written = cfg.stat()
    assert saving.final("config save").endswith("written=false "
                                                 'reason="nothing changed since the last save"')
    assert cfg.stat().st_ino == written.st_ino


def test_a_new_file_is_readable_by_all(tmp_path: Path) -> None:
    path = tmp_path / "new.toml"
    s = Saving(path)
    try:
        s.final("config set timing.mash_guard_ms 300")
        assert s.final("config save").endswith("written=true")
    finally:
        s.close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert config.load(path).timing.mash_guard == 0.3


def test_an_edit_made_to_the_file_keeps_its_comments_and_layout(cfg: Path,
                                                                saving: Saving) -> None:
    """Issue 31, item 6: the edit's value was kept, its comment dropped."""
    assert saving.final("config set timing.mash_guard_ms 300").startswith("ok ")
    edited = ("# The launcher in the kitchen.\n[motor]\n# measured on this unit\n"
              "speed = 0.6  # slower: the roller is new\n\n[console]\nport = \"/dev/ttyGS0\"\n")
    cfg.write_text(edited, encoding="utf-8")
    assert saving.final("config save").endswith(" written=true")
    text = cfg.read_text(encoding="utf-8")
    assert text.startswith(edited)  # every line of the edit, as it was
    assert text[len(edited):] == "\n[timing]\nmash_guard_ms = 300\n"
    settings = config.load(cfg)
    assert settings.motor.speed == 0.6 and settings.timing.mash_guard == 0.3
    # A key the file has is changed where it stands, its comment kept.
    saving.final("debug on")
    assert saving.final("config set motor.speed 0.7").startswith("ok ")
    assert saving.final("config save").endswith(" written=true")
    assert "speed = 0.7  # slower: the roller is new\n" in cfg.read_text(encoding="utf-8")
