"""Where the command line writes: the user's state folder for the simulated launcher, and
output paths given on the command line (one that cannot be written is one line, not a
traceback, and the line names the option)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from launcher.core import config
from launcher.core.errors import ConfigError


def state_dir() -> Path:
    """The user's state folder for the launcher: ``$XDG_STATE_HOME/launcher``, else
    ``~/.local/state/launcher`` (one of the folders ``state.path`` may name)."""
    from launcher.firmware.places import user_state_folder

    return user_state_folder()


def simulated_state(settings: config.Settings, name: str,
                    given: str | None = None) -> config.Settings:
    """``settings`` for a simulated launcher: its state in ``given`` if named, else where the
    config file puts it, except that the Pi's own path (the default, /var/lib/launcher/...)
    becomes ``name`` in the user's state folder: a laptop never writes the Pi's state."""
    if given:
        path = Path(given)
    elif settings.state_path == Path(config.default_raw()["state"]["path"]):
        path = state_dir() / name
    else:
        return settings
    return replace(settings, state_path=path)


def _reason(exc: OSError, path: Path | str) -> str:
    where = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(path) else ""
    return f"cannot write there: {exc.strerror or exc}{where}"


def output_dir(path: Path | str, option: str) -> Path:
    """Make the folder ``path`` (and its parents); an ``OSError`` becomes a ``ConfigError``."""
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise ConfigError(option, str(path), "is a file; name a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(option, str(path), _reason(exc, path)) from None
    return folder


@contextlib.contextmanager
def output_folder(path: Path | str, option: str) -> Iterator[Path]:
    """``output_dir`` for what the block writes; a block that does not finish (an error,
    Ctrl-C) takes away the folders made for it that are still empty, so an interrupted run
    leaves nothing behind."""
    folder = Path(path)
    made = [p for p in (folder, *folder.parents) if not p.exists()]  # the deepest first
    output_dir(folder, option)
    try:
        yield folder
    except BaseException:
        for p in made:
            try:
                p.rmdir()  # only when empty
            except OSError:
                break
        raise


@contextlib.contextmanager
def writing(path: Path | str, option: str) -> Iterator[None]:
    """Inside, an ``OSError`` (read-only, no space, /proc) names ``option`` and the path."""
    try:
        yield
    except OSError as exc:
        raise ConfigError(option, str(path), _reason(exc, path)) from None
