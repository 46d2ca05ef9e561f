"""The web panel's gates and its cost to the interlocks: what docs/web.md quotes.

``python -m bench.web [--requests N] [--clients N] [--tries N] [--out FILE]``

Security, on a web server over the firmware on a real reactor thread (the interlock
harness, launcher/sim/interlock.py): every route of the server's own router that needs a
token, asked without one (401 each); every state-changing route asked with a token from
another origin (403 each); N seeded random requests (bench/web_fuzz.py, the generator the
web tests send) counted by status, with the answers 500 and the bodies carrying a
traceback (both must be none). Load: bench.interlock's figures (the lid stop with the
reactor free, the lease's lapse with the reactor asleep and spinning; its code, not a copy)
on another such unit with its web server, first with no client, then with N live streams
reading ``/api/events`` and N clients polling ``/api/status`` from a process of their own
(bench/web_clients.py).

Exits 1 when a route answers without a token, a cross-origin change is not refused, or a
fuzzed request is answered 500, with a traceback or with an error that is not JSON; the
figures are kept (``--out``) all the same. With ``--out`` the run is kept in that file,
and ``docs/blocks.py`` renders docs/web.md's figures from it (``markdown``). Progress goes
to standard error; a full run takes about two minutes on a 2-core machine.
"""

from __future__ import annotations

import argparse
import http.client
import json
import logging
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.interlock import summary
from bench.keep import RESULTS as KEPT
from bench.keep import keep, run_facts
from bench.web_fuzz import WAIT, concrete, fuzz, routes

RESULTS = KEPT / "web.json"
COMMAND = "python -m bench.web --out docs/results/web.json"
SEED = 4343
EVIL = "http://evil.example"


def say(text: str) -> None:
    """Progress, on standard error."""
    print(f"bench.web: {text}", file=sys.stderr, flush=True)


class Panel:
    """A web server over an interlock ``Unit``'s launcher, as ``launcher run --web`` starts
    one: a console's running configuration, a Bridge with the launcher's own pairing, a
    token store in ``folder``, on 127.0.0.1 at a free port; one token issued."""

    def __init__(self, unit: Any, folder: Path, *, streams: int = 8,
                 fails: int | None = None) -> None:
        from launcher.core import config
        from launcher.firmware.console import Console
        from launcher.web.bridge import Bridge
        from launcher.web.server import Limits, WebServer
        from launcher.web.tokens import TokenStore

        self.unit = unit
        raw = config.default_raw()
        # The unit's own pins (the harness leaves out the read-backs it has no circuit for),
        # or the running configuration would differ from the launcher's in its pins, which
        # only a restart changes: every `config set` would fail.
        raw["pins"] = {k: -1 if v is None else v for k, v in asdict(unit.settings.pins).items()}
        self.console = unit.on_reactor(lambda: Console(unit.app, raw_config=raw,
                                                       config_path=folder / "launcher.toml",
                                                       seed=1))
        self.bridge = Bridge(unit.app, self.console.config, pairing=unit.app.pairing)
        unit.on_reactor(self.bridge.attach)
        self.tokens = TokenStore(folder / "web-tokens.json", days=30)
        limits = Limits() if fails is None else Limits(fails=fails)
        self.server = WebServer(self.bridge, self.tokens, "127.0.0.1", 0, max_streams=streams,
                                limits=limits)
        self.server.start()
        self.port = self.server.port
        self.origin = f"http://127.0.0.1:{self.port}"
        self.token = self.tokens.issue()[1]

    def connect(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=WAIT)

    def ask(self, method: str, path: str, headers: dict[str, str]) -> int:
        c = self.connect()
        try:
            c.request(method, path, headers=headers)
            r = c.getresponse()
            r.read()
            return r.status
        finally:
            c.close()

    def close(self) -> None:
        self.server.stop()
        self.unit.on_reactor(self.bridge.close)
        self.unit.on_reactor(self.console.close)


