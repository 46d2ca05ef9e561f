"""No console command writes outside the state folder and the config file.

Every command of `help` runs, with arguments that make it do its work, while every way
Python opens a file for writing is watched; the only paths written are the state file's
folder and the config path.
"""

from __future__ import annotations

import builtins
import os
import tempfile
from pathlib import Path

import pytest

from launcher.core import config
from launcher.firmware.console import Console
from launcher.firmware.state import StateStore
from launcher.sim.rig import SimRig
from launcher.sim.unit import console_extras

LINES = [
    "help", "status", "version", "press", "lid open", "lid close", "side", "cards 5",
    "load 5", "inventory", "luck show", "luck set mild hazard [0.5, 1.0]", "seed 3",
    "profile", "profile dealer", "profile flip-attack", "stats", "log 20", "sleep", "wake",
    "clear", "config get motor.speed", "config set motor.speed 0.7", "config save",
    "selftest", "sounds play mild_bam", "sounds list", "json on", "json off", "debug on",
    "motor run 50", "rotate", "debug off", "jam", "press", "unjam", "clear", "reboot-safe",
]


def test_every_command_writes_only_the_state_folder_and_the_config(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state_dir = tmp_path / "state"
    cfg = tmp_path / "etc" / "launcher.toml"
    cfg.parent.mkdir()
    cfg.write_text("")
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    written: list[Path] = []
    real_open, real_os_open, real_replace = builtins.open, os.open, os.replace
    real_mkstemp = tempfile.mkstemp

    def watched_open(file, mode="r", *args, **kw):
        if isinstance(file, (str, os.PathLike)) and any(c in mode for c in "wax+"):
            written.append(Path(file).resolve())
        return real_open(file, mode, *args, **kw)

    def watched_os_open(path, flags, *args, **kw):
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            written.append(Path(path).resolve())
        return real_os_open(path, flags, *args, **kw)

    def watched_replace(src, dst, *args, **kw):
        written.append(Path(dst).resolve())
        return real_replace(src, dst, *args, **kw)

    def watched_mkstemp(*args, **kw):
        fd, name = real_mkstemp(*args, **kw)
        written.append(Path(name).resolve())
        return fd, name

    rig = SimRig(seed=2, store=StateStore(state_dir / "state.json"))
    console = Console(rig.app, **console_extras(rig.sim), raw_config=config.load_raw(cfg),
                      config_path=cfg, reboot=lambda: None)
    monkeypatch.setattr(builtins, "open", watched_open)
    monkeypatch.setattr(os, "open", watched_os_open)
    monkeypatch.setattr(os, "replace", watched_replace)
    monkeypatch.setattr(tempfile, "mkstemp", watched_mkstemp)
    try:
        for line in LINES:
            out = console.handle_line(line)
            assert out and not out[-1].startswith("error internal"), (line, out)
            rig.advance(0.5)
        assert rig.app.store.flush(10)
    finally:
        monkeypatch.undo()
        console.close()
        if rig.app.started:
            rig.close()
        else:
            rig.sim.board.close()
    allowed = (state_dir.resolve(), cfg.parent.resolve())
    assert written, "nothing was written: the watch saw nothing"
    outside = [p for p in written if not any(p == a or a in p.parents for a in allowed)]
    assert outside == []
    assert any(p.parent == state_dir.resolve() for p in written)  # the state file
    assert any(p == cfg.resolve() for p in written)  # config save
