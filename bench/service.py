"""``launcher run`` as a process: start-up to READY, idle CPU and wake-ups, resident memory.

The service is started as systemd would start it (``NOTIFY_SOCKET`` pointing at a socket
of ours, ``WATCHDOG_USEC`` as ``WatchdogSec=10`` in the unit sets it), on the simulated
board (no Raspberry Pi here), with its console on a pty, a state file, and the stock audio
setting (``auto``: here it probes for a sound device, finds none, and stays silent). Then:

- start-up: from just before ``exec`` to the ``READY=1`` datagram;
- idle CPU, awake and then asleep (the console's ``sleep``): user + system time of the
  process over the window, from ``/proc/PID/stat``; wake-ups: context switches of all its
  threads over the window (``/proc/PID/task/*/status``), next to the watchdog pings that
  arrived (the only wake-ups systemd asks for); and, when ``strace`` is installed, a
  second asleep window under ``strace -c -f`` to show which system calls they are;
- resident memory (``VmRSS``) after a warm-up of ``--warmup`` presses and after half and
  all of ``--presses`` more, each an accepted ``press`` over the console: the cartridge
  and the launcher's inventory are topped up in steps the console accepts (at most 200),
  a press waits until the launcher is ready again, and the run fails unless the
  firmware's own counters (``stats``: presses, shots, cards_shot) show every press sent
  accepted and every shot's drawn cards shot (the ``shot`` events: ``cards`` = ``asked``).

Its luck is the bench's own (``BENCH_LUCK``): about one press in twenty shoots, one or two
cards, so that the 11,000 presses take minutes of the simulator's roller time, not hours.

With ``--web`` the same run has the web panel on (``[web] enabled = true`` on 127.0.0.1, at a
free port the bench names: the config takes no port 0), as a Pi's service starts it after
READY. Before any window the panel must have printed its ``web:`` line and answer ``GET /``
200 and ``GET /api/status`` 401, so the figures are of a running server. After the asleep
windows a client paired through the console (``POST /api/pair``, then ``web pair ID``)
holds ``/api/events`` open with its token, and one more asleep window is measured: the cost
of a phone left open on the page.

    python -m bench.service [--idle 60] [--warmup 1000] [--presses 10000] [--no-strace] [--web]

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
from collections.abc import Callable
from pathlib import Path
from typing import Any

WATCHDOG_SEC = 10  # systemd/launcher.service: WatchdogSec=10
STOP_WAIT = 20.0  # s: the service's end after SIGTERM (a clean stop takes a fraction of one)
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
        self._got: list[str] = []  # lines read and not yet taken

    def ask(self, line: str, timeout: float = 5.0,
            events: Callable[[str], None] | None = None) -> str:
        """Send ``line`` and return its final reply (``ok ...`` or ``error ...``); the event
        lines that come first go to ``events``."""
        os.write(self.master, line.encode() + b"\r\n")
        deadline = time.monotonic() + timeout
        while True:
            self._read_lines()
            while self._got:
                reply = self._got.pop(0)
                if reply.startswith(("ok", "error")):
                    return reply
                if events is not None:
                    events(reply)
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
        self._got.clear()

    def _read_lines(self) -> None:
        *done, self._buf = self._buf.split(b"\r\n")
        self._got.extend(d.decode("utf-8", "replace") for d in done)

    def close(self) -> None:
        os.close(self.master)
        os.close(self.slave)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def context_switches(pid: int) -> int:
    """The times the process's threads went to sleep and were woken (voluntary context
    switches): its wake-ups. A thread taken off the CPU while it runs (the shared machine's
    scheduler) is no wake-up and is not counted."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            text = (task / "status").read_text()
        except OSError:
            continue  # a thread that ended meanwhile
        total += sum(int(n) for n in re.findall(r"^voluntary_ctxt_switches:\s+(\d+)", text,
                                                 re.MULTILINE))
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


# About one press in twenty shoots (never more than 30 dry presses in a row), 1 or 2 cards.
BENCH_LUCK = ("hazard = [" + ", ".join(["0.04"] * 30) + ", 1.0]\n"
              "sizes = [1, 2]\nweights = [1, 1]\n")
LOAD_STEP = 200  # the console's cap on `cards N` and `load N`


