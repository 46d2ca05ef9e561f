"""Live clients of the web panel, in a process of their own: ``python -m bench.web`` runs it
beside the launcher it measures, as phones at the table are devices of their own (in the
launcher's process their Python would hold its GIL, a cost no phone puts on the unit).

    python -m bench.web_clients PORT TOKEN --clients N --poll-s S

N live streams (``GET /api/events``, each read as it comes) and N clients asking
``GET /api/status`` every S seconds on a kept-alive connection. Once every stream has its
first status, ``ready`` is printed on a line; at a line on standard input (or its end) the
clients stop and what they saw is printed as one JSON line: the streams still connected,
the events they read, and the polls' answers by status.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from dataclasses import dataclass, field

HOST = "127.0.0.1"
WAIT = 30.0  # s: a stream without its first status after this is reported, not waited for


@dataclass
class Seen:
    connected: int = 0  # streams whose first status came and that have not ended
    refused: dict[int, int] = field(default_factory=dict)  # streams answered otherwise
    ended: int = 0  # streams the server ended while the clients ran
    events: int = 0
    polls: dict[int, int] = field(default_factory=dict)
    reconnects: int = 0  # polling connections the server closed


def _request(path: str, token: str, port: int) -> bytes:
    return (f"GET {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\n"
            f"Authorization: Bearer {token}\r\n\r\n").encode()


async def stream(port: int, token: str, seen: Seen, first: asyncio.Event) -> None:
    """One live stream, read to its end; ``first`` set at its first event (or refusal)."""
    reader, writer = await asyncio.open_connection(HOST, port)
    try:
        writer.write(_request("/api/events", token, port))
        head = await reader.readuntil(b"\r\n\r\n")
        status = int(head.split()[1])
        if status != 200:
            seen.refused[status] = seen.refused.get(status, 0) + 1
            first.set()
            return
        tail = b""
        live = False
        while data := await reader.read(65536):
            text = tail + data
            # An event split between two reads is counted once: the tail carries its start.
            seen.events += text.count(b"event: ") - tail.count(b"event: ")
            tail = text[-16:]
            if not live and seen.events:
                live = True
                seen.connected += 1
                first.set()
        if live:
            seen.connected -= 1
            seen.ended += 1
    finally:
        first.set()
        writer.close()


async def poll(port: int, token: str, every: float, seen: Seen) -> None:
    """``GET /api/status`` every ``every`` s on one connection, made again if it closes."""
    conn: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
    while True:
        if conn is None:
            conn = await asyncio.open_connection(HOST, port)
        reader, writer = conn
        try:
            writer.write(_request("/api/status", token, port))
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length:"))
            await reader.readexactly(length)
            status = int(head.split()[1])
            seen.polls[status] = seen.polls.get(status, 0) + 1
        except (ConnectionError, asyncio.IncompleteReadError):
            writer.close()
            conn = None
            seen.reconnects += 1
            continue
        await asyncio.sleep(every)


async def run(port: int, token: str, clients: int, every: float) -> Seen:
    seen = Seen()
    loop = asyncio.get_running_loop()
    firsts = [asyncio.Event() for _ in range(clients)]
    tasks = [asyncio.create_task(stream(port, token, seen, f)) for f in firsts]
    tasks += [asyncio.create_task(poll(port, token, every, seen)) for _ in range(clients)]
    with contextlib.suppress(TimeoutError):  # reported: fewer streams connected
        await asyncio.wait_for(asyncio.gather(*(f.wait() for f in firsts)), WAIT)
    print("ready", flush=True)
    await loop.run_in_executor(None, sys.stdin.readline)
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return seen


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.web_clients",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("port", type=int, help="the panel's port on 127.0.0.1")
    ap.add_argument("token", help="a token of the panel")
    ap.add_argument("--clients", type=int, default=20,
                    help="live streams, and as many status pollers (default 20)")
    ap.add_argument("--poll-s", type=float, default=0.1,
                    help="seconds between a poller's requests (default 0.1)")
    args = ap.parse_args(argv)
    seen = asyncio.run(run(args.port, args.token, args.clients, args.poll_s))
    print(json.dumps({"connected": seen.connected, "refused": seen.refused,
                      "ended": seen.ended, "events": seen.events, "polls": seen.polls,
                      "reconnects": seen.reconnects}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
