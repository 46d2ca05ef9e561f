"""The web panel's token store (launcher/web/tokens.py): hashed at rest, 256-bit tokens,
expiry after token_days unused, revoke (from another process too), and a file that does
not read refusing every token without raising."""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path

import pytest

from launcher.web import tokens as t
from launcher.web.tokens import DAY, USE_WRITE, TokenStore, digest


class Clock:
    def __init__(self) -> None:
        self.t = 1_765_000_000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "state" / t.FILE


def test_a_token_is_256_random_bits_and_only_its_hash_is_written(path: Path,
                                                                clock: Clock) -> None:
    store = TokenStore(path, 30, clock)
    tid, token = store.issue()
    assert len(token) == 43  # token_urlsafe(32): 32 bytes, base64 without padding
    assert store.issue()[1] != token
    text = path.read_text(encoding="utf-8")
    assert token not in text and digest(token) in text
    assert json.loads(text)["tokens"][tid]["sha256"] == digest(token)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert store.check(token) == tid
    assert store.check(token[:-1] + ("A" if token[-1] != "A" else "B")) is None
    assert store.check(digest(token)) is None  # the stored hash is no token
    assert store.check("") is None and store.check("x" * 10_000) is None


def test_a_second_store_on_the_file_knows_the_token(path: Path, clock: Clock) -> None:
    tid, token = TokenStore(path, 30, clock).issue()
    assert TokenStore(path, 30, clock).check(token) == tid


def test_a_token_expires_after_its_days_unused(path: Path, clock: Clock) -> None:
    store = TokenStore(path, 2, clock)
    tid, token = store.issue()
    clock.t += 1.5 * DAY
    assert store.check(token) == tid  # used: its two days start again
    clock.t += 1.9 * DAY
    assert store.check(token) == tid
    assert [r["id"] for r in store.rows()] == [tid]
    clock.t += 2 * DAY + 1
    assert store.check(token) is None
    assert store.rows() == []


def test_a_use_is_written_at_most_hourly(path: Path, clock: Clock) -> None:
    store = TokenStore(path, 30, clock)
    tid, token = store.issue()
    before = path.stat().st_ino, path.read_text()
    clock.t += USE_WRITE - 1
    assert store.check(token) == tid
    assert (path.stat().st_ino, path.read_text()) == before  # no write for this request
    clock.t += 2
    assert store.check(token) == tid
    assert json.loads(path.read_text())["tokens"][tid]["last_used"] == clock.t
    # The use survives a restart: another store reads it.
    assert TokenStore(path, 30, clock).rows()[0]["last_used"] == round(clock.t)


def test_a_use_that_cannot_be_written_still_lets_the_token_in(
        path: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    store = TokenStore(path, 30, clock)
    tid, token = store.issue()
    clock.t += USE_WRITE + 1

    def full(*a: object, **k: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(t, "atomic_write", full)
    with caplog.at_level(logging.WARNING, "launcher.web"):
        assert store.check(token) == tid
    assert "last use not written" in caplog.text


def test_revoke(path: Path, clock: Clock) -> None:
    store = TokenStore(path, 30, clock)
    keep, kept = store.issue()
    tid, token = store.issue()
    assert store.revoke(tid) is True
    assert store.check(token) is None and store.check(kept) == keep
    assert store.revoke(tid) is False and store.revoke("nosuch") is False
    assert [r["id"] for r in store.rows()] == [keep]
    assert tid not in path.read_text()


def test_a_revoke_by_another_process_counts_at_the_next_request(path: Path,
                                                                clock: Clock) -> None:
    service = TokenStore(path, 30, clock)
    tid, token = service.issue()
    assert service.check(token) == tid
    assert TokenStore(path, 30, clock).revoke(tid)  # `launcher web revoke` meanwhile
    assert service.check(token) is None
    clock.t += USE_WRITE + 1
    service.issue()  # the service's next write must not bring the revoked token back
    assert tid not in json.loads(path.read_text())["tokens"]


def test_rows_say_no_secret(path: Path, clock: Clock) -> None:
    store = TokenStore(path, 30, clock)
    tid, _ = store.issue()
    (row,) = store.rows()
    assert row == {"id": tid, "made": round(clock.t), "last_used": round(clock.t),
                   "expires": round(clock.t + 30 * DAY)}


def test_no_file_is_no_tokens(path: Path, clock: Clock) -> None:
    store = TokenStore(path, 30, clock)
    assert store.problem is None and store.rows() == [] and store.check("x" * 43) is None
    _, token = store.issue()
    path.unlink()  # deleting the file revokes every token
    assert store.check(token) is None


@pytest.mark.parametrize("content", [
    b"{not json", b"\xff\xfe\x00", b"[]", b'{"version": 2, "tokens": {}}',
    b'{"version": 1}', b'{"version": 1, "tokens": {"a": {"sha256": "00", "made": 1, '
                       b'"last_used": 1}}}',
    b'{"version": 1, "tokens": {"a": {"sha256": "' + b"0" * 64 + b'", "made": 1, '
    b'"last_used": NaN}}}',
])
def test_a_file_that_does_not_read_refuses_every_token_and_says_so(
        path: Path, clock: Clock, caplog: pytest.LogCaptureFixture, content: bytes) -> None:
    store = TokenStore(path, 30, clock)
    tid, token = store.issue()
    good = path.read_bytes()
    path.write_bytes(content)
    with caplog.at_level(logging.ERROR, "launcher.web"):
        assert store.check(token) is None
        assert store.check(token) is None
    assert store.problem and store.rows() == []
    assert caplog.text.count("every token is refused") == 1  # said once, not each request
    assert TokenStore(path, 30, clock).check(token) is None  # at a start, too
    path.write_bytes(good)  # mended: its tokens count again
    assert store.check(token) == tid and store.problem is None


def test_after_a_file_that_does_not_read_a_new_pairing_writes_it_afresh(
        path: Path, clock: Clock) -> None:
    path.parent.mkdir(parents=True)
    path.write_text("garbage")
    store = TokenStore(path, 30, clock)
    assert store.problem
    tid, token = store.issue()
    assert store.problem is None and store.check(token) == tid
    assert TokenStore(path, 30, clock).check(token) == tid
