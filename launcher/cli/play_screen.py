"""The live view of ``launcher play``: what it shows (a snapshot) and how it is drawn.

Drawn with rich (the ``tui`` extra) when it is installed, else with plain ANSI text; either
way it fits the terminal: the title, side, state and cards stay on screen, and the event
list takes whatever rows are left. rich is imported inside the functions that draw with it,
so nothing here costs start-up time when it is not used.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TextIO

TITLE = "UNO FLIP ATTACK LAUNCHER — SIMULATED BOARD (no hardware is driven)"
KEY_ROWS = (
    "[space] press  [o] open lid fully  [a] lid ajar  [c] close lid  [r] refill",
    "[j] jam  [u] unjam  [s] sleep  [w] wake  [x] clear fault  [:] command  [q] quit",
)
SIDE_STYLE = {"mild": "bold black on yellow", "wild": "bold white on magenta"}


@dataclass(frozen=True)
class Snapshot:
    """Everything the screen shows, read once per frame."""

    seed: int
    side: str
    state: str
    escalation: int
    cards: str
    last_shot: str
    sleep_in: str
    motor: str
    lid: str
    fault: str
    events: Sequence[str] = ()
    warnings: Sequence[str] = ()
    typing: str = ""  # a console command being typed after ':'


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def shot_text(data: dict[str, Any]) -> str:
    """The last shot as the screen says it: ``1 card (mild)``, ``5 cards (wild)``."""
    return f"{plural(int(data['cards']), 'card')} ({data['side']})"


def cards_text(inventory: Any, cartridge: int, in_slot: bool) -> str:
    """The firmware's count, and where the simulated cards really are when that differs.

    After a jam the stuck card is in neither place the firmware counts: it left the
    cartridge but never crossed the beam. Saying so beats "84 (cartridge holds 83)".
    """
    if isinstance(inventory, int) and inventory == cartridge and not in_slot:
        return str(inventory)
    where = f"cartridge {cartridge}"
    if in_slot:
        where += " + 1 jammed"
    return f"{inventory} ({where})"


def snapshot(app: Any, sim: Any, *, seed: int, last_shot: str, events: Sequence[str] = (),
             warnings: Sequence[str] = (), typing: str = "") -> Snapshot:
    """Read the firmware's status and the simulated board into a ``Snapshot``."""
    st = app.status()
    return Snapshot(
        seed=seed, side=st["side"], state=st["state"], escalation=st["escalation"],
        cards=cards_text(st["inventory"], len(sim.cartridge), sim.in_beam is not None),
        last_shot=last_shot,
        sleep_in="-" if st["sleep_in"] is None else f"{st['sleep_in']:.0f} s",
        motor=f"running {st['motor']:.2f}" if st["motor"] else "off",
        lid=st["lid"], fault=st["fault"], events=list(events), warnings=list(warnings),
        typing=typing)


def _status_rows(s: Snapshot) -> list[tuple[str, str, str, str]]:
    return [
        ("side", s.side.upper(), "state", s.state),
        ("escalation", str(s.escalation), "cards", s.cards),
        ("last shot", s.last_shot, "sleep in", s.sleep_in),
        ("motor", s.motor, "lid", s.lid),
        ("fault", s.fault, "seed", str(s.seed)),
    ]


# --- plain text -------------------------------------------------------------------------


def render_plain(s: Snapshot, width: int, height: int) -> list[str]:
    """The screen as at most ``height`` lines of at most ``width`` characters."""
    head = [TITLE]
    for a, b, c, d in _status_rows(s):
        head.append(f"  {a:<11}{b:<16}{c:<9}{d}")
    head += list(KEY_ROWS)
    head += [f"! {w}" for w in s.warnings]
    tail = [f":{s.typing}" if s.typing else ""]
    room = max(0, height - len(head) - len(tail) - 1)
    events = list(s.events)[-room:] if room else []
    lines = [*head, "-- events " + "-" * max(0, width - 10), *events, *tail]
    return [line[:width] for line in lines[:height]]


