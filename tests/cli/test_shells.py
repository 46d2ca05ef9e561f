"""The two shells as processes: `launcher play` fed lines, `launcher run` under a fake systemd."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

LAUNCHER = [sys.executable, "-m", "launcher.cli.main"]
ENV = {**os.environ, "ALSA_CONFIG_PATH": "", "GPIOZERO_PIN_FACTORY": ""}


def null_alsa(tmp_path: Path) -> dict[str, str]:
    conf = tmp_path / "alsa.conf"
    conf.write_text("pcm.!default { type null }\n")
    return {**ENV, "ALSA_CONFIG_PATH": str(conf)}


def test_play_reads_console_lines_and_says_it_is_simulated(tmp_path):
    script = ("status\npress\nwait 0.5\nlid full\nwait 2\nside\nlid close\nnot-a-command\n"
              "quit\nstatus\n")
    proc = subprocess.run([*LAUNCHER, "play", "--seed", "5", "--state", str(tmp_path / "s.json")],
                          input=script, capture_output=True, text=True, timeout=60,
                          env=null_alsa(tmp_path), check=False)
    assert proc.returncode == 1, proc.stderr  # a line answered `error` (README: exit status)
    out = proc.stdout.splitlines()
    assert out[0].startswith("# SIMULATED launcher")
    finals = [line for line in out if line.startswith(("ok", "error"))]
    assert len(finals) == 9  # exactly one final line per command, and none after `quit`
    assert finals[0].startswith("ok state=ready side=mild")
    assert "simulated=true" in finals[0]
    assert finals[-2].startswith("error unknown") and finals[-1] == "ok bye"
    assert "# event flip side=wild" in out
    assert json.loads((tmp_path / "s.json").read_text())["side"] == "wild"


def test_run_tells_systemd_it_is_ready_and_stops_cleanly_on_sigterm(tmp_path):
    notify = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(notify))
    sock.settimeout(30)
    cfg = tmp_path / "launcher.toml"
    state = tmp_path / "state.json"
    cfg.write_text(f'[board]\npin_factory = "mock"\n[state]\npath = "{state}"\n'
                   '[console]\nport = ""\n[luck]\nseed = 3\n')
    env = {**null_alsa(tmp_path), "NOTIFY_SOCKET": str(notify),
           "WATCHDOG_USEC": "2000000", "WATCHDOG_PID": ""}
    proc = subprocess.Popen([*LAUNCHER, "run", "--config", str(cfg)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        messages = []
        while not any("WATCHDOG=1" in m for m in messages):
            messages.append(sock.recv(4096).decode())
        assert any(m.startswith("READY=1") for m in messages)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        sock.close()
    assert proc.returncode == 0, err
    assert "SIMULATED" in err
    assert json.loads(state.read_text())["version"] == 2


def test_run_refuses_a_bad_config_with_exit_2(tmp_path):
    cfg = tmp_path / "bad.toml"
    cfg.write_text("[motor]\nspeed = 3\n")
    proc = subprocess.run([*LAUNCHER, "run", "--config", str(cfg)], capture_output=True,
                          text=True, timeout=60, env=ENV, check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "config error: motor.speed = 3: must be within 0.1..1"


def test_play_wait_lines_reuse_one_timer(monkeypatch, tmp_path):
    """`wait S` once registered a timer per line and never let it go (16 MB per 10,000)."""
    import io

    from launcher.cli import play as play_module
    from launcher.core import config as cfg

    made = []

    class Recorded(play_module.Playground):
        def __init__(self, *args, **kw):
            super().__init__(*args, **kw)
            made.append(self)

    monkeypatch.setattr(play_module, "Playground", Recorded)
    settings = cfg.settings_from_dict(cfg.merge(cfg.default_raw(), {
        "audio": {"backend": "null"}, "state": {"path": str(tmp_path / "s.json")}}))

    def live_timers_after(waits: int) -> int:
        out = io.StringIO()
        assert play_module.run_play(settings, 1, lines=True,
                                    stdin=io.StringIO("wait 0.0001\n" * waits), stdout=out) == 0
        assert out.getvalue().count("ok waiting=0.0001") == waits
        return made[-1].reactor.live_timers

    assert live_timers_after(5) == live_timers_after(200)
