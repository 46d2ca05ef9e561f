"""A closed stdout (`launcher play | head -3`) ends the program quietly with status 141."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

LAUNCHER = [sys.executable, "-m", "launcher.cli.main"]


def test_play_into_a_closed_pipe_stops_quietly_with_141(tmp_path: Path) -> None:
    conf = tmp_path / "alsa.conf"
    conf.write_text("pcm.!default { type null }\n")
    env = {**os.environ, "ALSA_CONFIG_PATH": str(conf), "GPIOZERO_PIN_FACTORY": ""}
    proc = subprocess.Popen([*LAUNCHER, "play", "--seed", "2", "--state", str(tmp_path / "s")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write("help\n")
        proc.stdin.flush()
        head = [proc.stdout.readline() for _ in range(3)]
        proc.stdout.close()  # what `head -3` does once it has its lines
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.write("help\nlog 20\nstatus\n")
            proc.stdin.flush()
        # stdin stays open, as a pipe from a slow producer would: the program must notice
        # the closed stdout by itself.
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.close()
    err = proc.stderr.read() if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    assert head[0].startswith("# SIMULATED launcher")
    assert code == 141
    assert "Traceback" not in err and "BrokenPipeError" not in err, err

