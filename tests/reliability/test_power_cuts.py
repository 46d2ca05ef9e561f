"""Power cuts: the state file is always the old state or the new one, never torn.

Two halves. Simulated: ``atomic_write`` is cut off at every step of its write sequence
(``PowerCut``, a ``BaseException``, raised there, and every disk call after it raises too,
so no clean-up runs: the process is gone). Two views are checked after each cut: the files
the process left (what a crash without a power loss leaves), and what a power loss can
leave of them (only data fsynced before the cut is durable, a rename only once its
folder is fsynced, and an unsynced rename may or may not have reached the disk).
Real: the firmware, on the simulated board in a process of its own, pressing and saving
in a tight loop, is killed with SIGKILL many times, mid-shot and mid-save; after each
kill ``launcher safe-stop`` must drive the pins low, and the next start must find the
state intact and no temporary file left.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import select
import signal
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path, PosixPath
from types import SimpleNamespace
from typing import Any

import pytest

from launcher.core.store import Saved, parse
from launcher.firmware import disk
from launcher.firmware.state import StateStore

# -- simulated cuts ---------------------------------------------------------------------


class PowerCut(BaseException):
    """The power went: nothing after this runs (not even an ``except`` clean-up)."""


class CutDisk:
    """The disk calls ``atomic_write`` makes, numbered, with the power cut at step ``cut``.

    Each call first passes ``op``: at step ``cut`` it raises ``PowerCut``, and every later
    call raises too. The write is two steps (half the bytes, then the rest), so a cut can
    leave a half-written temporary file.
    """

    STEPS = ("mkstemp", "write", "write_rest", "flush", "fsync_file", "close_file",
             "replace", "open_dir", "fsync_dir", "close_dir")

    def __init__(self, cut: int | None) -> None:
        self.cut = cut
        self.step = 0
        self.dead = False
        self.trace: list[tuple[str, Any]] = []
        self.tmp: str | None = None
        self.tmp_fd: int | None = None
        self.written = b""  # bytes the kernel has of the temporary file
        self.synced = b""  # ... of which fsynced

    def op(self, name: str, detail: Any = None) -> None:
        if self.dead:
            raise PowerCut(f"after the cut: {name}")
        if self.step == self.cut:
            self.dead = True
            raise PowerCut(f"cut at {name}")
        assert name == self.STEPS[self.step], (name, self.step)
        self.step += 1
        self.trace.append((name, detail))

    # The stand-ins for what ``disk`` calls.

    def mkstemp(self, prefix: str, dir: Path) -> tuple[int, str]:
        self.op("mkstemp")
        import tempfile

        self.tmp_fd, self.tmp = tempfile.mkstemp(prefix=prefix, dir=dir)
        return self.tmp_fd, self.tmp

    def fdopen(self, fd: int, mode: str, encoding: str) -> _CutFile:
        return _CutFile(self, fd)

    def fsync(self, fd: int) -> None:
        self.op("fsync_file" if fd == self.tmp_fd else "fsync_dir")
        os.fsync(fd)
        if fd == self.tmp_fd:
            self.synced = self.written

    def replace(self, src: str, dst: Path) -> None:
        self.op("replace", (src, dst))
        os.replace(src, dst)

    def open(self, path: Path, flags: int) -> int:
        self.op("open_dir")
        return os.open(path, flags)

    def close(self, fd: int) -> None:
        if self.dead:
            os.close(fd)  # the kernel closes a dead process's files; the process did nothing
            raise PowerCut("after the cut: close")
        self.op("close_dir")
        os.close(fd)

    def path_class(self) -> type:
        cut_disk = self

        class CutPath(PosixPath):
            def unlink(self, missing_ok: bool = False) -> None:
                if cut_disk.dead:
                    raise PowerCut("after the cut: unlink")
                super().unlink(missing_ok=missing_ok)

        return CutPath


class _CutFile:
    """An unbuffered text file on ``fd``: the kernel has each byte once ``write`` returns."""

    def __init__(self, cut_disk: CutDisk, fd: int) -> None:
        self.disk = cut_disk
        self.fd = fd

    def __enter__(self) -> _CutFile:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.disk.dead:
            os.close(self.fd)  # the process is gone; the kernel keeps what it was given
            self.disk.tmp_fd = None
            return
        self.disk.op("close_file")
        os.close(self.fd)
        self.disk.tmp_fd = None  # the folder's descriptor may get the same number

    def write(self, text: str) -> int:
        data = text.encode("utf-8")
        half = len(data) // 2
        self.disk.op("write")
        os.write(self.fd, data[:half])
        self.disk.written += data[:half]
        self.disk.op("write_rest")
        os.write(self.fd, data[half:])
        self.disk.written += data[half:]
        return len(text)

    def flush(self) -> None:
        self.disk.op("flush")

    def fileno(self) -> int:
        return self.fd


def cut_write(monkeypatch: pytest.MonkeyPatch, path: Path, text: str,
              cut: int | None) -> CutDisk:
    """``disk.atomic_write(path, text)`` with the power cut at step ``cut`` (None: no cut)."""
    d = CutDisk(cut)
    with monkeypatch.context() as mp:
        mp.setattr(disk, "tempfile", SimpleNamespace(mkstemp=d.mkstemp))
        mp.setattr(disk, "os", SimpleNamespace(fdopen=d.fdopen, fsync=d.fsync,
                                               replace=d.replace, open=d.open,
                                               close=d.close, O_RDONLY=os.O_RDONLY))
        mp.setattr(disk, "Path", d.path_class())
        try:
            disk.atomic_write(path, text)
        except PowerCut:
            assert cut is not None
        else:
            assert cut is None or cut >= len(CutDisk.STEPS)
    return d


def durable_outcomes(d: CutDisk, old: bytes | None) -> set[bytes | None]:
    """What the target can hold after a power loss at the cut (None: no file).

    Only fsynced bytes of the temporary file survive; an unsynced rename may or may not
    have reached the disk; a rename followed by the folder's fsync has.
    """
    names = [name for name, _ in d.trace]
    if "replace" not in names:
        return {old}
    renamed = {d.synced}
    if "fsync_dir" in names[names.index("replace"):]:
        return renamed
    return {old} | renamed


OLD = Saved("mild", 2, 17, {"presses": 40, "shots": 12})
NEW = Saved("wild", 0, 9, {"presses": 41, "shots": 13, "flips": 1})


@pytest.mark.parametrize("first_write", [False, True], ids=["over_old", "first_write"])
@pytest.mark.parametrize("cut", range(len(CutDisk.STEPS) + 1))
def test_a_power_cut_at_any_step_leaves_the_old_state_or_the_new(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cut: int, first_write: bool) -> None:
    path = tmp_path / "state.json"
    old_text = None if first_write else OLD.to_json()
    if old_text is not None:
        disk.atomic_write(path, old_text)
    old = None if old_text is None else old_text.encode()
    new = NEW.to_json().encode()

    d = cut_write(monkeypatch, path, NEW.to_json(), cut)

    # What the process left: the target is whole, old or new.
    left = path.read_bytes() if path.exists() else None
    assert left in {old, new}
    if cut is not None and cut < len(CutDisk.STEPS):
        assert d.dead and d.step == cut
    else:  # no cut: the model's steps are exactly the ones ``atomic_write`` took
        assert [name for name, _ in d.trace] == list(CutDisk.STEPS)
    # What a power loss can leave: never a torn or empty target.
    assert durable_outcomes(d, old) <= {old, new}, durable_outcomes(d, old)
    # A cut after the temporary file was made and before it was renamed leaves it behind.
    temps = sorted(tmp_path.glob(disk.temp_prefix(path) + "*"))
    if cut is not None and 1 <= cut <= CutDisk.STEPS.index("replace"):
        assert len(temps) == 1
    else:
        assert temps == []

    # The next start: the temporary file is cleaned, the state loads intact.
    store = StateStore(path)
    loaded = store.load()
    assert store.problem is None
    assert list(tmp_path.glob(disk.temp_prefix(path) + "*")) == []
    assert loaded in (OLD if old is not None else Saved(), NEW)
    if left is not None:
        assert loaded == parse(json.loads(left))


def test_the_durable_model_catches_a_writer_that_renames_before_syncing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Power to the check: without the fsync before the rename, a cut can leave a torn file."""
    path = tmp_path / "state.json"
    disk.atomic_write(path, OLD.to_json())

    def careless_write(target: Path, data: str) -> None:
        fd, tmp = disk.tempfile.mkstemp(prefix=disk.temp_prefix(target), dir=target.parent)
        with disk.os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(data)
            f.flush()
        disk.os.replace(tmp, target)

    monkeypatch.setattr(disk, "atomic_write", careless_write)
    torn = False
    for cut in range(len(CutDisk.STEPS)):
        disk_cut = CutDisk(cut)
        disk_cut.STEPS = ("mkstemp", "write", "write_rest", "flush", "close_file",  # type: ignore[misc]
                          "replace")
        with monkeypatch.context() as mp:
            mp.setattr(disk, "tempfile", SimpleNamespace(mkstemp=disk_cut.mkstemp))
            mp.setattr(disk, "os", SimpleNamespace(fdopen=disk_cut.fdopen, fsync=disk_cut.fsync,
                                                   replace=disk_cut.replace))
            with contextlib.suppress(PowerCut):
                disk.atomic_write(path, NEW.to_json())
        outcomes = durable_outcomes(disk_cut, OLD.to_json().encode())
        torn = torn or not outcomes <= {OLD.to_json().encode(), NEW.to_json().encode()}
        disk.remove_stale_temps(path)
        path.write_text(OLD.to_json())
    assert torn


