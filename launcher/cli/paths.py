"""Output paths given on the command line: a path that cannot be written is one line, not a
traceback, and the line names the option."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from launcher.core.errors import ConfigError


def _reason(exc: OSError, path: Path | str) -> str:
    where = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(path) else ""
    return f"cannot write there: {exc.strerror or exc}{where}"


def output_dir(path: Path | str, option: str) -> Path:
    """Make the folder ``path`` (and its parents); an ``OSError`` becomes a ``ConfigError``."""
    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(option, str(path), _reason(exc, path)) from None
    return folder


@contextlib.contextmanager
def writing(path: Path | str, option: str) -> Iterator[None]:
    """Inside, an ``OSError`` (read-only, no space, /proc) names ``option`` and the path."""
    try:
        yield
    except OSError as exc:
        raise ConfigError(option, str(path), _reason(exc, path)) from None
