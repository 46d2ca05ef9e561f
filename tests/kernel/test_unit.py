"""One unit for the module: ``launcher run`` as systemd starts it, its console on a pty.

Shots on both sides and a few seeds, the lid leaving closed mid-shot (>= 200 tries), the
console, and the state file across a restart. One firmware start serves them all: under
QEMU without KVM a start costs tens of seconds.
"""

from __future__ import annotations

import importlib.util
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import kerneltier
import pytest
from kerneltier import ALL_OUTPUTS, LID_MAX, LID_P50, Firmware, Pty, World, percentile, record
from lines import LINE_INPUT, LINE_OUTPUT, LINE_USED, PINS, Roller, chip_info, line_info

LID_TRIES = 200
# s, wall time, in a QEMU guest without KVM (Python runs some 10-40x slower than on the host;
# a bare lgpio callback, the floor, took p50 3-13 ms and up to 12-104 ms here): the lid
# leaving closed stops the roller within these, by whichever path comes first. That the
# stop waits for nothing but the pin thread is shown by test_pin_thread's tries with the
# reactor hung, and in microseconds on the host (tests/firmware/test_interlock_threads.py).
# They are the pin-thread budgets (kerneltier.LID_P50, LID_MAX): 20 ms and 150 ms were
# exceeded under a load of 6 on the host (p50 27.5 ms, max 229 ms, the firmware unchanged).
LID_BUDGET_P50 = LID_P50
LID_BUDGET_MAX = LID_MAX
# polls/s of the outputs by the physics (asked: 1000), at least: one every 10 ms, a third of
# the 30 ms a card blocks the beam (hal.sim.Physics.beam_time).
MIN_RATE = 100
# The lease is 500 ms here, not 100: under a load of 4-8 on the host this guest's reactor
# was once starved past 100 ms mid-shot, and the lapse (rightly) faulted the unit. The
# lease's own tests (test_death, test_pin_thread) set theirs.
# Presses closer than the mash guard are ignored; 250 ms by default, 60 ms here so that 200
# tries of the lid fit the tier's time (the guard is for hands, not for what is tested).
GUARD = '[timing]\nmash_guard_ms = 60\n[motor]\nlease_ms = 500\n'


class Unit:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.world = World("mild", cards=5000)
        self.pty = Pty()
        try:
            self.fw = self._start()
        except BaseException:
            self.pty.close()  # (the failed start's firmware is stopped by _start)
            self.world.close()
            raise

    def _start(self) -> Firmware:
        fw = Firmware(self.folder, seed=1, console_port=self.pty.path, toml=GUARD,
                      watchdog_usec=10_000_000)  # WatchdogSec=10, as systemd/launcher.service
        try:
            fw.ready(timeout=180)
            self.pty.wait_line(lambda line: "launcher" in line.lower(), 30)  # the banner
        except BaseException:
            fw.stop()  # a start that failed must not leave the lines held for the next test
            raise
        return fw

    def close(self) -> None:
        self.fw.stop()
        self.pty.close()
        self.world.close()


@pytest.fixture(scope="module")
def unit(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Unit]:
    u = Unit(tmp_path_factory.mktemp("unit"))
    yield u
    u.close()


def shoot_twice(unit: Unit, side: str) -> list[int]:
    """Press until two shots: each runs the roller and ends with the cards it drew."""
    fw, world = unit.fw, unit.world
    roller = Roller()
    sizes: list[int] = []
    try:
        for _ in range(14):  # a dry streak never passes len(hazard) - 1 (5 on Wild)
            settle(unit)
            mark = fw.mark()
            before = world.ejected()
            world.do(lambda sim: sim.press())
            _, kind, data = fw.first(("dry", "shoot"), mark)
            assert data["side"] == side
            if kind == "dry":
                time.sleep(0.1)  # past the mash guard
                continue
            asked = int(data["cards"])
            assert roller.is_running(1.0), "the roller does not run"
            shot = fw.event("shot", mark, timeout=20)
            assert shot[2]["cards"] == str(asked), fw.log()[-2000:]
            assert roller.low_since(hold=0.05, timeout=2) is not None, "the roller did not stop"
            time.sleep(0.2)
            assert world.ejected() - before == asked
            sizes.append(asked)
            if len(sizes) == 2:
                return sizes
            time.sleep(0.1)
    finally:
        roller.close()
    raise AssertionError(f"fewer than two shots in 14 presses on {side}")


INPUTS = ("button", "lid_closed", "lid_open", "exit_beam", "home", "yellow_back")


