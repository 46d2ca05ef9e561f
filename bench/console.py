"""Console capacity, and how late the launcher's timers run while its console is flooded.

The firmware runs on a RealReactor thread (simulated board), with its console on a pty
through ``SerialTransport``. A probe timer asks to run every 10 ms and records how late it
actually runs. Phases: idle; then a flood of ``status`` lines written to the pty as fast as
the kernel takes them (a pty is far faster than a 115200-baud UART, so this is the worst
case). The flood runs twice: with the transport's limits (BUDGET lines per TICK, bounded
inbox), whose answered lines/s is the configured cap, and with the limits lifted, whose
lines/s is what the console can answer (its capacity).

    python -m bench.console [--lines 20000] [--seconds 2]
"""

from __future__ import annotations

import argparse
import os
import random
import select
import statistics
import threading
import time
import tty

from hal.sim import SimLauncher
from launcher.core import config
from launcher.core.reactor import NEVER, RealReactor
from launcher.firmware.app import build_app
from launcher.firmware.console import Console
from launcher.firmware.state import StateStore
from launcher.firmware.transport import BUDGET, INBOX_LINES, TICK, SerialTransport
from launcher.sim.rig import CueLog

PROBE = 0.010


def run(lines: int, idle: float, limited: bool) -> dict[str, float]:
    settings = config.load()
    reactor = RealReactor()
    sim = SimLauncher(reactor, settings.pins)
    app = build_app(settings, reactor, random.Random(1), sim.board, cues=CueLog(),
                    store=StateStore(None))
    console = Console(app, sim=sim)
    master, slave = os.openpty()
    tty.setraw(slave)
    kw = {} if limited else {"budget": 10**9, "capacity": 10**9, "tick": 0.0}
    transport = SerialTransport(console, reactor, os.ttyname(slave), **kw)
    if not limited:
        transport.inbox._ready = lambda: True  # no output back-pressure either
    late: list[float] = []
    phase = ["idle"]
    marks: dict[str, list[float]] = {"idle": [], "flood": []}

    def probe(eventtime: float) -> float:
        # The reactor passes the time it really runs us; the timer asked for the last return.
        lateness = eventtime - probe_timer.waketime
        late.append(lateness)
        marks[phase[0]].append(lateness)
        return eventtime + PROBE

    probe_timer = reactor.register_timer(probe, NEVER, "bench.probe")

    def begin() -> None:
        app.start()
        transport.start()
        reactor.update_timer(probe_timer, reactor.monotonic() + PROBE)

    replies = [0]
    done = threading.Event()

    def collect() -> None:
        buf = b""
        while not done.is_set():
            ready, _, _ = select.select([master], [], [], 0.2)
            if not ready:
                continue
            buf += os.read(master, 1 << 16)
            *got, buf = buf.split(b"\r\n")
            replies[0] += sum(g.startswith(b"ok state=") for g in got)
            if replies[0] >= lines:
                done.set()

    reactor.post(begin)
    loop = threading.Thread(target=reactor.run, name="reactor")
    collector = threading.Thread(target=collect, name="collector")
    loop.start()
    collector.start()
    time.sleep(idle)
    phase[0] = "flood"
    payload = b"status\r\n" * lines
    start = time.perf_counter()
    _write_all(master, payload)
    done.wait(120)
    elapsed = time.perf_counter() - start
    reactor.stop()
    loop.join()
    transport.stop()
    done.set()
    collector.join()
    os.close(master)
    os.close(slave)
    app.stop()
    sim.board.close()
    flood = sorted(marks["flood"]) or [0.0]
    calm = sorted(marks["idle"]) or [0.0]
    return {
        "answered": replies[0], "seconds": elapsed, "lines_per_s": replies[0] / elapsed,
        "idle_p50_ms": statistics.median(calm) * 1e3,
        "idle_max_ms": calm[-1] * 1e3,
        "flood_p50_ms": statistics.median(flood) * 1e3,
        "flood_p99_ms": flood[int(0.99 * (len(flood) - 1))] * 1e3,
        "flood_max_ms": flood[-1] * 1e3,
        "probes_in_flood": len(marks["flood"]),
        "deepest_inbox": transport.inbox.deepest,
        "largest_batch": transport.inbox.largest_batch,
    }


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view[:4096])
        view = view[n:]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--lines", type=int, default=20000)
    p.add_argument("--seconds", type=float, default=2.0, help="idle time before the flood")
    args = p.parse_args()
    print(f"console flood: {args.lines} `status` lines over a pty; probe timer every "
          f"{PROBE * 1e3:g} ms; limits: {BUDGET} lines per {TICK * 1e3:g} ms tick, "
          f"inbox {INBOX_LINES} lines")
    for limited in (True, False):
        r = run(args.lines, args.seconds, limited)
        name = "with limits   " if limited else "limits lifted "
        print(f"{name} answered {r['answered']} in {r['seconds']:.2f} s "
              f"({r['lines_per_s']:.0f} lines/s); probe lateness idle p50 "
              f"{r['idle_p50_ms']:.2f} ms max {r['idle_max_ms']:.2f} ms; flood p50 "
              f"{r['flood_p50_ms']:.2f} ms p99 {r['flood_p99_ms']:.2f} ms max "
              f"{r['flood_max_ms']:.2f} ms over {r['probes_in_flood']} probes; deepest inbox "
              f"{r['deepest_inbox']}, largest batch {r['largest_batch']}")


if __name__ == "__main__":
    main()
