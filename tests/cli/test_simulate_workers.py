"""The worker processes of ``simulate`` and ``tune`` import the installed package whatever the
current folder holds, and a worker that dies stops the run with one line."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

from launcher.cli.simulate import play_games
from launcher.core.errors import ConfigError, LauncherError

REPO = Path(__file__).resolve().parents[2]
LAUNCHER = Path(sys.executable).with_name("launcher")  # the console script, as a user runs it


def shadowed_folder(tmp_path: Path) -> Path:
    """A folder holding empty ``launcher/`` and ``hal/`` folders, like ``/opt`` on a Pi."""
    for name in ("launcher", "hal"):
        (tmp_path / name).mkdir()
    return tmp_path


@pytest.mark.parametrize("argv", [
    ["simulate", "--games", "4", "--jobs", "2"],
    ["simulate", "--game", "uno", "--games", "4", "--jobs", "2"],
    ["tune", "--config", str(REPO / "docs" / "examples" / "wild-party.toml"), "--games", "4",
     "--jobs", "2", "--out", "report"],
], ids=["simulate", "simulate-uno", "tune"])
def test_simulate_and_tune_finish_from_a_folder_holding_an_empty_launcher(tmp_path, argv):
    cwd = shadowed_folder(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    done = subprocess.run([str(LAUNCHER), *argv, "--no-progress"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "ImportError" not in done.stderr and "Traceback" not in done.stderr
    if argv[0] == "tune":
        assert (cwd / "report" / "report.md").read_text().startswith("# Luck tuning report")
    else:
        assert "4 games" in done.stdout


def _die(start: int, stop: int) -> None:
    os._exit(3)  # a worker killed mid-chunk (the OOM killer, a crash in a C extension)


def _refuse(start: int, stop: int) -> None:
    raise ConfigError("--rule", "x", "refused in a worker")


def test_a_worker_that_dies_stops_the_run_with_one_line():
    with pytest.raises(LauncherError, match=r"a worker process died .*--jobs 1"):
        play_games(_die, 40, jobs=2)


def test_a_pool_broken_while_the_chunks_are_submitted_stops_the_run_with_one_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``map`` submits every chunk at once, and ``submit`` raises once a worker has died:
    on a loaded machine the first worker can die before the last chunk is submitted."""

    def broken(self, *args, **kwargs):
        raise BrokenProcessPool("A child process terminated abruptly")

    monkeypatch.setattr(ProcessPoolExecutor, "map", broken)
    with pytest.raises(LauncherError, match=r"a worker process died .*--jobs 1"):
        play_games(_die, 40, jobs=2)


def test_an_error_raised_in_a_worker_reaches_the_caller_whole():
    with pytest.raises(ConfigError) as exc:
        play_games(_refuse, 40, jobs=2)
    assert (exc.value.key, exc.value.reason) == ("--rule", "refused in a worker")

