"""Fixtures of the firmware tests: a console in-process, on a pty pair, or on a pty of its own."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from consoles import Fixture, PtyUnit, Session


@pytest.fixture
def fx() -> Iterator[Fixture]:
    f = Fixture()
    yield f
    f.close()


@pytest.fixture
def unit() -> Iterator[PtyUnit]:
    u = PtyUnit()
    yield u
    u.close()


@pytest.fixture
def session() -> Iterator[Session]:
    b = Session()
    yield b
    b.close()

