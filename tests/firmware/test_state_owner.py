"""One process owns a state file: a second `launcher play` or `launcher run --simulated` on
the same file is refused in one line naming the holder's PID and `--state`, exit 2.

The processes are real; each wait is for an event (a line printed, a process ended), with a
generous bound for a loaded machine, never a sleep.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from launcher.firmware import owner
from launcher.firmware.disk import atomic_write

LAUNCHER = [sys.executable, "-m", "launcher.cli.main"]
BOUND = 60.0  # s: the most a start may take on a loaded machine
READY = b"loaded cards=84"  # play's last line of the start


def _env(tmp_path: Path) -> dict[str, str]:
    conf = tmp_path / "alsa.conf"
    conf.write_text("pcm.!default { type null }\n")
    return {**os.environ, "ALSA_CONFIG_PATH": str(conf), "GPIOZERO_PIN_FACTORY": "",
            "XDG_STATE_HOME": str(tmp_path / "xdg")}


def _until(stream, needle: bytes, proc: subprocess.Popen) -> bytes:
    """What ``stream`` printed up to ``needle``; a failure if the process ends first."""
    seen = b""
    deadline = time.monotonic() + BOUND
    while needle not in seen:
        assert time.monotonic() < deadline and proc.poll() is None, \
            f"never printed {needle!r}; it printed {seen[-2000:]!r}"
        ready, _, _ = select.select([stream], [], [], 0.2)
        if ready:
            chunk = os.read(stream.fileno(), 65536)
            assert chunk, f"its output closed before {needle!r}: {seen[-2000:]!r}"
            seen += chunk
    return seen


def _holder(tmp_path: Path, *args: str) -> subprocess.Popen:
    """`launcher play --lines` on a live pipe, started and holding its state file."""
    proc = subprocess.Popen([*LAUNCHER, "play", "--lines", "--seed", "3", *args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=_env(tmp_path))
    _until(proc.stdout, READY, proc)
    return proc


def _end(proc: subprocess.Popen) -> int:
    try:
        proc.stdin.close()  # the end of its input: play quits
        return proc.wait(timeout=BOUND)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def _second(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*LAUNCHER, *argv], input="status\nquit\n", capture_output=True,
                          text=True, timeout=BOUND, env=_env(tmp_path), check=False)


def _refused(proc: subprocess.CompletedProcess[str], pid: int, path: Path) -> None:
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""  # nothing started: no banner, no replies
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert f"'{path}'" in proc.stderr and f"in use by process {pid} " in proc.stderr
    assert "--state FILE" in proc.stderr and "Traceback" not in proc.stderr


def test_a_second_play_on_the_same_state_file_is_refused_naming_the_holder(tmp_path):
    state = tmp_path / "xdg" / "launcher" / "play-state.json"
    first = _holder(tmp_path)
    try:
        second = _second(tmp_path, "play", "--lines", "--seed", "4")
        _refused(second, first.pid, state)
        # A file of its own is no one else's: it starts and plays.
        other = _second(tmp_path, "play", "--lines", "--seed", "4",
                        "--state", str(tmp_path / "mine.json"))
        assert other.returncode == 0, other.stderr
        assert "ok state=ready" in other.stdout
        assert first.poll() is None  # the holder plays on
    finally:
        status = _end(first)
    assert status == 0
    # Once the holder has ended, the file is free again.
    again = _second(tmp_path, "play", "--lines", "--seed", "4")
    assert again.returncode == 0, again.stderr


def test_the_lock_outlives_the_state_writers_rename_and_a_killed_holder(tmp_path):
    state = tmp_path / "xdg" / "launcher" / "play-state.json"
    first = _holder(tmp_path)
    try:
        # The holder has saved (a rename over the state file) since it took the lock.
        first.stdin.write(b"press\nwait 1\nstats\n")
        first.stdin.flush()
        _until(first.stdout, b"ok presses=", first)
        assert state.is_file()
        _refused(_second(tmp_path, "play", "--lines", "--state", str(state)), first.pid, state)
        first.send_signal(signal.SIGKILL)  # no clean-up at all: the kernel lets go
        assert first.wait(timeout=BOUND) == -signal.SIGKILL
    finally:
        _end(first)
    again = _second(tmp_path, "play", "--lines", "--seed", "4", "--resume")
    assert again.returncode == 0, again.stderr


def test_run_simulated_and_play_cannot_share_a_state_file(tmp_path):
    state = tmp_path / "xdg" / "launcher" / "run-state.json"
    unit = subprocess.Popen([*LAUNCHER, "run", "--simulated", "--seed", "3"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, env=_env(tmp_path))
    try:
        _until(unit.stdout, b"/dev/", unit)  # its pty's path: it is up
        _refused(_second(tmp_path, "run", "--simulated"), unit.pid, state)
        _refused(_second(tmp_path, "play", "--lines", "--state", str(state)), unit.pid, state)
    finally:
        unit.send_signal(signal.SIGTERM)
        code = unit.wait(timeout=BOUND)
        unit.stdout.close()
        unit.stderr.close()
    assert code == 0


def test_a_claim_survives_a_rename_over_the_state_file(tmp_path):
    # In one process: flock locks belong to an open file, so a second claim is refused
    # even here, as it would be in another process.
    state = tmp_path / "state.json"
    fd = owner.claim(state)
    try:
        atomic_write(state, "{}")  # what the state writer does: a new inode at the path
        with pytest.raises(owner.StateInUse) as refused:
            owner.claim(state)
        assert refused.value.pid == os.getpid()
        assert refused.value.key == "--state"
    finally:
        os.close(fd)
    os.close(owner.claim(state))  # free once let go
    assert owner.lock_path(state).read_text() == f"{os.getpid()}\n"


def test_a_lock_file_that_is_a_link_is_not_followed(tmp_path):
    target = tmp_path / "precious"
    target.write_text("keep me\n")
    state = tmp_path / "state.json"
    owner.lock_path(state).symlink_to(target)
    with pytest.raises(owner.ConfigError, match=r"cannot lock state\.json\.lock"):
        owner.claim(state)
    assert target.read_text() == "keep me\n"