# -- real kills ---------------------------------------------------------------------------

DRIVER = Path(__file__).with_name("kill_driver.py")
SAFE_STOP = re.compile(r"safe-stop: motor_sleep=\d+ motor_in1=\d+ motor_in2=\d+ rotator=\d+ "
                       r"low \((\w+); config\)")
# The installed command, as systemd's ExecStopPost= runs it (the module if not installed).
_SCRIPT = Path(sys.executable).with_name("launcher")
LAUNCHER = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "launcher.cli.main"]


class Driver:
    """One run of ``kill_driver.py``: its lines and markers, read without blocking."""

    def __init__(self, config_path: Path, seed: int) -> None:
        self.proc = subprocess.Popen([sys.executable, str(DRIVER), str(config_path), str(seed)],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert self.proc.stdout is not None
        self.fd = self.proc.stdout.fileno()
        self.buf = b""
        self.lines: list[str] = []

    def next_line(self, timeout: float = 20.0) -> str:
        while b"\n" not in self.buf:
            ready, _, _ = select.select([self.fd], [], [], timeout)
            assert ready, f"the driver said nothing for {timeout} s"
            chunk = os.read(self.fd, 4096)
            assert chunk, f"the driver ended (exit {self.proc.wait()})"
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        self.lines.append(line.decode())
        return self.lines[-1]

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        assert self.proc.wait(10) == -signal.SIGKILL
        rest = self.buf + self.proc.stdout.read()  # type: ignore[union-attr]
        self.lines += [x.decode() for x in rest.split(b"\n") if x]
        self.proc.stdout.close()  # type: ignore[union-attr]

    def last(self, opened: str, closed: str) -> bool:
        """Whether the last of the markers ``opened``/``closed`` was ``opened``."""
        for line in reversed(self.lines):
            if line in (opened, closed):
                return line == opened
        return False


def kill_many(tmp_path: Path, kills: int, seed: int) -> Counter[str]:
    """Start, kill at a marker, safe-stop, check the state; ``kills`` times. Tallies."""
    state = tmp_path / "state" / "state.json"
    cfg = tmp_path / "launcher.toml"
    cfg.write_text(textwrap.dedent(f"""\
        [state]
        path = "{state}"
        [console]
        port = ""
        [audio]
        backend = "null"
        """), encoding="utf-8")
    rng = random.Random(seed)
    tally: Counter[str] = Counter()
    on_disk: Saved | None = None  # what the file held after the last kill (None: no kill yet)
    existed = False  # whether a write has ever finished
    for i in range(kills):
        driver = Driver(cfg, seed * 1000 + i)
        loaded = json.loads(driver.next_line().removeprefix("loaded "))
        # The start: the state as the kill left it, read intact; temporary files gone.
        assert loaded["problem"] is None and loaded["temps"] == []
        if on_disk is not None:
            assert parse(loaded["saved"]) == on_disk
        assert driver.next_line() == "ready"
        # Kill at the n-th marker of a kind: as a shot starts, or as a write starts
        # (writes come every few milliseconds, shots about once a second).
        trigger = rng.choice(["S", "W"])
        n = rng.randint(1, 2) if trigger == "S" else rng.randint(1, 40)
        seen = lines = 0
        while seen < n:
            seen += driver.next_line() == trigger
            lines += 1
            assert lines < 100_000, f"no {trigger!r} marker in {lines} lines: the unit stopped"
        driver.kill()
        tally["kills"] += 1
        tally["mid_shot"] += driver.last("S", "s")
        tally["mid_save"] += driver.last("W", "w")
        temps = list(state.parent.glob(disk.temp_prefix(state) + "*"))
        tally["temps_left"] += len(temps)

        stop = subprocess.run([*LAUNCHER, "safe-stop", "--config", str(cfg)],
                              capture_output=True, text=True, timeout=60)
        assert stop.returncode == 0, stop.stderr
        assert SAFE_STOP.search(stop.stdout), stop.stdout

        # The file as the kill left it: whole and parseable (read without cleaning temps).
        # None yet only if no write had ever finished: the next start takes the defaults.
        if state.exists():
            on_disk = parse(json.loads(state.read_text(encoding="utf-8")))
            existed = True
        else:
            assert not existed, "a state file that existed is gone"
            tally["killed_before_first_write"] += 1
            on_disk = Saved()
        presses = on_disk.counters.get("presses", 0)
        assert presses >= tally["presses"], "the state went back in time"
        tally["presses"] = presses
    # The last start after the last kill, in this process: intact, temporary files cleaned.
    store = StateStore(state)
    assert store.load() == on_disk and store.problem is None
    assert list(state.parent.glob(disk.temp_prefix(state) + "*")) == []
    return tally


def test_kill_9_mid_shot_and_mid_save(tmp_path: Path, record_property) -> None:
    tally = kill_many(tmp_path, 15, seed=9)
    print(dict(tally))
    record_property("kills", dict(tally))
    assert tally["kills"] == 15 and tally["mid_shot"] > 0 and tally["mid_save"] > 0


@pytest.mark.slow
def test_kill_9_two_hundred_times(tmp_path: Path, record_property) -> None:
    tally = kill_many(tmp_path, 200, seed=200)
    print(dict(tally))
    record_property("kills", dict(tally))
    assert tally["kills"] == 200 and tally["mid_shot"] > 20 and tally["mid_save"] > 20
