"""Start-up CPU of ``launcher run`` (exec to READY) and ``launcher --help``, by ``python -c pass``.

The budget (issue 23) is a ratio on the same machine, measured in the same run: ``launcher
run`` at most 5x the CPU of ``python -c pass``, ``launcher --help`` at most 2x. CPU is user +
system time of the child process and of every process it waited for (the ``aplay`` probe,
say), from ``os.wait4``; wall time on a shared machine is noise. The rounds alternate the
three commands, so that a busy spell of the machine falls on all of them; each round's
``python -c pass`` is the median of three runs.

``launcher run`` starts as systemd starts it: the installed script, ``NOTIFY_SOCKET`` pointing
at a socket of ours, a config with the console on a pty (as on a UART), a state file (written
by a first, uncounted start, so every counted start reads one back) and no ``[audio]`` table:
the stock ``backend = "auto"``, which probes the sound device first. It is timed twice a
round: with a sound device that opens (ALSA's ``null`` PCM as the default device, as a Pi
with its amplifier has one), and with this machine's own sound set-up (here: none, so
``auto`` falls through simpleaudio and aplay to silence). On a machine that is not a Pi,
the config names the mock pin factory and ``launcher run`` runs the simulated board. When
READY arrives the process is killed at once: what it spends after READY is not start-up.

Before timing, ``launcher/`` and ``hal/`` are byte-compiled, as ``systemd/install.sh`` does
on the Pi (the service cannot write ``__pycache__`` there, so without it every start would
compile every module again); the benchmark checks that every module has fresh bytecode.

Checks that it measured what it says: READY came while the process was alive; the start
log names the luck seed of our config (the launcher read our file); the config it read has
``audio.backend = "auto"``; with the device, no fallback line (``auto`` found its first
backend working); ``--help`` printed the usage.

Also a summary of ``python -X importtime`` for both commands (microseconds of wall time,
with importtime's own overhead: for finding what to trim, not for the budget).

    python -m bench.startup [--runs 7] [--no-importtime] [--root DIR]

It prints one JSON object.
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import json
import os
import re
import select
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import tty
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("launcher", "hal")
SEED = 4242  # in our config; the start log's "luck seed 4242" shows the launcher read it
READY_TIMEOUT = 60.0
# s: the end after the stop signal (SIGKILL ends it at once; SIGTERM is the firmware's own
# clean stop, a fraction of a second): a process still running then has hung, and says so.
STOP_TIMEOUT = 60.0
PASS_EACH = 3  # python -c pass runs in each round
VARIANTS = {"device": "a sound device that opens (ALSA null PCM)",
            "as_is": "this machine's own sound set-up"}


def launcher_cmd(root: Path | None = None) -> list[str]:
    """The installed ``launcher`` script beside this Python, as systemd runs it."""
    script = Path(sys.executable).with_name("launcher")
    if root is None and script.exists():
        return [str(script)]
    return [sys.executable, "-m", "launcher.cli.main"]


def base_env(root: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "ALSA_CONFIG_PATH",
                        "GPIOZERO_PIN_FACTORY", "PYTHONPROFILEIMPORTTIME")}
    if root is not None:
        env["PYTHONPATH"] = str(root)
    return env


def compile_bytecode(root: Path) -> dict[str, Any]:
    """Byte-compile the packages as install.sh does; check that every module has fresh bytecode."""
    for package in PACKAGES:
        compileall.compile_dir(str(root / package), quiet=1)
    stale = []
    sources = [p for package in PACKAGES for p in (root / package).rglob("*.py")]
    for source in sources:
        cached = Path(importlib.util.cache_from_source(str(source)))
        if not cached.exists() or cached.stat().st_mtime < source.stat().st_mtime:
            stale.append(str(source.relative_to(root)))
    if stale:
        raise RuntimeError(f"no fresh bytecode for {', '.join(stale[:5])}")
    return {"modules": len(sources), "stale": 0}


def _cpu_ms(usage: Any) -> float:
    return (usage.ru_utime + usage.ru_stime) * 1e3


def cpu_of(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int, str]:
    """CPU ms of running ``cmd`` to its exit, its exit code and its output."""
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    out = proc.stdout.read()
    proc.stdout.close()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return _cpu_ms(usage), proc.returncode, out.decode(errors="replace")


class Unit:
    """A folder with what ``launcher run`` needs: config, state file, pty, notify socket."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="bench-startup-"))
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.state = self.folder / "state.json"
        self.config = self.folder / "launcher.toml"
        # No [audio] table: the stock backend ("auto"). Off a Pi the config names the mock
        # pins, so the simulated board runs with this config's port and state file.
        from hal.pins import pi_model

        board = "" if pi_model() else '[board]\npin_factory = "mock"\n\n'
        self.config.write_text(f'{board}[console]\nport = "{os.ttyname(self.slave)}"\n\n'
                               f'[state]\npath = "{self.state}"\n\n[luck]\nseed = {SEED}\n')
        self.alsa = self.folder / "alsa.conf"
        self.alsa.write_text("pcm.!default { type null }\nctl.!default { type null }\n")
        self.notify_path = str(self.folder / "notify.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.notify_path)

    def env(self, variant: str, root: Path | None) -> dict[str, str]:
        env = {**base_env(root), "NOTIFY_SOCKET": self.notify_path}
        if variant == "device":
            env["ALSA_CONFIG_PATH"] = str(self.alsa)
        return env

    def drain(self) -> None:
        """Forget datagrams and console output left from the last start."""
        self.sock.setblocking(False)
        try:
            while True:
                self.sock.recv(4096)
        except BlockingIOError:
            pass
        finally:
            self.sock.setblocking(True)
        os.set_blocking(self.master, False)
        try:
            while os.read(self.master, 65536):
                pass
        except BlockingIOError:
            pass
        finally:
            os.set_blocking(self.master, True)

    def wait_ready(self, proc: subprocess.Popen[bytes]) -> str:
        """Block until READY=1 arrives; its STATUS text."""
        deadline = time.monotonic() + READY_TIMEOUT
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or proc.poll() is not None:
                raise RuntimeError("launcher run never sent READY=1 "
                                   f"(exit code {proc.poll()})")
            self.sock.settimeout(min(left, 1.0))
            try:
                message = self.sock.recv(4096).decode(errors="replace")
            except TimeoutError:
                continue
            if "READY=1" in message.split("\n"):
                if proc.poll() is not None:
                    raise RuntimeError("READY=1 came from a process that has exited")
                return next((line.removeprefix("STATUS=") for line in message.split("\n")
                             if line.startswith("STATUS=")), "")

    def close(self) -> None:
        self.sock.close()
        os.close(self.master)
        os.close(self.slave)
        shutil.rmtree(self.folder, ignore_errors=True)


def start(unit: Unit, variant: str, root: Path | None, importtime: bool = False,
          stop: signal.Signals = signal.SIGKILL) -> dict[str, Any]:
    """One ``launcher run`` from exec to READY; then ``stop`` (SIGKILL: at once)."""
    unit.drain()
    log = unit.folder / "launcher.log"
    cmd = [*_importtime_cmd(root)] if importtime else launcher_cmd(root)
    cmd += ["run", "--config", str(unit.config)]
    t0 = time.perf_counter()
    with log.open("wb") as err:
        proc = subprocess.Popen(cmd, env=unit.env(variant, root), cwd=root or ROOT,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    try:
        status = unit.wait_ready(proc)
        wall = time.perf_counter() - t0
        proc.send_signal(stop)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    usage = _reap(proc, log)
    text = log.read_text(errors="replace")
    return {"cpu_ms": _cpu_ms(usage), "wall_s": wall, "status": status, "log": text,
            "exit": proc.returncode}


def _reap(proc: subprocess.Popen[bytes], log: Path) -> Any:
    """``proc``'s resource use once it has ended (at most ``STOP_TIMEOUT`` s after its stop
    signal); reaped. One still running then is killed, and the start fails naming the hang,
    with the end of its log (a firmware that never stopped hung CI's run of a6d4e45 here)."""
    fd = os.pidfd_open(proc.pid)
    try:
        ended, _, _ = select.select([fd], [], [], STOP_TIMEOUT)
    finally:
        os.close(fd)
    if not ended:
        proc.kill()
        os.wait4(proc.pid, 0)
        raise RuntimeError(f"launcher run did not end within {STOP_TIMEOUT:g} s of its stop "
                           f"signal (killed); its log:\n{log.read_text(errors='replace')[-2000:]}")
    _, code, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(code)
    return usage


def check_start(result: dict[str, Any], variant: str) -> dict[str, str]:
    """What the start log says, checked: our config was read; with a device, no fallback."""
    log = result["log"].splitlines()
    started = next((line for line in log if "started on" in line), None)
    if started is None or f"luck seed {SEED}" not in started:
        raise RuntimeError(f"the launcher did not start on our config:\n{result['log'][-2000:]}")
    audio = [line.split(": ", 1)[1] for line in log if ": audio: " in line]
    if variant == "device" and audio:
        raise RuntimeError(f"with a sound device, auto still fell back: {audio}")
    board = started.split("started on ", 1)[1].split(",", 1)[0]
    return {"board": board, "audio": "; ".join(audio) or "auto: the first backend opened the "
                                                        "device (no fallback line)"}


def read_importtime(text: str) -> list[tuple[int, int, int, str]]:
    """``-X importtime`` lines as (self µs, cumulative µs, depth, module)."""
    rows = []
    for line in text.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( +)(\S+)", line)
        if m:
            rows.append((int(m.group(1)), int(m.group(2)), (len(m.group(3)) - 1) // 2,
                         m.group(4)))
    return rows


def summarize(rows: list[tuple[int, int, int, str]], n: int = 10) -> dict[str, Any]:
    """Totals and the heaviest imports: top-level by cumulative time, any level by self time."""
    top = [(name, cum / 1e3) for _, cum, depth, name in rows if depth == 0]
    return {
        "modules": len(rows),
        "total_ms": sum(ms for _, ms in top),
        "top_cumulative": sorted(top, key=lambda r: -r[1])[:n],
        "top_self": sorted(((name, s / 1e3) for s, _, _, name in rows), key=lambda r: -r[1])[:n],
    }


def importtimes(unit: Unit, root: Path | None) -> dict[str, Any]:
    """``python -X importtime`` of ``launcher --help`` and of ``launcher run`` up to READY."""
    proc = subprocess.run([*_importtime_cmd(root), "--help"], env=base_env(root),
                          cwd=root or ROOT, capture_output=True, text=True, check=True)
    help_rows = read_importtime(proc.stderr)
    run = start(unit, "device", root, importtime=True)
    run_rows = read_importtime(run["log"])
    if not run_rows or not help_rows:
        raise RuntimeError("python -X importtime wrote no import lines")
    return {"launcher --help": summarize(help_rows), "launcher run": summarize(run_rows)}


def _importtime_cmd(root: Path | None) -> list[str]:
    """The launcher command under ``python -X importtime``."""
    cmd = launcher_cmd(root)
    return [sys.executable, "-X", "importtime", *(cmd[1:] if cmd[0] == sys.executable else cmd)]


@contextmanager
def unit_ready(root: Path | None) -> Iterator[Unit]:
    """A unit whose state file exists: one start stopped as systemd stops it (SIGTERM)."""
    unit = Unit()
    try:
        first = start(unit, "device", root, stop=signal.SIGTERM)
        if first["exit"] != 0 or not unit.state.exists():
            raise RuntimeError(f"the first start left no state file (exit {first['exit']}):\n"
                               + first["log"][-2000:])
        yield unit
    finally:
        unit.close()


def measure(runs: int, root: Path | None = None, importtime: bool = True) -> dict[str, Any]:
    """``runs`` rounds of: python -c pass, launcher --help, launcher run (both variants)."""
    if runs < 1:
        raise ValueError("runs: at least 1")
    from launcher.core import config

    where = root or ROOT
    result: dict[str, Any] = {"runs": runs, "bytecode": compile_bytecode(where),
                              "python": sys.executable, "launcher": launcher_cmd(root)}
    env = base_env(root)
    passes, helps, help_wall = [], [], []
    starts: dict[str, list[dict[str, Any]]] = {v: [] for v in VARIANTS}
    with unit_ready(root) as unit:
        read = config.load(unit.config)
        if read.audio.backend != "auto" or read.state_path is None:
            raise RuntimeError("the benchmark's config is not the stock audio with a state file")
        result["config"] = {"audio.backend": read.audio.backend, "state": "on",
                            "console": "pty"}
        expected_help = None
        for _ in range(runs):
            # The round's baseline: the median of a few, its noise is a large share of it.
            passes.append(statistics.median(cpu_of([sys.executable, "-c", "pass"], env, where)[0]
                                            for _ in range(PASS_EACH)))
            t0 = time.perf_counter()
            ms, code, out = cpu_of([*launcher_cmd(root), "--help"], env, where)
            help_wall.append(time.perf_counter() - t0)
            if code != 0 or not out.startswith("usage: launcher"):
                raise RuntimeError(f"launcher --help: exit {code}, printed {out[:200]!r}")
            if expected_help not in (None, out):
                raise RuntimeError("launcher --help printed another text than the round before")
            expected_help = out
            helps.append(ms)
            for variant in VARIANTS:
                starts[variant].append(start(unit, variant, root))
        result["importtime"] = importtimes(unit, root) if importtime else None
    result["python_pass_ms"] = passes
    result["help_ms"] = helps
    result["help_wall_s"] = help_wall
    result["help_ratio"] = [h / p for h, p in zip(helps, passes, strict=True)]
    result["variants"] = {}
    for variant, label in VARIANTS.items():
        found = [check_start(s, variant) for s in starts[variant]]
        cpu = [s["cpu_ms"] for s in starts[variant]]
        result["variants"][variant] = {
            "label": label, "board": found[-1]["board"], "audio": found[-1]["audio"],
            "status": starts[variant][-1]["status"], "cpu_ms": cpu,
            "wall_s": [s["wall_s"] for s in starts[variant]],
            "ratio": [c / p for c, p in zip(cpu, passes, strict=True)],
        }
    return result


def spread(xs: list[float], fmt: str = "{:.1f}") -> str:
    return " / ".join(fmt.format(v) for v in (min(xs), statistics.median(xs), max(xs)))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=7, help="rounds (each figure: min/median/max)")
    p.add_argument("--no-importtime", action="store_true", help="skip the importtime summary")
    p.add_argument("--root", type=Path, metavar="DIR",
                   help="time another checkout's launcher (e.g. the code before a change)")
    a = p.parse_args(argv)
    if a.runs < 1:
        p.error("--runs: at least 1")
    result = measure(a.runs, a.root, not a.no_importtime)
    for x in result["variants"].values():
        print(f"launcher run -> READY, {x['label']}: CPU {spread(x['cpu_ms'])} ms, "
              f"{spread(x['ratio'], '{:.2f}')}x python -c pass ({x['audio']})", file=sys.stderr)
    print(f"launcher --help: CPU {spread(result['help_ms'])} ms, "
          f"{spread(result['help_ratio'], '{:.2f}')}x; python -c pass: CPU "
          f"{spread(result['python_pass_ms'])} ms (min / median / max of {a.runs})",
          file=sys.stderr)
    json.dump(result, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
