"""The state file's format: what a corrupt or hostile file may not smuggle in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from launcher.core.store import FaultRecord, Saved, parse
from launcher.firmware.state import StateStore

GOOD = {"version": 1, "side": "wild", "dry_streak": 2, "inventory": 30,
        "counters": {"presses": 10, "shots": 3}}


def test_a_good_file_round_trips():
    saved = parse(GOOD)
    assert saved == Saved("wild", 2, 30, {"presses": 10, "shots": 3})
    assert parse(json.loads(saved.to_json())) == saved


def test_a_latched_fault_round_trips_and_a_file_without_one_reads_as_before():
    latched = Saved("wild", 2, 30, {}, FaultRecord("lid_sensor", ("power_contact", "lid_sensor")))
    assert parse(json.loads(latched.to_json())) == latched
    proven = Saved(fault=FaultRecord("driver_sleep"))
    assert parse(json.loads(proven.to_json())).fault == FaultRecord("driver_sleep", ())
    assert "fault" not in json.loads(Saved().to_json())  # as the file was before
    assert parse(GOOD).fault is None


@pytest.mark.parametrize("record", [
    {"code": "jam", "unproven": []},  # an ordinary fault is never kept
    {"code": "power_contact", "unproven": ["jam"]},
    {"code": "power_contact", "unproven": ["power_contact", "power_contact"]},
    {"code": "power_contact", "unproven": ["power_contact", "lid_sensor"]},  # not the last
    {"code": "power_contact"}, {"code": "power_contact", "unproven": "power_contact"},
    {"code": "power_contact", "unproven": [], "extra": 1}, ["power_contact"], "power_contact",
])
def test_an_impossible_fault_record_is_refused(record: object):
    with pytest.raises(ValueError):
        parse({**GOOD, "fault": record})


@pytest.mark.parametrize(("field", "value"), [
    ("dry_streak", True), ("dry_streak", 10**40), ("dry_streak", -1), ("dry_streak", 1.5),
    ("inventory", False), ("inventory", 10**40), ("inventory", "12"),
    ("counters", {"presses": True}), ("counters", {"presses": 10**40}),
    ("counters", {"x" * 500: 1}), ("counters", {"a b": 1}), ("counters", [1, 2]),
    ("side", "purple"), ("version", True), ("version", 1.0), ("version", "1"),
    ("version", 2),
])
def test_impossible_values_are_refused(field: str, value: object):
    with pytest.raises(ValueError):
        parse({**GOOD, field: value})


@pytest.mark.parametrize("text", [
    "[" * 100_000 + "]" * 100_000,  # deeper than the JSON reader recurses
    "{not json", "", "\x00\x01", '{"version": 1}', "null", "\ud800",
])
def test_a_corrupt_file_is_reported_and_replaced_by_defaults(tmp_path: Path, text: str):
    path = tmp_path / "state.json"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    store = StateStore(path)
    assert store.load() == Saved()
    assert store.problem is not None and str(path) in store.problem


def test_a_file_of_bytes_that_are_not_utf8_is_replaced_too(tmp_path: Path):
    path = tmp_path / "state.json"
    path.write_bytes(b'{"version": 1, "side": "\xe9"}')
    store = StateStore(path)
    assert store.load() == Saved() and store.problem is not None