class PlainView:
    """Redraws the whole screen with ANSI codes; sized from the terminal at every frame."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def start(self) -> None:
        pass

    def draw(self, s: Snapshot) -> None:
        size = shutil.get_terminal_size()
        self.out.write("\x1b[H\x1b[2J" + "\n".join(render_plain(s, size.columns, size.lines)))
        self.out.flush()

    def stop(self) -> None:
        self.out.write("\n")
        self.out.flush()


# --- rich ---------------------------------------------------------------------------------


class _Events:
    """The newest events that fit the height rich gives this region."""

    def __init__(self, events: Sequence[str]) -> None:
        self.events = events

    def __rich_console__(self, console: Any, options: Any) -> Any:
        from rich.text import Text

        rows = options.height or options.max_height or len(self.events)
        for line in list(self.events)[-rows:] if rows > 0 else []:
            yield Text(line, no_wrap=True, overflow="ellipsis")


def render_rich(s: Snapshot) -> Any:
    """The screen as a rich ``Layout`` that fills the console it is printed on."""
    from rich.layout import Layout
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    title = Text(TITLE, style="bold reverse", no_wrap=True, overflow="ellipsis")
    grid = Table.grid(padding=(0, 2), expand=True)
    for ratio in (2, 3):  # the right-hand values (cards, state) are the longer ones
        grid.add_column(style="dim", no_wrap=True)
        grid.add_column(no_wrap=True, overflow="ellipsis", ratio=ratio)
    for a, b, c, d in _status_rows(s):
        cell: Any = b
        if a == "side":
            cell = Text(f" {b} ", style=SIDE_STYLE.get(s.side, ""))
        elif a == "fault" and b != "none":
            cell = Text(b, style="bold red")
        grid.add_row(a, cell, c, d)
    keys = Text("\n".join(KEY_ROWS), style="cyan", no_wrap=True, overflow="ellipsis")
    # Never an empty Text: rich's Layout draws a placeholder box for a falsy renderable.
    footer = Text(f":{s.typing}" if s.typing else "; ".join(s.warnings) or " ", no_wrap=True,
                  overflow="ellipsis", style="bold" if s.typing else "yellow")
    root = Layout()
    root.split_column(
        Layout(title, size=1),
        Layout(Panel(grid, padding=(0, 1)), size=len(_status_rows(s)) + 2),
        Layout(keys, size=len(KEY_ROWS)),
        Layout(Panel(_Events(s.events), title="events", title_align="left", padding=(0, 1)),
               ratio=1, minimum_size=3),
        Layout(footer, size=1),
    )
    return root


class RichView:
    """rich's Live display on the alternate screen, refreshed by the caller's timer."""

    def __init__(self, out: TextIO) -> None:
        from rich.console import Console
        from rich.live import Live

        self.console = Console(file=out)
        self.live = Live(console=self.console, screen=True, auto_refresh=False,
                         redirect_stdout=False, redirect_stderr=False)

    def start(self) -> None:
        self.live.start()

    def draw(self, s: Snapshot) -> None:
        self.live.update(render_rich(s), refresh=True)

    def stop(self) -> None:
        self.live.stop()


def make_view(out: TextIO) -> RichView | PlainView:
    """rich's view when the ``tui`` extra is installed, else the plain one."""
    try:
        return RichView(out)
    except ImportError:
        return PlainView(out)


def export(s: Snapshot, width: int, height: int, svg: str | None = None) -> str:
    """Render once at a fixed size (tests, the README screenshot); the text, and an SVG."""
    import io

    from rich.console import Console

    console = Console(width=width, height=height, record=True, file=io.StringIO(),
                      force_terminal=True, color_system="truecolor")
    console.print(render_rich(s))
    if svg is not None:
        console.save_svg(svg, title="launcher play", clear=False)
    return console.export_text()
