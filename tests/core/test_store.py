"""The state file's format: what a corrupt or hostile file may not smuggle in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from launcher.core.store import FaultRecord, Saved, checksum, parse
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


# --- a file that reads but lies: the checksum (version 2) ---------------------------------

LATCHED = Saved("wild", 2, 30, {"presses": 10, "shots": 3},
                FaultRecord("power_contact", ("power_contact",)))


def test_a_saved_file_is_version_2_and_carries_the_checksum_of_its_content():
    data = json.loads(LATCHED.to_json())
    assert data["version"] == 2 and data["crc32"] == checksum(data)
    assert parse(data) == LATCHED
    # The layout is not the content: the same fields spelt otherwise still match.
    assert parse(json.loads(json.dumps(data, indent=4))) == LATCHED


def _loaded(text: bytes) -> Saved | None:
    """What the loader makes of a file's bytes: None where it refuses them."""
    try:
        return parse(json.loads(text.decode("utf-8")))
    except (ValueError, KeyError, TypeError, RecursionError):
        return None


def test_every_single_bit_flip_is_refused_or_reads_the_same():
    """A flipped bit anywhere (a field's name, a count, the fault's record, the checksum
    itself) is refused, never read as other content: without the checksum a flip in the
    name ``fault`` read as a file with no latched fault, and one in a count as another count."""
    text = LATCHED.to_json().encode()
    lied = []
    for i in range(len(text)):
        for bit in range(8):
            flipped = bytearray(text)
            flipped[i] ^= 1 << bit
            got = _loaded(bytes(flipped))
            if got is not None and got != LATCHED:
                lied.append((i, bit, got))
    assert lied == []


@pytest.mark.parametrize("field", sorted(json.loads(LATCHED.to_json())))
def test_a_file_that_lost_a_field_is_refused(field: str):
    """A torn or half-applied write that still parses: a field gone (the fault's record gone
    read, before the checksum, as no latched fault at all)."""
    data = json.loads(LATCHED.to_json())
    del data[field]
    with pytest.raises((ValueError, KeyError)):
        parse(data)


def test_a_version_1_file_is_read_once_unchecked_and_saved_with_a_checksum(
        tmp_path: Path, caplog: pytest.LogCaptureFixture):
    """Files written before the checksum (version 1) are read as they were: a user upgrading
    keeps the side, the counts and any latched fault; the next save writes version 2."""
    old = {k: v for k, v in json.loads(LATCHED.to_json()).items() if k != "crc32"}
    old["version"] = 1
    path = tmp_path / "state.json"
    path.write_text(json.dumps(old))
    store = StateStore(path)
    with caplog.at_level("WARNING"):
        assert store.load() == LATCHED and store.problem is None
    assert "version 1, written before the checksum" in caplog.text
    assert json.loads(store.load().to_json())["version"] == 2
    # No version 1 file had a checksum: one that has is a version field that lies.
    with pytest.raises(ValueError, match="version 1 with a crc32"):
        parse({**old, "crc32": checksum(old)})


def test_a_file_that_fails_its_check_is_reported_as_such(tmp_path: Path):
    data = json.loads(LATCHED.to_json())
    data["counters"]["presses"] = 11  # in bounds, and a lie
    path = tmp_path / "state.json"
    path.write_text(json.dumps(data))
    store = StateStore(path)
    assert store.load() == Saved()
    assert store.problem is not None and "failed its check" in store.problem
    assert "does not match the content" in store.problem