class Logged(logging.Handler):
    """The errors the server logged (aiohttp's and the web's own loggers) while the fuzz ran:
    none is sent to a client, but each is a request the server's code did not expect."""

    NAMES = ("aiohttp", "launcher.web")

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        exc = record.exc_info[1] if record.exc_info else None
        self.seen.append(f"{record.name}: {record.getMessage()}"
                         + (f" ({type(exc).__name__}: {exc})" if exc else ""))

    def __enter__(self) -> Logged:
        self._was: list[tuple[logging.Logger, int, bool]] = []
        for name in self.NAMES:
            log = logging.getLogger(name)
            self._was.append((log, log.level, log.propagate))
            log.addHandler(self)
            log.setLevel(logging.ERROR)
            log.propagate = False  # counted here, not printed among the progress
        return self

    def __exit__(self, *exc: object) -> None:
        for log, level, propagate in self._was:  # as they were: a test runs this in-process
            log.removeHandler(self)
            log.setLevel(level)
            log.propagate = propagate


def security(requests: int, folder: Path) -> dict[str, Any]:
    from launcher.sim.interlock import Unit
    from launcher.web.server import PUBLIC

    unit = Unit()
    try:
        # Failed tokens limited only far beyond what the fuzz sends, so that its requests
        # reach the routes (tests/web/test_server_security.py tests the limit itself).
        panel = Panel(unit, folder, fails=10**9)
        try:
            every = routes(panel.server)
            closed = [(m, r) for m, r in every if (m, r) not in PUBLIC]
            refused = sum(panel.ask(m, concrete(r), {}) == 401 for m, r in closed)
            changes = [(m, r) for m, r in every if m not in ("GET", "HEAD", "OPTIONS")]
            bearer = {"Authorization": f"Bearer {panel.token}", "Origin": EVIL}
            crossed = sum(panel.ask(m, concrete(r), bearer) == 403 for m, r in changes)
            say(f"{refused} of {len(closed)} routes refused without a token, {crossed} of "
                f"{len(changes)} changes from {EVIL} refused; {requests:,} fuzzed requests")
            with Logged() as logged:
                t = fuzz(panel, requests, SEED, lambda i: say(f"fuzz: {i:,} of {requests:,}"))
        finally:
            panel.close()
    finally:
        unit.close()
    return {"routes": [f"{m} {r}" for m, r in every],
            "public": sorted(f"{m} {r}" for m, r in PUBLIC),
            "closed": len(closed), "refused_401": refused,
            "changes": [f"{m} {r}" for m, r in changes], "refused_403": crossed,
            "fuzz": {"requests": requests, "seed": SEED,
                     "statuses": {str(k): v for k, v in sorted(t.statuses.items())},
                     "raw": t.raw, "unanswered": t.unanswered, "errors": t.errors,
                     "tracebacks": t.tracebacks, "findings": len(t.findings),
                     "first_findings": t.findings[:10], "logged": len(logged.seen),
                     "logged_kinds": _kinds(logged.seen)}}


def _kinds(lines: list[str]) -> dict[str, int]:
    """Logged errors by their text (the same error from many requests counted once each)."""
    out: dict[str, int] = {}
    for line in lines:
        out[line] = out.get(line, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def interlocks(unit: Any, tries: int) -> dict[str, Any]:
    """bench.interlock's figures of the reactor free (lid) and blocked (lease) on ``unit``."""
    from launcher.sim.interlock import lapses, lid_stops

    stalls = unit.stalls
    out = {"lid_stop_free": summary(lid_stops(unit, None, tries))}
    for how in ("sleep", "spin"):
        out[f"lapse_{how}"] = summary(lapses(unit, how, tries))
    out["stalls"] = unit.stalls - stalls
    return out


def load(tries: int, clients: int, poll_s: float, folder: Path) -> dict[str, Any]:
    from launcher.firmware.runner import tune_switch_interval
    from launcher.sim.interlock import Unit

    before = sys.getswitchinterval()
    tune_switch_interval()  # as `launcher run` does
    out: dict[str, Any] = {"tries": tries, "clients": clients, "poll_s": poll_s,
                           "max_streams": clients,
                           "switch_interval_ms": sys.getswitchinterval() * 1e3}
    try:
        unit = Unit()
        try:
            out["lease_ms"] = unit.settings.motor.lease * 1e3
            panel = Panel(unit, folder, streams=clients)
            try:
                say(f"load: {tries} tries of each figure, the web server up, no client")
                out["idle"] = interlocks(unit, tries)
                say(f"load: the same with {clients} live streams and {clients} pollers")
                out["live"], out["seen"] = _with_clients(unit, panel, tries, clients, poll_s)
            finally:
                panel.close()
        finally:
            unit.close()
    finally:
        sys.setswitchinterval(before)
    return out


def _with_clients(unit: Any, panel: Panel, tries: int, clients: int,
                  poll_s: float) -> tuple[dict[str, Any], dict[str, Any]]:
    cmd = [sys.executable, "-m", "bench.web_clients", str(panel.port), panel.token,
           "--clients", str(clients), "--poll-s", str(poll_s)]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parents[1])
    assert proc.stdin is not None and proc.stdout is not None
    try:
        if proc.stdout.readline().strip() != "ready":
            raise RuntimeError("the live clients did not start (bench.web_clients)")
        said = len(panel.server.streams)
        figures = interlocks(unit, tries)
        figures["streams_at_start"] = said
        figures["streams_at_end"] = len(panel.server.streams)
        proc.stdin.write("stop\n")
        proc.stdin.flush()
        seen = json.loads(proc.stdout.readline())
    finally:
        proc.stdin.close()
        if proc.wait(WAIT) != 0:
            raise RuntimeError(f"bench.web_clients exited {proc.returncode}")
    return figures, seen


