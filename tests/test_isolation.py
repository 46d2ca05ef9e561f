"""The suite's own safeguard: a test that leaves a thread running fails, and so does a test
during which such a thread writes a log record (tests/isolation.py, tests/conftest.py)."""

from __future__ import annotations

import logging
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from isolation import Leftovers

TESTS = Path(__file__).resolve().parent
log = logging.getLogger("launcher.test_isolation")


def test_a_thread_still_running_after_its_test_is_named_and_one_that_ended_is_not() -> None:
    leftovers = Leftovers(grace=0.0)
    go = threading.Event()
    ended = threading.Thread(target=lambda: None, name="ended")
    waiting = threading.Thread(target=go.wait, name="waiting")
    before = set(threading.enumerate())
    ended.start()
    ended.join()
    waiting.start()
    try:
        assert leftovers.threads_left(before, "tests/x.py::test_x") == ["waiting"]
        assert leftovers.left_running == {waiting: "tests/x.py::test_x"}
    finally:
        go.set()
        waiting.join()


def test_a_thread_that_is_ending_gets_its_grace_to_end() -> None:
    leftovers = Leftovers()
    go = threading.Event()
    ending = threading.Thread(target=go.wait, name="ending")
    before = set(threading.enumerate())
    ending.start()
    go.set()  # it ends, but maybe not before threads_left looks: the join waits for it
    assert leftovers.threads_left(before, "tests/x.py::test_x") == []


def test_a_record_from_a_thread_an_earlier_test_left_running_is_named_with_that_test() -> None:
    leftovers = Leftovers(grace=0.0)
    root = logging.getLogger()
    root.addHandler(leftovers.handler)
    go, logged = threading.Event(), threading.Event()

    def late() -> None:
        go.wait()
        log.error("written %s", "late")
        logged.set()

    thread = threading.Thread(target=late, name="late-writer")
    try:
        before = set(threading.enumerate())
        thread.start()
        assert leftovers.threads_left(before, "tests/x.py::test_x") == ["late-writer"]
        log.error("from this test's own thread")  # not a late record
        go.set()
        assert logged.wait(60)  # a hang guard only
        assert leftovers.late_records() == [
            "late-writer (left running by tests/x.py::test_x): ERROR "
            "launcher.test_isolation: written late"]
        assert leftovers.late_records() == []  # each record is told once
    finally:
        go.set()
        thread.join()
        root.removeHandler(leftovers.handler)


INNER = '''
import logging
import threading

import conftest

conftest.LEFTOVERS.grace = 0.0  # the leaked thread waits for the next test: no use waiting

go, logged = threading.Event(), threading.Event()


def late():
    go.wait()
    logging.getLogger("launcher").error("a record from the thread")
    logged.set()


def test_leaks_a_thread():
    threading.Thread(target=late, name="leaked", daemon=True).start()


def test_runs_while_the_thread_logs():
    go.set()
    assert logged.wait(60)


def test_runs_after_it():
    pass
'''


def test_the_suites_fixtures_fail_the_test_that_leaks_and_the_test_it_logs_into(
        pytester: pytest.Pytester) -> None:
    for name in ("conftest.py", "isolation.py"):
        shutil.copy(TESTS / name, pytester.path / name)
    pytester.makepyfile(test_inner=INNER)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rA")
    result.assert_outcomes(passed=3, errors=2)
    result.stdout.fnmatch_lines([
        "*ERROR at teardown of test_leaks_a_thread*",
        "*AssertionError: test leaked threads: ?'leaked'?",  # ? for [ and ]
        "*ERROR at teardown of test_runs_while_the_thread_logs*",
        "*log records from a thread of an earlier test:*",
        "*leaked (left running by test_inner.py::test_leaks_a_thread): ERROR launcher: "
        "a record from the thread*",
    ])


SIGNALS = '''
import signal
import subprocess
import sys


def test_ignores_sigint():
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_after_it_starts_a_program_that_ctrl_c_can_stop():
    code = "import signal; print(signal.getsignal(signal.SIGINT) != signal.SIG_IGN)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "True"
'''


def test_a_test_that_leaves_sigint_ignored_fails_and_the_next_starts_programs_as_a_shell_would(
        pytester: pytest.Pytester) -> None:
    for name in ("conftest.py", "isolation.py"):
        shutil.copy(TESTS / name, pytester.path / name)
    pytester.makepyfile(test_inner=SIGNALS)
    # The suite itself started with SIGINT ignored, as `make test &` starts it: the programs
    # its tests start must still get Ctrl-C's default, as a person's shell gives them.
    code = ("import signal, sys, pytest; signal.signal(signal.SIGINT, signal.SIG_IGN); "
            "sys.exit(pytest.main(['-p', 'no:cacheprovider', '-rA', '-p', 'pytester']))")
    result = pytester.run(sys.executable, "-c", code)
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines([
        "*ERROR at teardown of test_ignores_sigint*",
        "*test left signal handlers changed: SIGINT:*",
    ])


# A deadlock where the one in stop 48's CI run waited (gpiozero's finaliser, run by the cyclic
# collector on a thread that holds the lock the finaliser needs; hal/gpio.py, _NOT_CLOSED).
_DEADLOCK = '''
import gc
import threading

lock = threading.Lock()


class Finalised:
    def __del__(self):
        with lock:
            pass


def test_deadlocked_in_a_finaliser():
    cycle = Finalised()
    cycle.itself = cycle
    del cycle
    with lock:
        gc.collect()
'''


def test_a_test_that_hangs_ends_the_run_failed_with_its_stack(tmp_path: Path) -> None:
    """The suite's hang guard, pytest-timeout as pyproject.toml sets it (only the limit is
    lowered here). Its "signal" method would fail this: the exception it raises lands inside
    the finaliser, which swallows it, and the test passes."""
    test = tmp_path / "test_hang.py"
    test.write_text(_DEADLOCK)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(TESTS.parent / "pyproject.toml"),
         "--rootdir", str(tmp_path), "-p", "no:cacheprovider", "-o", "timeout=2", str(test)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path)
    out = run.stdout + run.stderr
    assert run.returncode != 0, out
    assert "Timeout" in out and "in __del__" in out and "passed" not in out, out
