"""Errors of the launcher: each one is catchable as the project's and as a built-in."""

from __future__ import annotations


class LauncherError(Exception):
    """Root of every error this project raises on purpose."""


class ConfigError(LauncherError, ValueError):
    """A configuration value is missing, unknown or out of range; the message names the key."""

    def __init__(self, key: str, value: object, reason: str) -> None:
        self.key = key
        self.value = value
        self.reason = reason
        shown = "(missing)" if value is _MISSING else repr(value)
        super().__init__(f"{key} = {shown}: {reason}")

    def __reduce__(self) -> tuple[type, tuple[str, object, str]]:
        # Rebuilt from its three parts: a worker process of `launcher simulate` sends it back.
        return type(self), (self.key, self.value, self.reason)


class _Missing:
    def __repr__(self) -> str:
        return "(missing)"


_MISSING = _Missing()
MISSING: object = _MISSING