def failures(r: dict[str, Any]) -> list[str]:
    """What the security run found: empty when every gate held."""
    s, f = r["security"], r["security"]["fuzz"]
    out = []
    if s["refused_401"] != s["closed"]:
        out.append(f"{s['closed'] - s['refused_401']} routes answered without a token")
    if s["refused_403"] != len(s["changes"]):
        out.append(f"{len(s['changes']) - s['refused_403']} changes from another origin "
                   "not refused")
    if f["findings"]:
        out.append(f"{f['findings']} fuzzed answers broke a rule ({f['errors']} were 500, "
                   f"{f['tracebacks']} carried a traceback): {f['first_findings'][:3]}")
    return out


def measure(requests: int, clients: int, tries: int, poll_s: float) -> dict[str, Any]:
    started, cpu0 = time.monotonic(), time.process_time()
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "s").mkdir()
        (Path(tmp) / "l").mkdir()
        sec = security(requests, Path(tmp) / "s")
        lo = load(tries, clients, poll_s, Path(tmp) / "l")
    return {"security": sec, "load": lo, **run_facts(started, cpu0)}


def _fig(x: dict[str, float]) -> str:
    return f"{x['p50_ms']:.3f} / {x['p95_ms']:.3f} / {x['max_ms']:.3f} ms"


