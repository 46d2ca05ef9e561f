"""The reactor: timers in order, re-arming, cancelling, posted callbacks."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from launcher.core.reactor import NEVER, ManualReactor, RealReactor


def test_timers_fire_in_order_at_their_time():
    r = ManualReactor()
    fired: list[tuple[str, float]] = []
    r.register_timer(lambda t: fired.append(("b", t)) or NEVER, 2.0, "b")
    r.register_timer(lambda t: fired.append(("a", t)) or NEVER, 1.0, "a")
    r.advance(1.5)
    assert fired == [("a", 1.0)]
    r.advance(1.0)
    assert fired == [("a", 1.0), ("b", 2.0)]
    assert r.monotonic() == 2.5


def test_periodic_timer_returns_its_next_waketime():
    r = ManualReactor()
    ticks: list[float] = []
    r.register_timer(lambda t: ticks.append(t) or t + 0.25, 0.0)
    r.advance(1.0)
    assert ticks == [0.0, 0.25, 0.5, 0.75, 1.0]


def test_update_and_unregister():
    r = ManualReactor()
    fired: list[float] = []
    t = r.register_timer(lambda now: fired.append(now) or NEVER, 1.0)
    r.update_timer(t, 3.0)
    r.advance(2.0)
    assert fired == []
    r.unregister_timer(t)
    r.advance(5.0)
    assert fired == []


def test_a_callback_that_rearms_itself_keeps_its_own_time():
    r = ManualReactor()
    seen: list[float] = []

    def cb(now: float) -> float:
        seen.append(now)
        r.update_timer(timer, now + 10)
        return NEVER  # ignored: the callback already re-armed

    timer = r.register_timer(cb, 1.0)
    r.advance(11.0)
    assert seen == [1.0, 11.0]


def test_posted_callbacks_run_before_time_moves():
    r = ManualReactor()
    order: list[str] = []
    r.register_timer(lambda t: order.append("timer") or NEVER, 0.5)
    r.post(lambda: order.append("posted"))
    r.advance(1.0)
    assert order == ["posted", "timer"]


def test_a_failing_timer_or_posted_callback_goes_to_the_error_handler():
    r = ManualReactor()
    calls: list[float] = []
    seen: list[tuple[str, str]] = []
    r.on_error = lambda exc, where: seen.append((type(exc).__name__, where))

    def bad(t: float) -> float:
        calls.append(t)
        raise RuntimeError("boom")

    def bad_post() -> None:
        raise KeyError("k")

    r.register_timer(bad, 0.0, "bad")
    r.post(bad_post)
    r.advance(5.0)
    assert calls == [0.0]  # the failed timer is not run again
    assert seen == [("KeyError", "posted callback 'test_a_failing_timer_or_posted_callback_goes_"
                                 "to_the_error_handler.<locals>.bad_post'"),
                    ("RuntimeError", "timer bad")]


def test_an_error_handler_that_fails_stops_the_reactor():
    r = ManualReactor()

    def handler(exc: BaseException, where: str) -> None:
        raise exc

    r.on_error = handler
    r.register_timer(lambda t: 1 / 0, 1.0, "div")
    with pytest.raises(ZeroDivisionError):
        r.advance(2.0)
    real = RealReactor()
    real.on_error = handler
    real.post(lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        real.run()  # the loop ends: systemd restarts the firmware, safe-stop runs first


def test_manual_reactor_refuses_to_go_back():
    with pytest.raises(ValueError):
        ManualReactor().advance(-1)


def test_real_reactor_runs_posts_from_other_threads_and_stops():
    clock = [0.0]
    r = RealReactor(clock=lambda: clock[0])
    got: list[str] = []
    threads: list[threading.Thread] = []

    def other_thread() -> None:
        r.post(lambda: got.append("posted"))
        r.stop()

    def timer(t: float) -> float:
        got.append("timer")
        threads.append(threading.Thread(target=other_thread))
        threads[0].start()
        return NEVER

    r.register_timer(timer, 0.0)
    r.run()  # returns only once the other thread's stop() arrived
    threads[0].join()
    assert got == ["timer", "posted"]


# -- the queue holds one entry per armed timer, however often timers are re-armed --

_OPS = st.lists(st.one_of(
    st.tuples(st.just("register"), st.sampled_from([0.0, 0.5, 1.0, 2.0, NEVER])),
    st.tuples(st.just("update"), st.integers(0, 7), st.sampled_from([0.0, 0.25, 1.0, 3.0, NEVER])),
    st.tuples(st.just("unregister"), st.integers(0, 7)),
    st.tuples(st.just("advance"), st.sampled_from([0.0, 0.1, 0.5, 1.0, 2.5])),
), max_size=60)


@settings(max_examples=300, deadline=None)
@given(ops=_OPS, rearm=st.lists(st.sampled_from([NEVER, 0.3, 1.0]), min_size=1,
                                max_size=8))
def test_the_queue_never_holds_more_than_one_entry_per_live_timer(ops, rearm):
    """Random registers, re-arms, cancels and advances (callbacks re-arm themselves too),
    checked against a model of the order: a timer fires at its time, earliest first, the
    last armed last among equal times; and after every step the queue holds at most one
    entry per live timer (exactly the armed ones)."""
    r = ManualReactor()
    timers: list = []
    model: dict[int, tuple[float, int]] = {}  # index -> (waketime, arming order), armed only
    live: set[int] = set()
    order = iter(range(10**6))
    fired: list[tuple[int, float]] = []
    expected: list[tuple[int, float]] = []

    def arm(i: int, at: float) -> None:
        model.pop(i, None)
        if at != NEVER and i in live:
            model[i] = (at, next(order))

    def callback(i: int):
        def cb(now: float) -> float:
            fired.append((i, now))
            nxt = rearm[len(fired) % len(rearm)]
            return NEVER if nxt == NEVER else now + nxt
        return cb

    def model_advance(seconds: float) -> None:
        now, end = r.monotonic(), r.monotonic() + seconds
        while model:
            i, (at, _) = min(model.items(), key=lambda kv: kv[1])
            if at > end:
                break
            now = max(now, at)
            expected.append((i, now))
            del model[i]
            nxt = rearm[len(expected) % len(rearm)]
            arm(i, NEVER if nxt == NEVER else now + nxt)

    for op in ops:
        if op[0] == "register":
            i = len(timers)
            live.add(i)
            arm(i, op[1])
            timers.append(r.register_timer(callback(i), op[1], f"t{i}"))
        elif op[0] == "update" and op[1] < len(timers):
            arm(op[1], op[2])
            r.update_timer(timers[op[1]], op[2])
        elif op[0] == "unregister" and op[1] < len(timers):
            live.discard(op[1])
            model.pop(op[1], None)
            r.unregister_timer(timers[op[1]])
        elif op[0] == "advance":
            model_advance(op[1])
            r.advance(op[1])
        assert r.live_timers == len(live)
        assert r.queued_timers == len(model) <= r.live_timers
        assert r.next_waketime() == min((at for at, _ in model.values()), default=NEVER)
    assert fired == expected


def test_re_arming_a_timer_10000_times_keeps_one_entry():
    r = ManualReactor()
    idle = r.register_timer(lambda t: NEVER, 300.0, "idle")
    for i in range(10_000):
        r.update_timer(idle, 300.0 + i)
        r.advance(0.001)
    assert r.queued_timers == 1 and r.live_timers == 1
    r.update_timer(idle, NEVER)
    assert r.queued_timers == 0
