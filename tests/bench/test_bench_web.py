"""`python -m bench.web`: a small run keeps what docs/web.md is rendered from, and a gate that
did not hold fails the run."""

from __future__ import annotations

import copy
import json
import logging
from pathlib import Path

LOGGERS = ("launcher", "launcher.firmware.actuators", "launcher.web", "aiohttp")


def levels() -> list[tuple[int, bool]]:
    return [(logging.getLogger(n).level, logging.getLogger(n).propagate) for n in LOGGERS]


def test_a_small_run_keeps_its_figures_and_they_render(bench, tmp_path: Path) -> None:
    web = bench("web")
    out = tmp_path / "web.json"
    before = levels()
    assert web.main(["--requests", "300", "--tries", "5", "--clients", "3", "--out",
                     str(out)]) == 0
    # The loggers as they were: the suite's later tests read the launcher's log (caplog).
    assert levels() == before
    r = json.loads(out.read_text())
    s, lo = r["security"], r["load"]
    assert s["closed"] == s["refused_401"] >= 5
    assert s["refused_403"] == len(s["changes"]) >= 3
    assert sum(s["fuzz"]["statuses"].values()) > 0 and s["fuzz"]["errors"] == 0
    assert lo["idle"]["lid_stop_free"]["tries"] == lo["live"]["lapse_spin"]["tries"] == 5
    # The clients were there while the figures were taken, and saw the shots go by.
    assert lo["live"]["streams_at_start"] == 3 and lo["seen"]["events"] > 0
    assert sum(lo["seen"]["polls"].values()) > 0
    text = web.markdown(r)
    assert r["command"] in text and f"{s['refused_401']} of {s['closed']}" in text


def test_each_gate_that_did_not_hold_fails_the_run(bench) -> None:
    web = bench("web")
    good = {"security": {"closed": 5, "refused_401": 5, "changes": ["POST /a", "POST /b"],
                         "refused_403": 2,
                         "fuzz": {"findings": 0, "errors": 0, "tracebacks": 0,
                                  "first_findings": []}}}
    assert web.failures(good) == []
    for key, value, says in [("refused_401", 4, "without a token"),
                             ("refused_403", 1, "another origin")]:
        bad = copy.deepcopy(good)
        bad["security"][key] = value
        assert says in web.failures(bad)[0]
    bad = copy.deepcopy(good)
    bad["security"]["fuzz"].update(findings=1, errors=1, first_findings=["seed 1: 500"])
    assert "1 were 500" in web.failures(bad)[0]