def markdown(r: dict[str, Any]) -> str:
    s, f, lo = r["security"], r["security"]["fuzz"], r["load"]
    idle, live, seen = lo["idle"], lo["live"], lo["seen"]
    statuses = ", ".join(f"{k}: {v:,}" for k, v in f["statuses"].items())
    polls = ", ".join(f"{k}: {v:,}" for k, v in sorted(seen["polls"].items()))
    n = lo["clients"]
    lines = [
        f"Measured by `{r.get('command', COMMAND)}` on {r['date']} ({r['wall_s']:,} s; "
        f"{r['cores']} cores, load average {r['load_1min']} at the end), over the firmware on "
        "a real reactor thread and mock pins (launcher/sim/interlock.py), its web server on "
        "127.0.0.1; kept in `docs/results/web.json`, from which `docs/blocks.py` renders "
        "this section.",
        "",
        "| gate | result |",
        "|---|---|",
        f"| routes of the router that need a token, asked without one | {s['refused_401']} "
        f"of {s['closed']} answered 401 (the {len(s['public'])} others are public: "
        f"{', '.join(f'`{p}`' for p in s['public'])}) |",
        f"| state-changing routes asked with a valid token from `{EVIL}` | "
        f"{s['refused_403']} of {len(s['changes'])} answered 403 "
        f"({', '.join(f'`{c}`' for c in s['changes'])}) |",
        f"| fuzzed requests (bench/web_fuzz.py, seed {f['seed']}) | {f['requests']:,}, "
        f"{f['raw']:,} of them raw bytes; answers by status: {statuses}; "
        f"{f['unanswered']:,} closed by the server before an answer came |",
        f"| answers 500 / bodies with a traceback / errors not JSON | {f['errors']} / "
        f"{f['tracebacks']} / {f['findings'] - f['errors'] - f['tracebacks']} |",
        f"| errors the server logged meanwhile (sent to no client) | {f['logged']:,}"
        + "".join(f"; {v:,} × {k}" for k, v in f["logged_kinds"].items()) + " |",
        "",
        f"The interlocks with the panel in use: bench.interlock's figures (p50 / p95 / max, "
        f"{lo['tries']} tries each; switch interval {lo['switch_interval_ms']:g} ms as "
        "`launcher run` sets it), the web server up, first with no client, then with "
        f"{n} live streams reading `/api/events` and {n} clients asking `/api/status` every "
        f"{lo['poll_s']:g} s, from a process of their own (`[web] max_streams` set to "
        f"{lo['max_streams']} for the run).",
        "",
        f"| figure | no client | {n} streams + {n} pollers |",
        "|---|---|---|",
        f"| lid edge → roller's pins low, the reactor free | {_fig(idle['lid_stop_free'])} | "
        f"{_fig(live['lid_stop_free'])} |",
        f"| reactor blocked in a sleep → roller stopped by its lease (`motor.lease_ms` = "
        f"{lo['lease_ms']:g}) | {_fig(idle['lapse_sleep'])} | {_fig(live['lapse_sleep'])} |",
        f"| … the reactor spinning | {_fig(idle['lapse_spin'])} | {_fig(live['lapse_spin'])} |",
        f"| tries made again (the process stalled past a lease first) | {idle['stalls']} | "
        f"{live['stalls']} |",
        "",
        f"Of the {n} live streams, {live['streams_at_start']} were open on the server when "
        f"the measurement began and {live['streams_at_end']} when it ended; the clients saw "
        f"{seen['connected']} still connected ({seen['ended']} ended by the server, "
        f"{sum(seen['refused'].values())} refused), {seen['events']:,} events read; the "
        f"polls' answers by status: {polls} ({seen['reconnects']} connections made again).",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    # Each lapse is logged as an error by design; here they are the measurement. The fuzz's
    # refusals are logged too (a press refused mid-fault...), and are counted instead. The
    # levels are given back at the end: a test runs this in its own process's loggers.
    quiet = [logging.getLogger(name) for name in ("launcher.firmware.actuators", "launcher")]
    levels = [log.level for log in quiet]
    for log in quiet:
        log.setLevel(logging.CRITICAL)
    try:
        return _main(argv)
    finally:
        for log, level in zip(quiet, levels, strict=True):
            log.setLevel(level)


def _main(argv: list[str] | None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.web",
                                 description=__doc__.split("\n\n")[0],
                                 epilog="\n\n".join(__doc__.split("\n\n")[2:]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=10_000, metavar="N",
                    help=f"fuzzed requests (default 10000, seed {SEED})")
    ap.add_argument("--clients", type=int, default=20, metavar="N",
                    help="live streams, and as many status pollers, for the load figures; "
                         "the server's max_streams is set to it for the run (default 20)")
    ap.add_argument("--tries", type=int, default=200, metavar="N",
                    help="tries per interlock figure, without and with the clients "
                         "(default 200)")
    ap.add_argument("--poll-s", type=float, default=0.1, metavar="S",
                    help="seconds between a poller's requests (default 0.1)")
    ap.add_argument("--out", type=Path, metavar="FILE", help="keep the run in this JSON file "
                    "(docs/results/web.json, which docs/web.md is rendered from); without "
                    "it, the JSON goes to standard output")
    args = ap.parse_args(argv)
    r = measure(args.requests, args.clients, args.tries, args.poll_s)
    r["command"] = " ".join(["python -m bench.web", *(argv if argv is not None
                                                      else sys.argv[1:])])
    if args.out is None:
        print(json.dumps(r, indent=2))
    else:
        keep(args.out, r)
        print(f"bench.web: kept the figures in {args.out}; `python docs/blocks.py` writes "
              "them into docs/web.md")
    bad = failures(r)
    for line in bad:
        say(f"FAILED: {line}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
