"""The kernel tier: the real firmware process on the real lgpio, on the kernel's gpio-sim.

These tests run only inside the VM that ``make test-kernel`` boots (.ci/kernel/run): it
loads gpio-sim, makes a 54-line chip the only /dev/gpiochip0, fakes a Pi 5 revision in
/proc/cpuinfo, and sets ``LAUNCHER_KERNEL_TIER=1`` and ``GPIOSIM_SYSFS``. Every test here
carries the ``kernel`` marker, which plain ``pytest`` deselects (pyproject addopts); asked
for outside the VM (``pytest -m kernel``), they fail with one line saying so.

The helpers are in kerneltier.py: ``World`` (the simulator's one physics model on the
gpio-sim pin port) and ``Firmware`` (``launcher run`` started as systemd would); what the
lines do is read by lines.py.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kerneltier import HERE, IN_VM, Firmware, World
from lines import PINS, pull


def pytest_configure(config: pytest.Config) -> None:
    if IN_VM:
        # The real lgpio starts its notification thread when imported: import it before any
        # test, so that no test is blamed for a thread that lives as long as the process.
        import lgpio  # noqa: F401


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).is_relative_to(HERE):
            item.add_marker(pytest.mark.kernel)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("kernel") and not IN_VM:
        pytest.fail("the kernel tier runs only inside its VM: make test-kernel", pytrace=False)


@pytest.fixture
def world_factory() -> Iterator[Callable[..., World]]:
    made: list[World] = []

    def make(side: str = "mild", cards: int = 60) -> World:
        world = World(side, cards)
        made.append(world)
        return world

    yield make
    for world in made:
        world.close()


@pytest.fixture
def firmware(tmp_path: Path) -> Iterator[Callable[..., Firmware]]:
    made: list[Firmware] = []

    def start(name: str = "fw", folder: Path | None = None, **kwargs: Any) -> Firmware:
        fw = Firmware(folder or tmp_path / name, **kwargs)
        made.append(fw)
        return fw

    yield start
    for fw in made:
        with contextlib.suppress(Exception):
            fw.stop()


@pytest.fixture
def pulled_up() -> Iterator[Callable[..., None]]:
    """``pulled_up(*names)``: gpio-sim pulls these lines UP from now on, so a line the
    firmware lets go of reads high and only a drive brings it low; pulled down again after
    the test (gpio-sim's default)."""
    done: list[int] = []

    def up(*names: str) -> None:
        for name in names:
            number = getattr(PINS, name)
            pull(number, "up")
            done.append(number)

    yield up
    for number in done:
        pull(number, "down")
