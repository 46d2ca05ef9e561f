"""``launcher run`` as a process: start-up to READY, idle CPU and wake-ups, resident memory.

The service is started as systemd would start it (``NOTIFY_SOCKET`` pointing at a socket
of ours, ``WATCHDOG_USEC`` as ``WatchdogSec=10`` in the unit sets it), on the simulated
board (no Raspberry Pi here), with its console on a pty, a state file, and the null audio
backend. Then:

- start-up: from just before ``exec`` to the ``READY=1`` datagram;
- idle CPU, awake and then asleep (the console's ``sleep``): user + system time of the
  process over the window, from ``/proc/PID/stat``; wake-ups: context switches of all its
  threads over the window (``/proc/PID/task/*/status``), next to the watchdog pings that
  arrived (the only wake-ups systemd asks for); and, when ``strace`` is installed, a
  second asleep window under ``strace -c -f`` to show which system calls they are;
- resident memory (``VmRSS``) after start and after 5,000 and 10,000 ``press`` commands
  over the console, sent as fast as the console answers.

    python -m bench.service [--idle 60] [--presses 10000] [--no-strace]

It prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import tty
from pathlib import Path
from typing import Any

WATCHDOG_SEC = 10  # systemd/launcher.service: WatchdogSec=10
LAUNCHER = [sys.executable, "-m", "launcher.cli.main"]


ROOT: Path | None = None  # --root: time another checkout (the code before a change)


def _launcher_cmd() -> list[str]:
    """The installed ``launcher`` script beside this Python, as systemd runs it."""
    script = Path(sys.executable).with_name("launcher")
    return [str(script)] if script.exists() and ROOT is None else LAUNCHER


def _env(**extra: str) -> dict[str, str]:
    env = {**os.environ, **extra}
    env.pop("WATCHDOG_PID", None)
    if ROOT is not None:
        env["PYTHONPATH"] = str(ROOT)
    return env


class Pty:
    """The bench's end of the console: write lines, read replies."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.name = os.ttyname(self.slave)
        self._buf = b""

    def ask(self, line: str, timeout: float = 5.0) -> str:
        """Send ``line`` and return its final reply (``ok ...`` or ``error ...``)."""
        os.write(self.master, line.encode() + b"\r\n")
        deadline = time.monotonic() + timeout
        while True:
            for reply in self._lines():
                if reply.startswith(("ok", "error")):
                    return reply
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no reply to {line!r}")
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                self._buf += os.read(self.master, 65536)

    def drain(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                os.read(self.master, 65536)
        self._buf = b""

    def _lines(self) -> list[str]:
        *done, self._buf = self._buf.split(b"\r\n")
        return [d.decode("utf-8", "replace") for d in done]

    def close(self) -> None:
        os.close(self.master)
        os.close(self.slave)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def context_switches(pid: int) -> int:
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            text = (task / "status").read_text()
        except OSError:
            continue  # a thread that ended meanwhile
        total += sum(int(n) for n in re.findall(r"ctxt_switches:\s+(\d+)", text))
    return total


def rss_mib(pid: int) -> float:
    m = re.search(r"VmRSS:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
    return int(m.group(1)) / 1024 if m else float("nan")


STOP = b"\0bench-stop"


class Notify:
    """Our end of NOTIFY_SOCKET, read at once as systemd reads it: a thread takes every
    datagram as it comes (a unix datagram queue holds only ~10: the launcher's next
    ``sendto`` would block until someone reads)."""

    def __init__(self, folder: Path) -> None:
        self.path = str(folder / "notify.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self._got: list[tuple[float, str]] = []
        self._seen = 0
        self._cond = threading.Condition()
        self._reader = threading.Thread(target=self._read, name="notify", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            data = self.sock.recv(4096)
            if data == STOP:
                return
            with self._cond:
                self._got.append((time.perf_counter(), data.decode(errors="replace")))
                self._cond.notify_all()

    def wait_for(self, key: str, timeout: float) -> float:
        """The arrival time of the first message with ``key``."""
        with self._cond:
            found = self._cond.wait_for(
                lambda: next((t for t, m in self._got if key in m), None), timeout)
        if found is None:
            raise TimeoutError(f"no {key} within {timeout} s")
        return found

    def count(self, key: str) -> int:
        """Messages with ``key`` since the last count."""
        with self._cond:
            new, self._seen = self._got[self._seen:], len(self._got)
        return sum(key in m for _, m in new)

    def close(self) -> None:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as poke:
            poke.sendto(STOP, self.path)  # a blocked recv does not notice a close
        self._reader.join(5)
        self.sock.close()
        os.unlink(self.path)


def config_text(port: str, state: Path) -> str:
    # The mock pins by name: off a Pi, `launcher run` on "auto" pins refuses to start.
    return (f'[board]\npin_factory = "mock"\n\n[console]\nport = "{port}"\n\n'
            f'[state]\npath = "{state}"\n\n'
            '[audio]\nbackend = "null"\n\n[luck]\nseed = 1\n\n'
            # Console presses come faster than a hand's: none is ignored as mashing.
            '[timing]\nmash_guard_ms = 0\n')


def idle_window(pid: int, notify: Notify, seconds: float) -> dict[str, float]:
    notify.count("WATCHDOG=1")  # forget what came before the window
    cpu0, sw0, t0 = cpu_seconds(pid), context_switches(pid), time.perf_counter()
    time.sleep(seconds)
    cpu1, sw1, t1 = cpu_seconds(pid), context_switches(pid), time.perf_counter()
    return {"seconds": t1 - t0, "cpu_percent": 100 * (cpu1 - cpu0) / (t1 - t0),
            "wakeups": sw1 - sw0, "watchdog_pings": notify.count("WATCHDOG=1")}


def strace_window(pid: int, seconds: float) -> dict[str, Any] | None:
    """System calls of every thread over ``seconds`` (None without strace)."""
    strace = shutil.which("strace")
    if strace is None:
        return None
    out = Path(tempfile.mkstemp(prefix="bench-strace-")[1])
    proc = subprocess.Popen([strace, "-c", "-f", "-p", str(pid), "-o", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(seconds)
    proc.send_signal(signal.SIGINT)
    proc.wait(10)
    calls: dict[str, int] = {}
    for line in out.read_text().splitlines():
        parts = line.split()
        # % time, seconds, usecs/call, calls, [errors], syscall
        if len(parts) >= 5 and parts[0][0].isdigit() and parts[-1] != "total":
            calls[parts[-1]] = int(parts[3])
    out.unlink()
    if not calls:
        return None  # strace could not attach (no ptrace here)
    return {"seconds": seconds, "calls": calls, "total": sum(calls.values())}


def run(idle: float, presses: int, use_strace: bool = True) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="bench-service-"))
    pty = Pty()
    notify = Notify(folder)
    cfg = folder / "launcher.toml"
    cfg.write_text(config_text(pty.name, folder / "state.json"))
    env = _env(NOTIFY_SOCKET=notify.path, WATCHDOG_USEC=str(WATCHDOG_SEC * 1_000_000))
    result: dict[str, Any] = {"idle_seconds": idle, "presses": presses}
    t0 = time.perf_counter()
    log = folder / "launcher.log"
    proc = subprocess.Popen([*_launcher_cmd(), "run", "--config", str(cfg)], env=env, cwd=ROOT,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=log.open("wb"))
    try:
        result["start_to_ready_s"] = notify.wait_for("READY=1", 30) - t0
        pty.drain(1.0)  # the banner; and let the start settle
        result["rss_start_mib"] = rss_mib(proc.pid)
        result["awake"] = idle_window(proc.pid, notify, idle)
        if not pty.ask("sleep").startswith("ok"):
            raise RuntimeError("the console refused `sleep`")
        pty.drain(1.0)
        result["asleep"] = idle_window(proc.pid, notify, idle)
        result["asleep_strace"] = strace_window(proc.pid, idle) if use_strace else None
        pty.ask("wake")
        pty.ask(f"cards {presses + 100}")
        pty.ask(f"load {presses + 100}")
        half = presses // 2
        t = time.perf_counter()
        for i in range(presses):
            pty.ask("press")
            if i + 1 == half:
                result["rss_half_mib"] = rss_mib(proc.pid)
        result["press_commands_per_s"] = presses / (time.perf_counter() - t)
        pty.drain(1.0)
        result["rss_end_mib"] = rss_mib(proc.pid)
        result["status_after"] = pty.ask("status")
    except (TimeoutError, RuntimeError) as exc:
        tail = log.read_text(errors="replace").splitlines()[-15:]
        raise RuntimeError(f"{exc}; the launcher's log ends:\n" + "\n".join(tail)) from exc
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            result["exit_code"] = proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            result["exit_code"] = proc.wait()
        pty.close()
        notify.close()
        shutil.rmtree(folder, ignore_errors=True)
    return result


def startup_samples(n: int) -> list[float]:
    """Seconds of ``launcher run`` from exec to READY, ``n`` times (the process then stopped)."""
    out = []
    for _ in range(n):
        folder = Path(tempfile.mkdtemp(prefix="bench-start-"))
        notify = Notify(folder)
        cfg = folder / "launcher.toml"
        cfg.write_text(config_text("", folder / "state.json"))
        env = _env(NOTIFY_SOCKET=notify.path)
        t0 = time.perf_counter()
        proc = subprocess.Popen([*_launcher_cmd(), "run", "--config", str(cfg)], env=env, cwd=ROOT,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            out.append(notify.wait_for("READY=1", 30) - t0)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(20)
            notify.close()
            shutil.rmtree(folder, ignore_errors=True)
    return out


def help_samples(n: int) -> list[float]:
    """Seconds of ``launcher --help``, exec to exit, ``n`` times."""
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run([*_launcher_cmd(), "--help"], stdout=subprocess.DEVNULL, check=True,
                       env=_env(), cwd=ROOT)
        out.append(time.perf_counter() - t0)
    return out


def top_imports(args: list[str], n: int = 8) -> list[tuple[str, float]]:
    """The ``n`` slowest top-level imports (cumulative ms) of ``launcher ARGS``."""
    return top_imports_of("import sys; from launcher.cli.main import main; "
                          f"sys.argv = ['launcher', *{args!r}]; main()", n)


def top_imports_of(code: str, n: int = 8) -> list[tuple[str, float]]:
    """The ``n`` slowest top-level imports (cumulative ms) of running ``code``."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", code],
                          capture_output=True, text=True, env=_env(), cwd=ROOT)
    rows = []
    for line in proc.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if m and len(m.group(3)) == 1:  # top level: imported by the program itself
            rows.append((m.group(4), int(m.group(2)) / 1000))
    return sorted(rows, key=lambda r: -r[1])[:n]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--idle", type=float, default=60.0, help="seconds of each idle window")
    p.add_argument("--presses", type=int, default=10_000)
    p.add_argument("--no-strace", action="store_true")
    p.add_argument("--root", metavar="DIR", type=Path,
                   help="run the launcher of another checkout (e.g. before a change)")
    a = p.parse_args(argv)
    global ROOT
    ROOT = a.root
    json.dump(run(a.idle, a.presses, not a.no_strace), sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
