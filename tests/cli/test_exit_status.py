"""README.md's exit-status rule, verb by verb, where a test can reach it: Ctrl-C (SIGINT to
the whole process group, as a terminal sends it) is 130 everywhere but `run`, whose normal
end it is (0). `play`'s own cases are in test_play_exit.py; bad values (2) and failed checks
(1) in the tests of each verb."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LAUNCHER = [sys.executable, "-m", "launcher.cli.main"]
BOUND = 60.0  # s: the most a verb may take to get going on a loaded machine


def _env(tmp_path: Path) -> dict[str, str]:
    conf = tmp_path / "alsa.conf"
    conf.write_text("pcm.!default { type null }\n")
    return {**os.environ, "ALSA_CONFIG_PATH": str(conf), "GPIOZERO_PIN_FACTORY": "",
            "XDG_STATE_HOME": str(tmp_path / "xdg")}


def _interrupt_when(argv: list[str], shown: bytes, tmp_path: Path,
                    sig: signal.Signals = signal.SIGINT) -> tuple[int, str]:
    """Run ``argv``; once stderr shows ``shown``, signal its process group; the status."""
    proc = subprocess.Popen([*LAUNCHER, *argv], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=_env(tmp_path), cwd=tmp_path, start_new_session=True)
    assert proc.stderr is not None
    seen = b""
    deadline = time.monotonic() + BOUND
    try:
        while shown not in seen:
            if time.monotonic() > deadline or proc.poll() is not None:
                pytest.fail(f"{argv}: never showed {shown!r}: {seen[-1500:]!r}")
            ready, _, _ = select.select([proc.stderr], [], [], 0.2)
            if ready:
                seen += os.read(proc.stderr.fileno(), 65536)
        os.killpg(proc.pid, sig)
        code = proc.wait(timeout=BOUND)
        seen += proc.stderr.read()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        proc.stderr.close()
    return code, seen.decode(errors="replace")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_stops_simulate_with_130(tmp_path, jobs):
    code, err = _interrupt_when(["simulate", "--games", "100000", "--progress", "--jobs", jobs],
                                b"simulate [", tmp_path)
    assert code == 130
    assert "Traceback" not in err


def test_ctrl_c_stops_tune_with_130_and_takes_its_new_folder_away(tmp_path):
    out = tmp_path / "reports" / "wild"
    code, err = _interrupt_when(["tune", "--config", str(REPO / "docs/examples/wild-party.toml"),
                                 "--games", "100000", "--progress", "--jobs", "1",
                                 "--out", str(out)], b"tune [", tmp_path)
    assert code == 130
    assert "Traceback" not in err
    assert not (tmp_path / "reports").exists()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_run_ends_with_0_on_ctrl_c_or_sigterm_its_normal_end(tmp_path, sig):
    code, err = _interrupt_when(["run", "--simulated", "--seed", "1"], b"Ctrl-C stops it",
                                tmp_path, sig)
    assert code == 0, err
