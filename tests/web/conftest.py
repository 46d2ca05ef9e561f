"""Fixtures of the web tests: a unit with its server, for a module or for one test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from webunit import WebUnit


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebUnit]:
    """One unit for the module's tests that only read it or do not mind what it did."""
    u = WebUnit(tmp_path_factory.mktemp("web"))
    yield u
    u.close()


@pytest.fixture
def unit(tmp_path: Path) -> Iterator[WebUnit]:
    u = WebUnit(tmp_path)
    yield u
    u.close()