def test_the_firmware_runs_the_real_lgpio_extension_on_a_gpio_sim_chip(unit):
    """What the firmware process itself holds: the real ``_lgpio`` extension (the wheel's,
    in this venv: not tests/hal's fake) mapped into it, and one open gpiochip, labelled by
    gpio-sim, whose motor lines it claimed as outputs and whose switches as inputs."""
    pid = unit.fw.proc.pid
    maps = Path(f"/proc/{pid}/maps").read_text().splitlines()
    loaded = sorted({line.split()[-1] for line in maps if "/_lgpio" in line})
    spec = importlib.util.find_spec("_lgpio")
    assert spec is not None and spec.origin is not None, "no _lgpio extension in this venv"
    chips = sorted({os.readlink(fd) for fd in Path(f"/proc/{pid}/fd").iterdir()
                    if os.readlink(fd).startswith("/dev/gpiochip")})
    assert chips, "the firmware holds no gpiochip"
    name, label, count = chip_info(chips[0])
    lines = {key: line_info(chips[0], getattr(PINS, key)) for key in (*ALL_OUTPUTS, *INPUTS)}
    record("library", extension=loaded, chips=chips, chip_name=name, label=label,
           lines=count, consumers=sorted({consumer for consumer, _ in lines.values()}))
    assert loaded == [os.path.realpath(spec.origin)], (loaded, spec.origin)
    assert spec.origin.endswith(".so") and "site-packages" in spec.origin
    assert chips == ["/dev/gpiochip0"] and label.startswith("gpio-sim"), (chips, label)
    assert count == int(os.environ["GPIOSIM_LINES"])
    wrong = {key: flags for key, (_, flags) in lines.items()
             if flags & LINE_USED == 0 or flags & (LINE_OUTPUT if key in ALL_OUTPUTS
                                                   else LINE_INPUT) == 0}
    assert not wrong, f"lines not claimed as the firmware claims them: {wrong}"


def test_press_runs_the_roller_until_the_beam_counted_the_cards_mild_and_wild(unit):
    figures: dict[str, list[int]] = {}
    for side in ("mild", "wild"):
        if side == "wild":
            # Flip as a player does: lift the lid fully, the cartridge turns, close it.
            mark = unit.fw.mark()
            unit.world.do(lambda sim: sim.open_lid(full=True))
            unit.fw.event("flip", mark, timeout=30)
            settle(unit)
            assert unit.world.do_get(lambda sim: sim.side) == "wild"
        for seed in (1, 7, 23):
            assert unit.pty.command(f"seed {seed}").startswith("ok")
            figures[f"{side}-seed{seed}"] = shoot_twice(unit, side)
    record("shots", sizes=figures, sampling_rate_hz=unit.world.port.rate,
           period_s=unit.world.port.period, window_s=unit.world.port.window, min_rate_hz=MIN_RATE)
    assert unit.world.port.rate >= MIN_RATE, f"{unit.world.port.rate:.0f} polls/s"


def test_the_lid_leaving_closed_mid_shot_stops_the_roller_within_a_few_ms(unit):
    fw, world = unit.fw, unit.world
    settle(unit)  # the module's unit, as the test before left it (a jam, a card in the beam)
    for command in ("profile deal 12", "load 200"):
        answer = unit.pty.command(command)
        assert answer.startswith("ok"), f"{command}: {answer}\n{fw.log()[-2000:]}"
    roller = Roller()
    delays: list[float] = []
    skipped = 0
    try:
        while len(delays) < LID_TRIES:
            settle(unit)
            mark = fw.mark()
            world.do(lambda sim: sim.press())
            _, kind, _ = fw.first(("shoot", "fault", "dry"), mark, timeout=10)
            if kind != "shoot":  # a loaded VM can lose a race with the beam: not the lid's
                skipped += 1
                assert skipped <= 20, fw.log()[-2000:]
                continue
            assert roller.is_running(1.0), "the roller does not run"
            time.sleep(0.02)
            opened = world.do(lambda sim: sim.open_lid(full=False))
            low = roller.low_since(timeout=2.0)
            delays.append(2.0 if low is None else max(0.0, low - opened))
            world.do(lambda sim: sim.close_lid())
            time.sleep(0.1)  # the mash guard
    finally:
        roller.close()
        unit.pty.command("profile flip-attack")
    p50, worst = percentile(delays, 0.5), max(delays)
    record("lid", tries=len(delays), skipped=skipped, p50_s=p50, max_s=worst,
           p99_s=percentile(delays, 0.99), sampling_rate_hz=world.port.rate,
           limit_p50_s=LID_BUDGET_P50, limit_max_s=LID_BUDGET_MAX)
    assert len(delays) >= LID_TRIES
    assert p50 <= LID_BUDGET_P50 and worst <= LID_BUDGET_MAX, (
        f"lid -> roller off: p50 {p50 * 1e3:.2f} ms, max {worst * 1e3:.2f} ms")


def settle(unit: Unit) -> None:
    kerneltier.settle(unit.world, unit.pty)


def test_console_on_a_pty_and_the_state_file_across_a_restart(unit, firmware):
    settle(unit)
    status = unit.pty.command("status")
    assert status.startswith("ok state=") and "simulated=false" in status, status
    mark = unit.fw.mark()
    assert unit.pty.command("press").startswith("ok")
    unit.fw.first(("dry", "shoot"), mark, timeout=10)
    unit.fw.wait_for(lambda: "state=ready" in unit.pty.command("status"), 30, "ready again")
    before = unit.pty.command("inventory")
    side = unit.world.do_get(lambda sim: sim.side)
    unit.fw.stop()
    saved = json.loads((unit.folder / "state.json").read_text())
    # The same unit started again, as systemd's Restart= would: same config, same state.
    fw = firmware(folder=unit.folder, seed=1, console_port=unit.pty.path, toml=GUARD,
                  watchdog_usec=10_000_000)
    fw.ready(timeout=180)
    unit.pty.wait_line(lambda line: "launcher" in line.lower(), 30)
    after = unit.pty.command("inventory")
    assert after == before, (before, after)
    assert f"side={side}" in unit.pty.command("status")  # the sensor's, and memory agrees
    record("console", status=status, inventory=after, state_keys=sorted(saved))
