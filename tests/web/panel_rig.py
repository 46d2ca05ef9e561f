"""The web panel's rig: `launcher run --simulated --web` as a real process, its console over
the pty it prints, and Debian's chromium driven by Playwright.

Shared by tests/web/test_browser_panel.py and tests/web/screenshots.py. Nothing here sleeps:
each wait is on the line or the page state it needs, with a deadline that only fails a hang.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import select
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import serial

LAUNCHER = [sys.executable, "-m", "launcher.cli.main"]
DEADLINE = 60.0  # s: generous for a loaded machine; a pass takes a few seconds
CHROMIUM = Path("/usr/bin/chromium")  # Debian's (apt package chromium, .ci/setup installs it)
# Headless, with nothing that reaches the network or a profile of the machine's own.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
WAIT_MS = DEADLINE * 1000  # Playwright's waits are in ms
# The simulated button, held and let go from the unit's console (a hand on the hardware).
HOLD, RELEASE = "button hold", "button release"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}

# The roller's lease at its most (as tests/firmware/test_run_simulated.py has it): the unit
# runs on the wall clock, and a starved reactor mid-shot would fault it, which is not what
# the panel's tests are about.
STARVABLE = "[motor]\nlease_ms = 1000\n"


def missing() -> str | None:
    """Why the browser cannot be driven here, or None when it can."""
    if not CHROMIUM.exists():
        return f"Debian's chromium is not installed ({CHROMIUM}; .ci/setup installs it)"
    if importlib.util.find_spec("playwright") is None:
        return "Playwright for Python is not installed (the dev extra has it)"
    return None


def _lines_within(stream: IO[bytes], count: int, seconds: float) -> list[str]:
    """The first ``count`` lines of a child's pipe, or a failure once ``seconds`` passed.

    Read from the descriptor itself: a buffered reader could hold the second line while
    select() says there is nothing to read."""
    buf, deadline = b"", time.monotonic() + seconds  # a deadline for a hang, not a pause
    while buf.count(b"\n") < count:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([stream], [], [], max(0.0, left))
        assert ready, f"not {count} lines within {seconds}s: {buf!r}"
        data = os.read(stream.fileno(), 4096)
        assert data, f"the pipe closed after {buf!r}"
        buf += data
    return buf.decode("utf-8").splitlines()[:count]


class ConsoleLines:
    """The test's end of the unit's pty: a thread collects the lines it writes."""

    def __init__(self, path: str) -> None:
        self.port = serial.Serial(path, timeout=None, exclusive=True)
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._collect, name="panel-console", daemon=True)
        self._thread.start()

    def _collect(self) -> None:
        buf = b""
        while not self._stopping:
            try:
                data = self.port.read(max(1, self.port.in_waiting))
            except (OSError, serial.SerialException):
                return
            buf += data
            *whole, buf = buf.split(b"\n")
            if whole:
                with self._changed:
                    self.lines.extend(x.decode("utf-8", "replace").strip() for x in whole)
                    self._changed.notify_all()

    def send(self, line: str) -> int:
        """Sends ``line``; the index of the first line that can be its answer."""
        with self._changed:
            mark = len(self.lines)
        self.port.write(line.encode("utf-8") + b"\r\n")
        return mark

    def wait_for(self, pattern: str, since: int = 0) -> str:
        """The first line from ``since`` on that matches ``pattern``."""
        rx = re.compile(pattern)

        def found() -> str | None:
            return next((x for x in self.lines[since:] if rx.search(x)), None)

        with self._changed:
            assert self._changed.wait_for(lambda: found() is not None, DEADLINE), (
                f"no line matching {pattern!r} within {DEADLINE}s: {self.lines[since:]}")
            return found()  # type: ignore[return-value]

    def ask(self, line: str) -> str:
        """Sends ``line`` and returns its final line (`ok ...` or `error ...`)."""
        return self.wait_for(r"^(ok|error)\b", self.send(line))

    def close(self) -> None:
        self._stopping = True
        self.port.cancel_read()
        self._thread.join(DEADLINE)
        self.port.close()


class Unit:
    """A running `launcher run --simulated --web 127.0.0.1:0`: its web address and console."""

    def __init__(self, proc: subprocess.Popen[bytes], url: str, console: ConsoleLines) -> None:
        self.proc, self.url, self.console = proc, url, console


@contextlib.contextmanager
def simulated_unit(workdir: Path, seed: int = 3) -> Iterator[Unit]:
    """Starts the unit with its state in ``workdir``; stops it with SIGTERM at the end."""
    cfg = workdir / "starvable.toml"
    cfg.write_text(STARVABLE)
    alsa = workdir / "alsa.conf"
    alsa.write_text("pcm.!default { type null }\n")
    env = {**os.environ, "ALSA_CONFIG_PATH": str(alsa), "XDG_STATE_HOME": str(workdir / "xdg")}
    # Its log goes to a file: a pipe nobody drains would fill up and stall the unit.
    log = workdir / "unit.log"
    with log.open("w") as err:
        proc = subprocess.Popen([*LAUNCHER, "run", "--simulated", "--seed", str(seed),
                                 "--config", str(cfg), "--web", "127.0.0.1:0"],
                                env=env, stdout=subprocess.PIPE, stderr=err)
    assert proc.stdout is not None
    console = None
    try:
        try:
            pty, web = (x.strip() for x in _lines_within(proc.stdout, 2, DEADLINE))
        except AssertionError as exc:
            raise AssertionError(_failed(proc, log, str(exc))) from None
        assert pty.startswith("/dev/"), _failed(proc, log, f"not a pty's path: {pty!r}")
        url = re.fullmatch(r"web: (http://127\.0\.0\.1:\d+/)", web)
        assert url, _failed(proc, log, f"not the web line: {web!r}")
        console = ConsoleLines(pty)
        yield Unit(proc, url.group(1), console)
    finally:
        if console is not None:
            console.close()
        proc.terminate()  # SIGTERM, as systemd stops the unit
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=30)
        if proc.poll() is None:  # a hang: kill it, so that the test ends and says so
            proc.kill()
            proc.wait()
        proc.stdout.close()


def _failed(proc: subprocess.Popen[bytes], log: Path, what: str) -> str:
    ended = "running" if proc.poll() is None else f"ended with {proc.returncode}"
    return f"{what}; the unit is {ended}; its log ends: {log.read_text()[-2000:]}"


@contextlib.contextmanager
def browser(profile: Path, viewport: dict[str, int]) -> Iterator[Any]:
    """A fresh headless chromium (its user data in ``profile``): its browser context."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS,
            viewport=viewport)
        try:
            yield context
        finally:
            context.close()


def pair_by_holding_the_button(page: Any, unit: Unit) -> None:
    """Pairs the page as a person does: Pair, then the launcher's button held 3 s."""
    from playwright.sync_api import expect

    expect(page.locator("#pairing")).to_be_visible(timeout=WAIT_MS)
    expect(page.locator("#panel")).to_be_hidden()
    with page.expect_response(lambda r: r.url.endswith("/api/pair")
                              and r.request.method == "POST") as opened:
        page.click("#pair")
    assert opened.value.status == 201
    expect(page.locator("#pair-say")).to_contain_text("hold the launcher's button",
                                                       timeout=WAIT_MS)
    # The console's way, for a person at the serial port: the window's own id.
    expect(page.locator("#pair-line")).to_have_text(f"web pair {opened.value.json()['id']}")
    expect(page.locator("#panel")).to_be_hidden()  # nothing until the button says so
    mark = unit.console.send(HOLD)
    unit.console.wait_for(r"^# event pair_confirmed\b", mark)  # the hold's 3 s have passed
    assert unit.console.ask(RELEASE).startswith("ok"), unit.console.lines
    expect(page.locator("#panel")).to_be_visible(timeout=WAIT_MS)
    expect(page.locator("#pairing")).to_be_hidden()