def config_text(port: str, state: Path, mash_guard_ms: int = 0,
                web_port: int | None = None) -> str:
    """The stock config but the console's port, the state file, a seed and the bench's luck
    (the audio backend is left as shipped: ``auto``), and the web panel on ``web_port`` of
    127.0.0.1 if given. The mock pins by name: off a Pi, `launcher run` on "auto" pins
    refuses to start."""
    web = ("" if web_port is None else
           f'\n[web]\nenabled = true\nhost = "{WEB_HOST}"\nport = {web_port}\n')
    return (f'[board]\npin_factory = "mock"\n\n[console]\nport = "{port}"\n\n'
            f'[state]\npath = "{state}"\n\n'
            f'[luck]\nseed = 1\n\n[luck.mild]\n{BENCH_LUCK}\n[luck.wild]\n{BENCH_LUCK}\n'
            # Console presses come faster than a hand's: none is ignored as mashing.
            f'[timing]\nmash_guard_ms = {mash_guard_ms}\n{web}')


WEB_HOST = "127.0.0.1"


def free_port() -> int:
    """A port no one listens on now (the config's web.port is 1..65535: no 0 for the
    kernel to choose, so the bench asks it here)."""
    with socket.socket() as s:
        s.bind((WEB_HOST, 0))
        return int(s.getsockname()[1])


def web_line(out: Any, timeout: float) -> str:
    """The service's ``web: URL`` line on its stdout."""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([out], [], [], left)
        if not ready:
            break
        line = out.readline().decode(errors="replace")
        if not line:
            raise RuntimeError("the service closed its stdout before its `web:` line")
        if line.startswith("web: "):
            return line.split(None, 1)[1].strip()
    raise TimeoutError(f"no `web:` line within {timeout} s")


class Panel:
    """The bench as a phone on the web panel at ``port``."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.origin = f"http://{WEB_HOST}:{port}"

    def ask(self, method: str, path: str, token: str | None = None) -> tuple[int, bytes]:
        import http.client

        c = http.client.HTTPConnection(WEB_HOST, self.port, timeout=10)
        headers = {"Origin": self.origin}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        try:
            c.request(method, path, headers=headers)
            r = c.getresponse()
            return r.status, r.read()
        finally:
            c.close()

    def check(self) -> dict[str, int]:
        """The page is served and the API refuses a stranger: a running server."""
        got = {"GET /": self.ask("GET", "/")[0],
               "GET /api/status": self.ask("GET", "/api/status")[0]}
        if got != {"GET /": 200, "GET /api/status": 401}:
            raise RuntimeError(f"the web panel is not serving: {got}")
        return got

    def pair(self, pty: Pty) -> str:
        """A token: a pairing window opened by the page, confirmed on the serial console."""
        status, body = self.ask("POST", "/api/pair")
        if status != 201:
            raise RuntimeError(f"POST /api/pair: {status} {body[:200]!r}")
        pid = json.loads(body)["id"]
        if not (reply := pty.ask(f"web pair {pid}")).startswith("ok"):
            raise RuntimeError(f"web pair {pid}: {reply}")
        status, body = self.ask("GET", f"/api/pair/{pid}")
        if status != 200:
            raise RuntimeError(f"GET /api/pair/{pid}: {status} {body[:200]!r}")
        return str(json.loads(body)["token"])


class LiveClient:
    """One client on ``/api/events`` with a token, its lines read by a thread of ours as a
    page's would be."""

    def __init__(self, panel: Panel, token: str) -> None:
        import http.client

        self.conn = http.client.HTTPConnection(WEB_HOST, panel.port, timeout=None)
        self.conn.request("GET", "/api/events", headers={"Authorization": f"Bearer {token}"})
        self.resp = self.conn.getresponse()
        if self.resp.status != 200:
            raise RuntimeError(f"GET /api/events: {self.resp.status}")
        self.events = self.pings = 0
        self._first = threading.Event()
        self._reader = threading.Thread(target=self._read, name="live-client", daemon=True)
        self._reader.start()
        if not self._first.wait(10):
            raise TimeoutError("the live stream sent no first status within 10 s")

    def _read(self) -> None:
        try:
            for line in iter(self.resp.readline, b""):
                if line.startswith(b"event: "):
                    self.events += 1
                    self._first.set()
                elif line.startswith(b": ping"):
                    self.pings += 1
        except (OSError, ValueError):
            pass  # closed by close()

    def counts(self) -> dict[str, int]:
        return {"events": self.events, "pings": self.pings}

    def close(self) -> None:
        sock = self.conn.sock
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)
        self._reader.join(5)
        self.conn.close()


def fields(reply: str) -> dict[str, str]:
    """The ``key=value`` words of a console reply."""
    return dict(w.split("=", 1) for w in reply.split() if "=" in w)


