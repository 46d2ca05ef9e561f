"""A callback that raised on lgpio's callback thread must not end that thread.

lgpio 0.2.2.0's callback thread (``lgpio._callback_thread.run``) calls each callback with
no try/except, so an exception that reached it would end the thread (``lgpio._notify_thread``)
and every later edge, the lid's, the button's and the beam's, would be lost. The hang
harness (tests/kernel/harness.py, ``HARNESS_RAISE=1``) adds one more subscriber of the
lid-closed contact that raises on the lid's first leaving closed; then the NEXT lid edge
must still stop the roller, on lgpio's thread.

In a file of its own: its firmware must not meet test_pin_thread's, which holds the lines
for its whole module.
"""

from __future__ import annotations

import time

from kerneltier import LGPIO_THREAD, LID_MAX, RAISED, Firmware, Pty, World, record, settle
from lines import GpioTrace, Roller
from test_pin_thread import CONFIG, stopped_by


def test_after_a_callback_raised_on_lgpios_thread_the_next_lid_edge_still_stops_the_roller(
        tmp_path):
    """After one lid-closed subscriber raised on lgpio's thread, the NEXT lid edge still
    stops the roller (and the button, the beam and the lid still reach the firmware)."""
    world = World("mild", cards=500)
    pty = Pty()
    fw = Firmware(tmp_path / "raise", toml=CONFIG, console_port=pty.path, harness=True,
                  env={"HARNESS_RAISE": "1"})
    roller = Roller()
    try:
        fw.ready(timeout=300)
        pty.wait_line(lambda line: "launcher" in line.lower(), 30)
        settle(world, pty)
        mark, lines = fw.mark(), len(fw.lines)
        world.do(lambda sim: sim.press())
        fw.event("shoot", mark)
        assert roller.is_running(1.0), "the roller does not run"
        opened = world.do(lambda sim: sim.open_lid(full=False))
        raised = fw.wait_for(lambda: next((t for t, line in fw.lines[lines:]
                                           if line.startswith(RAISED)), None), 10, "the raise")
        first = roller.low_since(timeout=2.0)
        try:
            settle(world, pty, timeout=20)
            mark = fw.mark()
            world.do(lambda sim: sim.press())
            fw.event("shoot", mark)
            assert roller.is_running(1.0), "the roller does not run"
            time.sleep(0.02)
            trace = GpioTrace()
            try:
                opened_again = world.do(lambda sim: sim.open_lid(full=False))
                second = roller.low_since(timeout=2.0)
            finally:
                trace.stop()
            assert second is not None, "the roller still ran 2 s after the lid opened"
            thread, wrong = stopped_by(trace, opened_again, LGPIO_THREAD, "the next edge")
        except AssertionError as exc:
            died = [line for _, line in fw.lines if "Exception in thread" in line]
            why = died[0] if died else "no thread's death logged"
            raise AssertionError(
                f"after one lid_closed subscriber raised on lgpio's callback thread, the "
                f"next edges did not reach the firmware ({why}): {exc}") from None
    finally:
        roller.close()
        fw.stop()
        pty.close()
        world.close()
    delay = max(0.0, second - opened_again)
    record("raised", raise_after_edge_s=raised - opened, first_stop_s=None if first is None
           else max(0.0, first - opened), next_edge_to_off_s=delay, next_stop_thread=thread,
           limit_s=LID_MAX)
    assert not wrong, wrong
    assert raised >= opened
    assert first is not None, "the lid edge whose subscriber raised did not stop the roller"
    assert delay <= LID_MAX, f"the next lid edge stopped the roller after {delay * 1e3:.0f} ms"
