"""`launcher run --simulated --web HOST:PORT` as a real process: its `web:` line after the
pty's, the panel refusing a stranger, pairing confirmed on the serial console, the status
with the token, and a clean stop; the service's own path starting the panel from [web];
and the option's own checks."""

from __future__ import annotations

import argparse
import http.client
import json
import os
import select
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import IO

import pytest
import serial

from launcher.cli.options import host_port

LAUNCHER = [sys.executable, "-m", "launcher.cli.main"]
DEADLINE = 60.0  # s: generous for a loaded machine; a pass takes a few seconds


def test_host_port() -> None:
    assert host_port("127.0.0.1:8080") == ("127.0.0.1", 8080)
    assert host_port("0.0.0.0:0") == ("0.0.0.0", 0)
    assert host_port("[::1]:80") == ("::1", 80)
    assert host_port("launcher.local:8443") == ("launcher.local", 8443)
    for bad in ("8080", ":8080", "host:", "host:http", "host:65536", "host:-1"):
        with pytest.raises(argparse.ArgumentTypeError, match="not HOST:PORT"):
            host_port(bad)


def test_a_bad_web_option_is_one_line(tmp_path: Path) -> None:
    proc = subprocess.run([*LAUNCHER, "run", "--simulated", "--web", "8080"],
                          capture_output=True, text=True, timeout=DEADLINE)
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith("argument --web: not HOST:PORT (a port 0..65535): "
                                        "'8080'"), proc.stderr


def _env(tmp_path: Path) -> dict[str, str]:
    alsa = tmp_path / "alsa.conf"
    alsa.write_text("pcm.!default { type null }\n")
    return {**os.environ, "ALSA_CONFIG_PATH": str(alsa),
            "XDG_STATE_HOME": str(tmp_path / "xdg")}


def _line(stream: IO[str]) -> str:
    ready, _, _ = select.select([stream], [], [], DEADLINE)
    assert ready, f"no line within {DEADLINE}s"
    return stream.readline()


def _stopped(proc: subprocess.Popen[str]) -> str:
    """Stop ``proc`` as systemd does (SIGTERM); its stderr."""
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.communicate(timeout=30)[1]
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise


def _console(port: str, line: str) -> str:
    """One line on the unit's serial console; its final line."""
    with serial.Serial(port, 115200, timeout=DEADLINE) as s:
        s.write(f"{line}\r\n".encode())
        while True:
            got = s.readline().decode().strip()
            assert got, "the console did not answer"
            if got.startswith(("ok", "error")):
                return got


def test_run_simulated_with_the_web(tmp_path: Path) -> None:
    cfg = tmp_path / "unit.toml"
    cfg.write_text("[motor]\nlease_ms = 1000\n")  # as tests/firmware/test_run_simulated.py
    proc = subprocess.Popen([*LAUNCHER, "run", "--simulated", "--seed", "3", "--config",
                             str(cfg), "--web", "127.0.0.1:0"], env=_env(tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    try:
        pty = _line(proc.stdout).strip()
        assert pty.startswith("/dev/"), pty
        web = _line(proc.stdout).strip()
        assert web.startswith("web: http://127.0.0.1:") and web.endswith("/"), web
        port = int(web.rsplit(":", 1)[1].rstrip("/"))
        origin = f"http://127.0.0.1:{port}"

        def ask(method: str, path: str, token: str | None = None) -> tuple[int, dict]:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=DEADLINE)
            h = {"Origin": origin} | ({"Authorization": f"Bearer {token}"} if token else {})
            c.request(method, path, headers=h)
            r = c.getresponse()
            out = r.status, json.loads(r.read())
            c.close()
            return out

        assert ask("GET", "/api/status")[0] == 401
        status, opened = ask("POST", "/api/pair")
        assert status == 201, opened
        assert ask("GET", f"/api/pair/{opened['id']}") == (202, {"state": "pending"})
        assert _console(pty, f"web pair {opened['id']}").startswith("ok")
        status, got = ask("GET", f"/api/pair/{opened['id']}")
        assert status == 200, got
        status, state = ask("GET", "/api/status", got["token"])
        assert status == 200 and state["simulated"] is True and state["state"], state
    finally:
        err = _stopped(proc)
    assert proc.returncode == 0, err
    assert "Traceback" not in err, err


def test_an_address_in_use_stops_the_run(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run([*LAUNCHER, "run", "--simulated", "--web", f"127.0.0.1:{port}"],
                              env=_env(tmp_path), capture_output=True, text=True,
                              timeout=DEADLINE)
    assert proc.returncode == 1, proc.stderr
    assert f"error: web: cannot listen on 127.0.0.1:{port}: " in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_service_starts_the_panel_when_the_config_enables_it(tmp_path: Path) -> None:
    # The service's own path (as a Pi runs it), on the mock pins: [web] enabled, no --web.
    port = _free_port()  # free a moment ago: [web] port takes no 0
    cfg = tmp_path / "launcher.toml"
    cfg.write_text(f'[board]\npin_factory = "mock"\n[state]\npath = "{tmp_path / "s.json"}"\n'
                   '[console]\nport = ""\n[luck]\nseed = 3\n[motor]\nlease_ms = 1000\n'
                   f'[web]\nenabled = true\nhost = "127.0.0.1"\nport = {port}\n')
    env = {**_env(tmp_path), "GPIOZERO_PIN_FACTORY": ""}
    proc = subprocess.Popen([*LAUNCHER, "run", "--config", str(cfg)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    try:
        assert _line(proc.stdout).strip() == f"web: http://127.0.0.1:{port}/"
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=DEADLINE)
        c.request("GET", "/api/status")
        r = c.getresponse()
        assert r.status == 401 and json.loads(r.read())["error"] == "token"
        c.close()
    finally:
        err = _stopped(proc)
    assert proc.returncode == 0, err


def test_the_panel_loads_beside_the_running_reactor_and_its_failure_stops_the_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """start_web returns at once: the reactor runs while the server's imports load (seconds
    on a Pi Zero: no press or watchdog ping may wait for them). A start that then fails
    stops the reactor, and the stop raises why."""
    import threading

    from launcher.cli import run
    from launcher.core.errors import LauncherError
    from launcher.core.reactor import RealReactor

    loading, release = threading.Event(), threading.Event()

    def slow_and_failing(*args: object) -> object:
        loading.set()
        assert release.wait(DEADLINE)
        raise LauncherError("web: cannot listen on 127.0.0.1:1: taken")

    monkeypatch.setattr(run, "_web_server", slow_and_failing)
    reactor = RealReactor()

    class App:
        pass

    app = App()
    app.reactor = reactor  # type: ignore[attr-defined]
    stop = run.start_web(app, object(), object(), "127.0.0.1", 1)  # type: ignore[arg-type]
    assert loading.wait(DEADLINE)
    ran = threading.Event()
    reactor.post(ran.set)
    reactor_thread = threading.Thread(target=reactor.run)
    reactor_thread.start()
    assert ran.wait(DEADLINE)  # the reactor runs while the panel loads
    release.set()
    reactor_thread.join(DEADLINE)  # the failed start stopped it
    assert not reactor_thread.is_alive()
    with pytest.raises(LauncherError, match="cannot listen"):
        stop()