class Presses:
    """Accepted presses over the console, the cartridge and inventory kept topped up."""

    def __init__(self, pty: Pty) -> None:
        self.pty = pty
        self.sent = 0
        self.shots: list[tuple[int, int]] = []  # (cards, asked) of each shot event
        self.fault_lines: list[str] = []
        self.lapses: list[str] = []  # the shots a lapsed lease ended (see _lapsed)

    def counters(self) -> dict[str, int]:
        got = fields(self.pty.ask("stats"))
        return {k: int(got.get(k, 0)) for k in ("presses", "shots", "cards_shot")}

    def top_up(self) -> None:
        inv = fields(self.pty.ask("inventory"))
        if int(inv.get("cartridge", 0)) < LOAD_STEP:
            self.pty.ask(f"cards {LOAD_STEP}")
        if self.pty.ask(f"load {LOAD_STEP}").split()[0] != "ok":
            raise RuntimeError("the console refused `load`")

    def press(self, n: int) -> None:
        for _ in range(n):
            if self.sent % 50 == 0:
                self.top_up()  # at most 100 cards go in 50 presses: never runs out
            reply = self.pty.ask("press", events=self._event)
            self.sent += 1
            state = fields(reply).get("state")
            deadline = time.monotonic() + 30
            while state != "ready":
                if state == "fault" and self._lapsed():
                    state = fields(self.pty.ask("clear", events=self._event)).get("state")
                    continue
                if state != "shooting" or time.monotonic() > deadline:
                    raise RuntimeError(f"press {self.sent}: {reply!r}, then state {state}")
                time.sleep(0.005)
                state = fields(self.pty.ask("status", events=self._event)).get("state")

    def _lapsed(self) -> bool:
        """A fault from a run whose lease lapsed: the reactor was starved longer than the
        lease (a shared machine's scheduler), and the safety stop ended the shot. Counted
        and cleared; any other fault ends the run."""
        if not self.fault_lines or "lapsed" not in self.fault_lines[-1]:
            return False
        self.lapses.append(self.fault_lines.pop())
        return True

    def _event(self, line: str) -> None:
        if line.startswith("# event shot "):
            f = fields(line)
            self.shots.append((int(f["cards"]), int(f["asked"])))
        elif line.startswith("# event fault "):
            self.fault_lines.append(line)


def check_counters(sent: int, before: dict[str, int], after: dict[str, int],
                   shots: list[tuple[int, int]], lapses: int = 0,
                   largest: int = 2) -> dict[str, int]:
    """What the firmware counted over ``sent`` presses; raises unless every press was
    accepted and every shot shot the cards it drew (``lapses`` shots, ended by the safety
    stop, count as shots with up to ``largest`` cards each)."""
    done = {k: after[k] - before[k] for k in after}
    if done["presses"] != sent:
        raise RuntimeError(f"{sent} presses sent, the firmware accepted {done['presses']}")
    short = [s for s in shots if s[0] != s[1]]
    cards = sum(c for c, _ in shots)
    if (done["shots"] != len(shots) + lapses or short
            or not cards <= done["cards_shot"] <= cards + largest * lapses):
        raise RuntimeError(f"shots: counted {done}, events {len(shots)} with {cards} cards, "
                           f"{lapses} ended by a lapse, short {short[:5]}")
    if done["shots"] == 0:
        raise RuntimeError(f"{sent} presses and not one shot: the luck is not the bench's")
    return done


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


