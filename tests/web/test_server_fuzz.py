"""Random requests against the real server over the real firmware: paths, methods, headers,
tokens, origins, bodies (console lines, bad JSON, random bytes, huge ones) and bytes that
are not HTTP at all. None may be answered 500, none may carry a traceback, every error is
JSON with its code and message, the server logs no error (a client that leaves mid-body
is not one), and the launcher ends in no internal fault.

The requests are bench/web_fuzz.py's, which ``python -m bench.web`` sends too. Seeded
(random.Random): a failure names its seed and request number, and replays. The default
suite sends 10,000 requests; the slow tier ten times as many, of other seeds
(`make test-slow`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from webunit import WebUnit

from bench.web import Logged
from bench.web_fuzz import Tally, check, fuzz
from launcher.web.server import Limits


def run_fuzz(tmp_path: Path, n: int, seed: int) -> None:
    # Failed tokens limited only far beyond what the fuzz sends, so that its requests reach
    # the routes (the limit has a test of its own).
    unit = WebUnit(tmp_path, limits=Limits(fails=10**9))
    try:
        with Logged() as logged:
            tally = fuzz(unit, n, seed)
        assert tally.findings == [], tally.findings[:5]
        assert logged.seen == [], logged.seen[:5]
        assert tally.errors == tally.tracebacks == 0
        status = unit.ask("GET", "/api/status")
        assert status.status == 200, status
        assert status.json["fault"] != "internal", status.json
        # The requests reached the routes and their refusals alike.
        for code in (200, 400, 401, 403, 404, 405, 413):
            assert tally.statuses.get(code, 0) > 0, (code, tally)
        assert tally.raw > n // 40
        print(f"fuzz: {n} requests, seed {seed}: {sorted(tally.statuses.items())}, "
              f"{tally.raw} not HTTP")
    finally:
        unit.close()


def test_ten_thousand_random_requests(tmp_path: Path) -> None:
    # 13 s on the 2-core development machine at a load of 2 (pytest --durations): the
    # default suite's.
    run_fuzz(tmp_path, 10_000, seed=4343)


@pytest.mark.slow
def test_a_hundred_thousand_random_requests_of_other_seeds(tmp_path: Path) -> None:
    for seed in range(10):
        (tmp_path / str(seed)).mkdir()
        run_fuzz(tmp_path / str(seed), 10_000, seed=seed)


def test_a_500_a_traceback_and_an_error_not_json_are_findings() -> None:
    tally = Tally()
    check(1, 7, 200, b'{"state": "ready"}', tally)
    check(2, 7, 404, b'{"error": "not_found", "message": "no such page"}', tally)
    assert tally.findings == [] and tally.statuses == {200: 1, 404: 1}
    check(3, 7, 500, b'{"error": "internal", "message": "logged"}', tally)
    check(4, 7, 200, b'Traceback (most recent call last):\n  File "x.py"', tally)
    check(5, 7, 400, b"<html>bad</html>", tally)
    assert (tally.errors, tally.tracebacks) == (1, 1)
    assert [f.split(":")[0] for f in tally.findings] == [
        "seed 7, request 3", "seed 7, request 4", "seed 7, request 5"]
