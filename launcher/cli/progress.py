"""The progress bars of the long verbs (``simulate``, ``tune``): rich's on a terminal, a plain
one elsewhere when asked for, none otherwise."""

from __future__ import annotations

import sys
from typing import Any, TextIO


class Progress:
    """A plain progress bar on a stream (no rich, or not a terminal); redraws only when the
    shown share changes."""

    def __init__(self, total: int, label: str, stream: TextIO | None = None,
                 width: int = 30) -> None:
        self.total = max(total, 1)
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.done = 0
        self._shown = -1

    def update(self, n: int = 1) -> None:
        self.done += n
        filled = self.done * self.width // self.total
        if filled != self._shown:
            self._shown = filled
            bar = "#" * filled + "." * (self.width - filled)
            self.stream.write(f"\r{self.label} [{bar}] {self.done}/{self.total}")
            self.stream.flush()

    def close(self) -> None:
        if self._shown >= 0:
            self.stream.write("\n")
            self.stream.flush()


class RichBar:
    """rich's progress bar: count, rate, elapsed and remaining time, on a terminal's stderr."""

    def __init__(self, total: int, label: str, console: Any = None) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            ProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as _Progress
        from rich.text import Text

        class Rate(ProgressColumn):
            def render(self, task: Any) -> Text:
                speed = task.finished_speed or task.speed
                return Text("" if speed is None else f"{speed:.1f} games/s", style="cyan")

        self._progress = _Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), Rate(),
            TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(),
            console=console if console is not None else Console(stderr=True), transient=False)
        self._task = self._progress.add_task(label, total=max(total, 1))
        self._progress.start()

    def update(self, n: int = 1) -> None:
        self._progress.advance(self._task, n)

    def close(self) -> None:
        self._progress.stop()


def progress_bar(total: int, label: str, forced: bool, disabled: bool,
                 terminal: bool) -> RichBar | Progress | None:
    """The bar for ``total`` steps: rich's on a terminal (if installed), a plain one when
    ``--progress`` asks for it elsewhere, none with ``--no-progress`` or off a terminal."""
    if disabled or not (forced or terminal):
        return None
    if terminal:
        try:
            return RichBar(total, label)
        except ImportError:
            pass
    return Progress(total, label)