def run(idle: float, presses: int, use_strace: bool = True, warmup: int = 1000,
        mash_guard_ms: int = 0, web: bool = False) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="bench-service-"))
    pty = Pty()
    notify = Notify(folder)
    cfg = folder / "launcher.toml"
    port = free_port() if web else None
    cfg.write_text(config_text(pty.name, folder / "state.json", mash_guard_ms, port))
    env = _env(NOTIFY_SOCKET=notify.path, WATCHDOG_USEC=str(WATCHDOG_SEC * 1_000_000))
    result: dict[str, Any] = {"idle_seconds": idle, "presses": presses, "warmup": warmup}
    args = ["run", "--config", str(cfg)]
    t0 = time.perf_counter()
    log = folder / "launcher.log"
    proc = subprocess.Popen([*_launcher_cmd(), *args], env=env, cwd=ROOT,
                            stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE if web else subprocess.DEVNULL,
                            stderr=log.open("wb"))
    panel = Panel(port) if port is not None else None
    client: LiveClient | None = None
    hung: list[str] | None = None  # the log's end, if the stop hung
    try:
        ready = notify.wait_for("READY=1", 30)
        result["start_to_ready_s"] = ready - t0
        if panel is not None:
            url = web_line(proc.stdout, 30)
            # The panel starts on the owner's thread before its reactor runs (runner.py).
            ready_to_web = time.perf_counter() - ready
            if url != f"{panel.origin}/":
                raise RuntimeError(f"the panel is on {url}, not on the config's {panel.origin}")
            result["web"] = {"url": url, "ready_to_web_s": ready_to_web,
                             "checked": panel.check()}
        pty.drain(1.0)  # the banner; and let the start settle
        result["rss_start_mib"] = rss_mib(proc.pid)
        result["awake"] = idle_window(proc.pid, notify, idle)
        token = panel.pair(pty) if panel is not None else None  # before the unit sleeps
        if not pty.ask("sleep").startswith("ok"):
            raise RuntimeError("the console refused `sleep`")
        pty.drain(1.0)
        result["asleep"] = idle_window(proc.pid, notify, idle)
        result["asleep_strace"] = strace_window(proc.pid, idle) if use_strace else None
        if panel is not None and token is not None:
            client = LiveClient(panel, token)
            time.sleep(1.0)  # let the stream's start settle, as the pty's above
            seen = client.counts()
            result["asleep_client"] = idle_window(proc.pid, notify, idle)
            got = client.counts()
            result["asleep_client"]["stream"] = {k: got[k] - seen[k] for k in got}
            result["web"]["client_events"] = got["events"]
            state = fields(pty.ask("status")).get("state")
            if state != "asleep":
                raise RuntimeError(f"the window with a live client was not asleep: {state}")
            client.close()
            client = None
        pty.ask("wake")
        pty.drain(0.5)
        p = Presses(pty)
        p.press(warmup)
        before = p.counters()
        p.shots.clear()
        p.lapses.clear()
        result["rss_warm_mib"] = rss_mib(proc.pid)
        t = time.perf_counter()
        p.press(presses // 2)
        result["rss_half_mib"] = rss_mib(proc.pid)
        p.press(presses - presses // 2)
        result["press_commands_per_s"] = presses / (time.perf_counter() - t)
        result["counted"] = check_counters(presses, before, p.counters(), p.shots,
                                           len(p.lapses))
        result["lapses"] = len(p.lapses)
        pty.drain(1.0)
        result["rss_end_mib"] = rss_mib(proc.pid)
        result["status_after"] = pty.ask("status")
        audio = [ln for ln in log.read_text(errors="replace").splitlines() if "audio" in ln]
        result["audio_log"] = audio[:3]  # what `auto` found (no sound device here)
    except (TimeoutError, RuntimeError) as exc:
        tail = log.read_text(errors="replace").splitlines()[-15:]
        raise RuntimeError(f"{exc}; the launcher's log ends:\n" + "\n".join(tail)) from exc
    finally:
        if client is not None:
            client.close()
        proc.send_signal(signal.SIGTERM)
        try:
            result["exit_code"] = proc.wait(STOP_WAIT)
        except subprocess.TimeoutExpired:
            proc.kill()
            result["exit_code"] = proc.wait()
            hung = log.read_text(errors="replace").splitlines()[-15:]  # before it is removed
        if proc.stdout is not None:
            proc.stdout.close()  # the web's line was read; nothing else comes on it
        pty.close()
        notify.close()
        shutil.rmtree(folder, ignore_errors=True)
    if hung is not None:  # what the run measured stands; a stop that hung is a fault
        raise RuntimeError(f"the service did not end within {STOP_WAIT:g} s of SIGTERM "
                           "(killed); the launcher's log ends:\n" + "\n".join(hung))
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--idle", type=float, default=60.0, help="seconds of each idle window")
    p.add_argument("--presses", type=int, default=10_000)
    p.add_argument("--warmup", type=int, default=1000, help="presses before the first RSS")
    p.add_argument("--mash-guard-ms", type=int, default=0,
                   help="the launcher's mash guard (the self-check's test sets one, so that "
                        "presses are ignored and the run must fail)")
    p.add_argument("--no-strace", action="store_true")
    p.add_argument("--web", action="store_true",
                   help="the same run with the web panel on ([web] enabled, 127.0.0.1), and "
                        "one more asleep window with a paired client on its live stream")
    p.add_argument("--root", metavar="DIR", type=Path,
                   help="run the launcher of another checkout (e.g. before a change)")
    a = p.parse_args(argv)
    global ROOT
    ROOT = a.root
    json.dump(run(a.idle, a.presses, not a.no_strace, a.warmup, a.mash_guard_ms, a.web),
              sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
