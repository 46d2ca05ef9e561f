"""`launcher play` ends as README.md's exit-status rule says, at once, and one seed with one
script gives one output.

Each test runs the program as a user does: its own process, its stdin a pty (a person at a
terminal), a pipe whose writer is still there, or a script. Waits are for output to show
up, with a generous bound; the time from the signal to the exit is measured.
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

LAUNCHER = [sys.executable, "-m", "launcher.cli.main"]
BOUND = 30.0  # s: the most the program may take to start on a loaded machine
PROMPT = 2.5  # s: "at once" from a signal to the exit (it took 5.0-5.1 s with stdin open)
READY = b"loaded cards=84"  # the last line of the start


def _env(tmp_path: Path, **more: str) -> dict[str, str]:
    conf = tmp_path / "alsa.conf"
    conf.write_text("pcm.!default { type null }\n")
    return {**os.environ, "ALSA_CONFIG_PATH": str(conf), "GPIOZERO_PIN_FACTORY": "",
            "XDG_STATE_HOME": str(tmp_path / "xdg"), **more}


def _read_until(fd: int, needle: bytes, proc: subprocess.Popen) -> bytes:
    seen = b""
    deadline = time.monotonic() + BOUND
    while needle not in seen:
        if time.monotonic() > deadline or proc.poll() is not None:
            pytest.fail(f"never printed {needle!r}; it printed {seen[-2000:]!r}")
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                seen += os.read(fd, 65536)
            except OSError:  # the pty's other side has gone
                pytest.fail(f"never printed {needle!r}; it printed {seen[-2000:]!r}")
    return seen


def _stop(proc: subprocess.Popen, how: signal.Signals | str, master: int | None = None) -> \
        tuple[int, float]:
    """Send a signal (or type a key on the pty); the exit status, and how long it took."""
    start = time.monotonic()
    if isinstance(how, str):
        assert master is not None
        os.write(master, how.encode())
    else:
        proc.send_signal(how)
    try:
        code = proc.wait(timeout=BOUND)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return code, time.monotonic() - start


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_line_mode_on_a_terminal_stops_at_once_on_a_signal(tmp_path, sig, status):
    master, slave = os.openpty()
    proc = subprocess.Popen([*LAUNCHER, "play", "--lines", "--seed", "3"], stdin=slave,
                            stdout=slave, stderr=subprocess.DEVNULL, env=_env(tmp_path),
                            start_new_session=True)
    os.close(slave)
    try:
        _read_until(master, READY, proc)
        code, took = _stop(proc, sig)
    finally:
        os.close(master)
    assert code == status
    assert took < PROMPT, f"{took:.2f} s from {sig.name} to the exit"


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_line_mode_on_a_live_pipe_stops_at_once_on_a_signal(tmp_path, sig, status):
    proc = subprocess.Popen([*LAUNCHER, "play", "--seed", "3"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=_env(tmp_path))
    assert proc.stdout is not None and proc.stdin is not None
    try:
        _read_until(proc.stdout.fileno(), READY, proc)
        code, took = _stop(proc, sig)  # the pipe's writer (this test) is still there
    finally:
        proc.stdin.close()
        proc.stdout.close()
    assert code == status
    assert took < PROMPT, f"{took:.2f} s from {sig.name} to the exit"


@pytest.mark.parametrize(("key", "status"), [("\x03", 130), ("q", 0), (signal.SIGTERM, 143)],
                         ids=["ctrl-c", "q", "sigterm"])
def test_the_live_screen_exits_130_on_ctrl_c_143_on_sigterm_and_0_on_q(tmp_path, key, status):
    pytest.importorskip("prompt_toolkit")
    pytest.importorskip("rich")
    master, slave = os.openpty()
    proc = subprocess.Popen([*LAUNCHER, "play", "--seed", "3"], stdin=slave, stdout=slave,
                            stderr=subprocess.PIPE,
                            env=_env(tmp_path, TERM="xterm-256color"),
                            start_new_session=True)
    os.close(slave)
    try:
        _read_until(master, b"SIMULATED BOARD", proc)
        code, took = _stop(proc, key, master)
    finally:
        os.close(master)
    err = proc.stderr.read().decode() if proc.stderr else ""
    assert code == status, err
    assert took < PROMPT
    assert f"the state is kept in {tmp_path / 'xdg' / 'launcher' / 'play-state.json'}" in err


def test_a_dumb_terminal_gets_the_line_mode(tmp_path):
    master, slave = os.openpty()
    proc = subprocess.Popen([*LAUNCHER, "play", "--seed", "3"], stdin=slave, stdout=slave,
                            stderr=subprocess.PIPE, env=_env(tmp_path, TERM="dumb"),
                            start_new_session=True)
    os.close(slave)
    try:
        seen = _read_until(master, READY, proc)
        os.write(master, b"status\n")
        seen += _read_until(master, b"ok state=ready", proc)
        code, _ = _stop(proc, "quit\n", master)
    finally:
        os.close(master)
    assert b"# SIMULATED launcher" in seen and b"\x1b[" not in seen  # lines, no screen
    assert code == 0
    assert proc.stderr is not None
    assert "TERM=dumb cannot draw the live screen" in proc.stderr.read().decode()


SCRIPT = ("press\nwait 0.4\npress\nwait 0.4\npress\nwait 0.4\npress\nwait 0.4\nlid full\n"
          "wait 2\nside\nlid close\npress\nwait 0.4\nstats\nluck show\n")


def _play(tmp_path: Path, *args: str, script: str = SCRIPT) -> subprocess.CompletedProcess:
    return subprocess.run([*LAUNCHER, "play", *args], input=script, capture_output=True,
                          text=True, timeout=120, env=_env(tmp_path), check=False)


def test_one_seed_and_one_script_give_one_output(tmp_path):
    first = _play(tmp_path, "--seed", "7")
    second = _play(tmp_path, "--seed", "7")  # the same state folder: the first run's file
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert "# event flip side=wild" in first.stdout  # the first run ended on the Wild side
    assert first.stdout == second.stdout
    assert "ok side=wild dry_streak=" in first.stdout.splitlines()[-1]
    assert first.stdout.splitlines()[-1].endswith(" seed=7")  # `luck show`: the seed in use
    state = tmp_path / "xdg" / "launcher" / "play-state.json"
    assert f"a fresh unit, its state kept in {state}" in first.stdout.splitlines()[0]
    # Asked to, a run goes on from the file: the cartridge is still on the Wild side.
    resumed = _play(tmp_path, "--seed", "7", "--resume", script="side\n")
    assert f"resumed from {state}" in resumed.stdout
    assert "ok side=wild sensor=wild" in resumed.stdout


def test_a_script_with_an_error_line_exits_1(tmp_path):
    good = _play(tmp_path, "--seed", "1", script="status\nwait 0.1\n")
    bad = _play(tmp_path, "--seed", "1", script="status\nstatsu\nstatus\n")
    bad_wait = _play(tmp_path, "--seed", "1", script="wait -1\n")
    assert good.returncode == 0, good.stderr
    assert "error unknown" in bad.stdout and bad.stdout.rstrip().endswith("simulated=true "
                                                                          "debug=off")
    assert bad.returncode == 1
    assert "error usage wait" in bad_wait.stdout and bad_wait.returncode == 1
