"""A real web server in a thread over the real firmware on the simulated board, its reactor a
RealReactor on a thread of its own, as `launcher run --simulated --web` has them; and small
stand-ins of the pairing part and the token store (their contract in docs/web.md), so that
the server's tests decide pairing and tokens themselves. The real ones have tests of their
own (tests/firmware/test_pairing.py, test_tokens.py) and run behind the server end to end
in test_server_run.py and the browser test.

Nothing here sleeps: a request waits for its answer with a socket timeout that only fails a
hang, and a test waits on the event it needs.
"""

from __future__ import annotations

import http.client
import json
import random
import secrets
import sys
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from hal.sim import SimLauncher
from launcher.core import config
from launcher.core.reactor import RealReactor
from launcher.firmware.app import build_app
from launcher.firmware.console import Console
from launcher.firmware.registry import E_STATE, E_UNAVAILABLE, CommandError
from launcher.firmware.state import StateStore
from launcher.sim.rig import CueLog, sim_build
from launcher.sim.unit import console_extras, fill_cartridge
from launcher.web.bridge import Bridge
from launcher.web.server import Limits, WebServer

WAIT = 30.0  # s: a socket or the reactor answering later than this is a hang

# The web tests send bench/web_fuzz.py's requests (one generator, which `python -m bench.web`
# sends too): bench/ is not installed, so the checkout goes first on the path, and a
# ``bench`` found before as tests/bench (a folder without ``__init__``) is forgotten, as
# tests/conftest.py's ``bench`` fixture does for one test.
_REPO = str(Path(__file__).resolve().parents[2])
if _REPO not in sys.path:
    sys.path.insert(0, _REPO)
if getattr(sys.modules.get("bench"), "__file__", None) is None:
    sys.modules.pop("bench", None)


class FakePairing:
    """The pairing part's contract (docs/web.md), without the button: tests confirm."""

    WINDOW = 30.0

    def __init__(self, limit: int = 3) -> None:
        self.limit = limit  # windows it opens, then refuses (rate)
        self.opened = 0
        self.states: dict[str, str] = {}
        self.stopped = False  # the unit stopped for a restart: every window refused

    def open(self) -> str:
        if self.stopped:
            raise CommandError(E_UNAVAILABLE, "the launcher is stopped for a restart")
        if self.opened >= self.limit:
            raise CommandError(E_STATE, f"at most {self.limit} pairings a minute")
        self.opened += 1
        pid = secrets.token_urlsafe(16)  # a secret: not from a seeded generator
        self.states[pid] = "pending"
        return pid

    def state(self, pid: str) -> str:
        return self.states.get(pid, "unknown")

    def confirm(self, pid: str) -> None:
        if self.states.get(pid) != "pending":
            raise CommandError(E_STATE, "not pending")
        self.states[pid] = "confirmed"

    def take(self, pid: str) -> bool:
        if self.states.get(pid) != "confirmed":
            return False
        self.states[pid] = "taken"
        return True


class FakeTokens:
    """The token store's contract (docs/web.md) in memory."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}
        self.checks = 0

    def issue(self) -> tuple[str, str]:
        tid, token = secrets.token_hex(4), secrets.token_urlsafe(32)
        self.ids[token] = tid
        return tid, token

    def check(self, token: str) -> str | None:
        self.checks += 1
        return self.ids.get(token)


class Answer:
    """One HTTP answer: status, headers, body (and its JSON, if it is JSON)."""

    def __init__(self, status: int, headers: http.client.HTTPMessage, body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    @property
    def json(self) -> Any:
        return json.loads(self.body)

    def __repr__(self) -> str:
        return f"Answer({self.status}, {self.body[:200]!r})"


class WebUnit:
    """The firmware, its serial console (as the runner makes it: the running config's
    owner), a bridge and a server on 127.0.0.1 and a free port."""

    def __init__(self, tmp: Path, *, limits: Limits | None = None, max_streams: int = 8,
                 static: Path | None = None, tls: tuple[Path, Path] | None = None,
                 timeout: float = 5.0, now: Callable[[], float] | None = None) -> None:
        s = config.load()
        # The roller's lease at its longest: a loaded machine starving the reactor for more
        # than 100 ms mid-shot would fault the unit (tests/firmware/test_run_simulated.py).
        self.settings = replace(s, motor=replace(s.motor, lease=1.0))
        self.reactor = RealReactor()
        self.sim = SimLauncher(self.reactor, self.settings.pins,
                               build=sim_build(self.settings.rotator))
        self.app = build_app(self.settings, self.reactor, random.Random(1), self.sim.board,
                             cues=CueLog(), store=StateStore(None))
        self.config_path = tmp / "launcher.toml"
        self.serial_lines: list[str] = []
        self.serial = Console(self.app, **console_extras(self.sim),
                              raw_config=config.default_raw(), config_path=self.config_path,
                              write=self.serial_lines.append, seed=1)
        self.app.start()
        fill_cartridge(self.app, self.sim)
        self.thread = threading.Thread(target=self.reactor.run, name="reactor", daemon=True)
        self.thread.start()
        self.pairing = FakePairing()
        self.tokens = FakeTokens()
        self.bridge = Bridge(self.app, self.serial.config, extras=console_extras(self.sim),
                             pairing=self.pairing, timeout=timeout)
        kw: dict[str, Any] = {"max_streams": max_streams, "limits": limits, "tls": tls,
                              "now": now}
        if static is not None:
            kw["static"] = static
        self.server = WebServer(self.bridge, self.tokens, "127.0.0.1", 0, **kw)
        try:
            self.server.start()
        except BaseException:
            self._stop_firmware()
            raise
        self.port = self.server.port
        self.origin = f"http://127.0.0.1:{self.port}"
        self.token = self.tokens.issue()[1]

    def on_reactor(self, fn: Callable[[], Any]) -> Any:
        """Run ``fn`` on the reactor thread and wait for its answer."""
        done = threading.Event()
        box: list[Any] = []

        def call() -> None:
            try:
                box.append(fn())
            finally:
                done.set()

        self.reactor.post(call)
        assert done.wait(WAIT), "the reactor did not answer"
        assert box, "the call raised on the reactor (logged)"
        return box[0]

    def serial_says(self, line: str) -> str:
        """A line on the serial console, on the reactor thread; its final line."""
        return self.on_reactor(lambda: self.serial.handle_line(line)[-1])

    def connect(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=WAIT)

    def ask(self, method: str, path: str, body: Any = None, *, token: str | bool | None = True,
            headers: dict[str, str] | None = None, origin: bool = True,
            conn: http.client.HTTPConnection | None = None) -> Answer:
        """One request: with this unit's token (``token=True``), another, or none (None);
        a POST with the page's own Origin unless ``origin`` is False."""
        h = {"Origin": self.origin} if method == "POST" and origin else {}
        if token is True:
            token = self.token
        if token:
            h["Authorization"] = f"Bearer {token}"
        h.update(headers or {})
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        own = conn is None
        c = conn or self.connect()
        try:
            c.request(method, path, body=data, headers=h)
            r = c.getresponse()
            return Answer(r.status, r.headers, r.read())
        finally:
            if own:
                c.close()

    def command(self, line: str, token: str | bool | None = True) -> Answer:
        return self.ask("POST", "/api/command", {"line": line}, token=token)

    def close(self) -> None:
        self.server.stop()
        self._stop_firmware()

    def _stop_firmware(self) -> None:
        self.on_reactor(self.bridge.close)
        self.on_reactor(self.serial.close)
        self.reactor.stop()
        self.thread.join()
        self.app.stop()
        self.sim.board.close()
