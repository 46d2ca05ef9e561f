"""`launcher console` against `launcher run`, two processes joined by a null-modem of ptys.

Each program opens the slave end of its own pty, as it would open /dev/ttyUSB0; a thread of
the test copies bytes between the two masters, as a crossed serial cable would.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import threading
import tty
from collections.abc import Iterator
from pathlib import Path

LAUNCHER = [sys.executable, "-m", "launcher.cli.main"]


class NullModem:
    """Two pty pairs whose masters are cross-connected by a thread."""

    def __init__(self) -> None:
        self.a_master, self.a_slave = os.openpty()
        self.b_master, self.b_slave = os.openpty()
        for fd in (self.a_slave, self.b_slave):
            tty.setraw(fd)
        self.a_path = os.ttyname(self.a_slave)
        self.b_path = os.ttyname(self.b_slave)
        self._stop_r, self._stop_w = os.pipe()
        self._thread = threading.Thread(target=self._relay, name="null-modem", daemon=True)

    def _relay(self) -> None:
        peer = {self.a_master: self.b_master, self.b_master: self.a_master}
        while True:
            ready, _, _ = select.select([self.a_master, self.b_master, self._stop_r], [], [])
            if self._stop_r in ready:
                return
            for fd in ready:
                try:
                    data = os.read(fd, 4096)
                except OSError:  # the slave side is closed for the moment (EIO)
                    continue
                os.write(peer[fd], data)

    def __enter__(self) -> NullModem:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        os.write(self._stop_w, b"x")
        self._thread.join(5)
        for fd in (self.a_master, self.a_slave, self.b_master, self.b_slave, self._stop_r,
                   self._stop_w):
            with contextlib.suppress(OSError):
                os.close(fd)


@contextlib.contextmanager
def firmware(tmp_path: Path, port: str) -> Iterator[subprocess.Popen[str]]:
    alsa = tmp_path / "alsa.conf"
    alsa.write_text("pcm.!default { type null }\n")
    cfg = tmp_path / "launcher.toml"
    cfg.write_text(f'[board]\npin_factory = "mock"\n[state]\npath = "{tmp_path / "s.json"}"\n'
                   f'[console]\nport = "{port}"\n[luck]\nseed = 3\n')
    env = {**os.environ, "ALSA_CONFIG_PATH": str(alsa), "GPIOZERO_PIN_FACTORY": ""}
    proc = subprocess.Popen([*LAUNCHER, "run", "--config", str(cfg)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        yield proc
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


def test_piped_console_reads_long_replies_to_their_end(tmp_path: Path) -> None:
    script = "help\nload 12\npress\nlog 20\nstatus\nbogus\n"
    with NullModem() as cable, firmware(tmp_path, cable.a_path):
        proc = subprocess.run([*LAUNCHER, "console", cable.b_path, "--wait", "20"],
                              input=script, capture_output=True, text=True, timeout=90,
                              check=False)
    lines = proc.stdout.splitlines()
    # The output is the script's: nothing of the client's own handshake (the banner, or the
    # answer to the `version` it sent when the banner was missed) comes before `help`.
    # (Events are the unit's, not the handshake's: a client that connects as the firmware
    # starts sees its start-up cue and LED before the first reply.)
    replies = [x for x in lines if not x.startswith("# event ")]
    assert replies[0].startswith("// help "), lines[:3]
    assert not [x for x in lines if x.startswith("# launcher ") or "firmware=" in x]
    # 1: `bogus` answered error; no "no answer" however long the replies were.
    assert proc.returncode == 1, proc.stderr
    assert "no answer" not in proc.stderr
    finals = [x for x in lines if x.startswith(("ok", "error"))]
    assert finals[-6].startswith("ok commands=")
    commands = int(finals[-6].split("=")[1])
    rows = lines[:lines.index(finals[-6])]
    assert commands > 10 and len([x for x in rows if x.startswith("// ")]) == commands
    assert finals[-5] == "ok inventory=12"
    assert finals[-3].startswith("ok events=")
    assert finals[-2].startswith("ok state=")
    assert finals[-1].startswith("error unknown")
