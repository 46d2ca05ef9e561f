"""The live view of ``launcher play``: what it shows (a snapshot) and how it is drawn.

rich draws the screen (the ``tui`` extra) and prompt_toolkit runs the terminal: it reads
every key (an arrow or Esc is a key, never raw escape characters), edits and recalls the
``:`` command line, and shows a long reply in a pane that scrolls. The screen fits the
terminal: the title, side, state and cards stay on screen, and the event list takes
whatever rows are left. Both are imported inside the functions that use them, so nothing
here costs start-up time when it is not used.
"""

from __future__ import annotations

import re
import textwrap
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from launcher.core import machine as m

TITLE = "UNO FLIP ATTACK LAUNCHER — SIMULATED BOARD (no hardware is driven)"
KEY_ROWS = (
    "[space] press  [o] open lid fully  [a] lid ajar  [c] close lid  [r] refill",
    "[j] jam  [u] unjam  [s] sleep  [w] wake  [x] clear fault  [:] command  [q] quit",
)
SIDE_STYLE = {"mild": "bold black on yellow", "wild": "bold white on magenta"}

# The way out of each fault on this screen's keys: what frees the unit first, if anything,
# then how to leave the fault (``x`` is the console's `clear`; a lid cycle is ajar, then
# closed). The fault row reads it; a test checks that every fault code has its line.
LEAVE = "[x] or lid [a] then [c]"
FAULT_WAY_OUT = {
    "jam": f"[u] frees the stuck card, then {LEAVE}",
    "beam_blocked": f"[u] frees the card in the beam, then {LEAVE}",
    "overrun": LEAVE,
    "rotation_timeout": f"{LEAVE}; [o] then turns it again",
    "side_mismatch": f"{LEAVE}; the side is what the sensor reads",
    "interlock": LEAVE,
    "internal": f"a bug (:log shows it): {LEAVE}",
    # Latched (m.PROOFS): repaired, the check must pass again before [x] leaves it.
    "lid_sensor": "latched: fix the lid switch, lid [o] [c], then [x]",
    "power_contact": "latched: fix the power contact, lid [o] [c], then [x]",
    "driver_sleep": "latched: fix nSLEEP, [x] tests it, then [x]",
    "driver_input": "latched: fix the driver input, lid [c], then [x]",
}
TURN_TEXT = {"idle": "still", "run": "turning", "hold": "braked at home", "brake": "stopping"}


def printable_only(text: str) -> str:
    """``text`` without its control characters (a paste may carry escape sequences)."""
    return "".join(c for c in text if c.isprintable())


def way_out(fault: str) -> str:
    """How to get out of ``fault`` (``none``: not in a fault)."""
    return "-" if fault == "none" else FAULT_WAY_OUT.get(fault, LEAVE)


def rotator_text(turn: str, pending: bool) -> str:
    """The rotator as the screen says it: ``still``, ``turning``, ``still, turn waiting``."""
    text = TURN_TEXT.get(turn, turn)
    return f"{text}, turn waiting" if pending and turn == "idle" else text


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
    led: str = ""  # what the status LED shows, and what that means
    rotator: str = "still"
    last_cue: str = "none yet"
    events: Sequence[str] = ()
    warnings: Sequence[str] = ()
    typing: str = ""  # a console command being typed after ':'
    resumed: bool = False  # started from the state file (else a fresh unit)


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
             warnings: Sequence[str] = (), typing: str = "",
             last_cue: str = "none yet", resumed: bool = False) -> Snapshot:
    """Read the firmware's status and the simulated board into a ``Snapshot``."""
    st = app.status()
    return Snapshot(
        led=m.led_meaning(app.led.pattern),
        rotator=rotator_text(app.actuators.turn, app.machine.turn_owed),
        last_cue=last_cue,
        seed=seed, side=st["side"], state=st["state"], escalation=st["escalation"],
        cards=cards_text(st["inventory"], len(sim.cartridge), sim.in_beam is not None),
        last_shot=last_shot,
        sleep_in="-" if st["sleep_in"] is None else f"{st['sleep_in']:.0f} s",
        motor=f"running {st['motor']:.2f}" if st["motor"] else "off",
        lid=st["lid"], fault=st["fault"], events=list(events), warnings=list(warnings),
        typing=typing, resumed=resumed)


def _status_rows(s: Snapshot) -> list[tuple[str, str, str, str]]:
    return [
        ("side", s.side.upper(), "state", s.state),
        ("escalation", str(s.escalation), "cards", s.cards),
        ("last shot", s.last_shot, "sleep in", s.sleep_in),
        ("motor", s.motor, "lid", s.lid),
        ("rotator", s.rotator, "last cue", s.last_cue),
        ("fault", s.fault, "seed", f"{s.seed}, {'resumed' if s.resumed else 'fresh'}"),
    ]


def _wide_rows(s: Snapshot) -> list[tuple[str, str]]:
    """The rows too long to share a line: the LED's meaning, and the way out of a fault."""
    return [("LED", s.led), ("way out", way_out(s.fault))]


STATUS_ROWS = 6  # _status_rows; the wide rows take a line or more each (wide_lines)
VALUE_INDENT = 16  # the status box's border and padding (4), a label (10) and the gap (2)


def wide_lines(s: Snapshot, width: int) -> list[tuple[str, list[str]]]:
    """Each wide row's value as the lines it takes at ``width`` (wrapped at words, never
    cut: "fast blink: busy, ... the lid open" is longer than 80 columns leave it)."""
    room = max(8, width - VALUE_INDENT)
    return [(label, textwrap.wrap(value, room) or [""]) for label, value in _wide_rows(s)]


def head_rows(s: Snapshot | None, width: int) -> int:
    """The rows above the event list: the title, the status box, the key rows."""
    wide = 2 if s is None else sum(len(lines) for _, lines in wide_lines(s, width))
    return 1 + STATUS_ROWS + wide + 2 + len(KEY_ROWS)


def event_rows(height: int, head: int | None = None) -> int:
    """How many event lines a screen ``height`` rows high shows (2 borders, 1 footer) under
    ``head`` rows (the status box's usual size by default)."""
    return max(1, height - (head_rows(None, 0) if head is None else head) - 3)


# --- rich ---------------------------------------------------------------------------------


def wrap(line: str, width: int) -> list[str]:
    """One line as the rows it takes at ``width``: wrapped at words, the rest indented."""
    return textwrap.wrap(line, max(8, width), subsequent_indent="    ") or [""]


# A row of two columns (`help`'s command and what it does): a first field, two spaces or
# more, then the text.
_COLUMNS = re.compile(r"(\S(?:.*?\S)?\s{2,})(\S.*)")


def pane_rows(line: str, width: int) -> list[str]:
    """A reply line as the pane shows it: without the ``// `` that marks a row of a reply
    on the wire, and a two-column row's text wrapped under its own column, not under the
    first one (`help`'s descriptions beside their commands)."""
    text = line.removeprefix("// ")
    columns = _COLUMNS.fullmatch(text)
    if columns is None or len(columns.group(1)) > width - 24:  # no room beside it: as a line
        return wrap(text, width)
    head = columns.group(1)
    rows = textwrap.wrap(columns.group(2), max(8, width - len(head))) or [""]
    return [head + rows[0], *(" " * len(head) + row for row in rows[1:])]


class _Events:
    """The newest events that fit the height rich gives this region, a long one wrapped."""

    def __init__(self, events: Sequence[str]) -> None:
        self.events = events

    def __rich_console__(self, console: Any, options: Any) -> Any:
        from rich.text import Text

        rows = options.height or options.max_height or len(self.events)
        shown: list[str] = []
        for line in reversed(self.events):  # from the newest, until the region is full
            if len(shown) >= rows:
                break
            shown[:0] = wrap(line, options.max_width)
        for row in shown[-rows:] if rows > 0 else []:
            yield Text(row, no_wrap=True, overflow="ellipsis")


def render_rich(s: Snapshot, width: int, footer: bool = True) -> Any:
    """The screen as a rich ``Layout`` that fills a console ``width`` columns wide (without
    the last line when ``footer`` is False: the live screen's command line goes there)."""
    from rich.console import Group
    from rich.layout import Layout
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    title = Text(TITLE, style="bold reverse", no_wrap=True, overflow="ellipsis")
    grid = Table.grid(padding=(0, 2), expand=True)
    for ratio in (2, 3):  # the right-hand values (cards, state) are the longer ones
        grid.add_column(style="dim", no_wrap=True, min_width=10)
        grid.add_column(no_wrap=True, overflow="ellipsis", ratio=ratio)
    for a, b, c, d in _status_rows(s):
        cell: Any = b
        if a == "side":
            cell = Text(f" {b} ", style=SIDE_STYLE.get(s.side, ""))
        elif a == "fault" and b != "none":
            cell = Text(b, style="bold red")
        grid.add_row(a, cell, c, d)
    wide = Table.grid(padding=(0, 2), expand=True)
    wide.add_column(style="dim", no_wrap=True, min_width=10)
    wide.add_column(no_wrap=True, overflow="ellipsis", ratio=1)
    rows = wide_lines(s, width)
    for a, lines in rows:
        bold = a == "way out" and lines != ["-"]
        wide.add_row(a, Text("\n".join(lines), style="bold" if bold else ""))
    keys = Text("\n".join(KEY_ROWS), style="cyan", no_wrap=True, overflow="ellipsis")
    parts = [
        Layout(title, size=1),
        Layout(Panel(Group(grid, wide), padding=(0, 1)),
               size=STATUS_ROWS + sum(len(lines) for _, lines in rows) + 2),
        Layout(keys, size=len(KEY_ROWS)),
        Layout(Panel(_Events(s.events), title="events", title_align="left", padding=(0, 1)),
               ratio=1, minimum_size=3),
    ]
    if footer:
        # Never an empty Text: rich's Layout draws a placeholder box for a falsy renderable.
        parts.append(Layout(Text(f":{s.typing}" if s.typing else "; ".join(s.warnings) or " ",
                                 no_wrap=True, overflow="ellipsis",
                                 style="bold" if s.typing else "yellow"), size=1))
    root = Layout()
    root.split_column(*parts)
    return root


def _console(width: int, height: int, **kwargs: Any) -> Any:
    import io

    from rich.console import Console

    return Console(width=width, height=height, file=io.StringIO(), force_terminal=True,
                   color_system="truecolor", **kwargs)


def export(s: Snapshot, width: int, height: int, svg: str | None = None) -> str:
    """Render once at a fixed size (tests, the README screenshot); the text, and an SVG."""
    console = _console(width, height, record=True)
    console.print(render_rich(s, width))
    if svg is not None:
        console.save_svg(svg, title="launcher play", clear=False)
    return console.export_text()


def ansi(s: Snapshot, width: int, height: int) -> str:
    """The screen but its last line, as ANSI text for prompt_toolkit to show."""
    console = _console(width, height)
    console.print(render_rich(s, width, footer=False), end="")
    return console.file.getvalue().rstrip("\n")


def fits(lines: Sequence[str], width: int, height: int, head: int | None = None) -> bool:
    """Whether a reply can be read whole in the event list of a screen this size, under
    ``head`` rows (its box and padding take 4 columns)."""
    return sum(len(wrap(x, width - 4)) for x in lines) <= event_rows(height, head)


# --- the terminal -------------------------------------------------------------------------


class LiveScreen:
    """The terminal, run by prompt_toolkit on a thread of its own.

    The firmware's thread hands it snapshots (``draw``) and long replies (``reply``); both
    are thread-safe. Keys come back through ``on_key`` (one character: a key of the key
    table) and typed command lines through ``on_line``, both called on the screen's thread;
    ``on_exit`` is called once when the screen is gone, whatever ended it.
    """

    def __init__(self, on_key: Callable[[str], None], on_line: Callable[[str], None],
                 on_exit: Callable[[], None], keys: Sequence[str]) -> None:
        self.on_key, self.on_line, self.on_exit = on_key, on_line, on_exit
        self.keys = keys
        self.snapshot: Snapshot | None = None
        self.app: Any = None
        self._started = threading.Event()
        self._thread: threading.Thread | None = None
        self._typing = False
        self._pager: Any = None  # the pane a long reply is shown in, while it is open
        self._cache: tuple[Any, ...] = ()
        self.interrupted = False  # Ctrl-C ended it (the exit status says so), not `q`

    # -- from the firmware's thread --

    def start(self) -> None:
        self.app = self._build()
        self._thread = threading.Thread(target=self._run, name="play-screen", daemon=True)
        self._thread.start()
        self._started.wait(5)

    def draw(self, s: Snapshot) -> None:
        self.snapshot = s
        if self.app is not None:
            self.app.invalidate()  # thread-safe: prompt_toolkit redraws on its own thread

    def reply(self, title: str, lines: Sequence[str]) -> None:
        """Open a reply in the pane if it cannot be read whole in the event list."""
        loop = self.app.loop if self.app is not None else None
        if loop is not None and lines:
            loop.call_soon_threadsafe(self._open_pager, title, list(lines))

    def stop(self) -> None:
        app, thread = self.app, self._thread
        if app is not None and app.loop is not None and app.is_running:
            app.loop.call_soon_threadsafe(lambda: app.exit() if app.is_running else None)
        if thread is not None:
            thread.join(timeout=5)

    # -- on the screen's thread --

    def _run(self) -> None:
        try:
            self.app.run(pre_run=self._started.set, handle_sigint=False)
        finally:
            self._started.set()
            self.on_exit()

    def _size(self) -> tuple[int, int]:
        size = self.app.output.get_size()
        return size.columns, size.rows

    def _screen(self) -> Any:
        from prompt_toolkit.formatted_text import ANSI

        s = self.snapshot
        width, height = self._size()
        key = (s, width, height)
        if self._cache[:1] != (key,):
            text = ansi(s, width, max(1, height - 1)) if s is not None else ""
            self._cache = (key, ANSI(text))
        return self._cache[1]

    def _footer(self) -> Any:
        s = self.snapshot
        if self._pager is not None:
            return [("reverse", " ↑ ↓ PgUp PgDn (space, b) scroll · q, Esc or Enter close ")]
        if s is not None and s.warnings:
            return [("fg:ansiyellow", "; ".join(s.warnings))]
        return ""

    def _open_pager(self, title: str, lines: list[str]) -> None:
        from prompt_toolkit.widgets import TextArea

        width, height = self._size()
        if fits(lines, width, height, head_rows(self.snapshot, width)):
            return
        # Wrapped at words to the pane's width (its frame and scroll bar take 3 columns, and
        # prompt_toolkit wraps a row that fills the last one); it wraps again whatever a
        # smaller terminal cannot hold.
        text = "\n".join(row for line in lines for row in pane_rows(line, width - 4))
        self._pager = TextArea(text, read_only=True, scrollbar=True, wrap_lines=True)
        self._pager_title = f" {title} ({plural(len(lines), 'line')}) "
        self.app.layout.focus(self._pager)
        self.app.invalidate()

    def _close_pager(self) -> None:
        self._pager = None
        self.app.layout.focus(self._input)

    def _build(self) -> Any:
        from prompt_toolkit.application import Application
        from prompt_toolkit.buffer import Buffer
        from prompt_toolkit.filters import Condition
        from prompt_toolkit.history import InMemoryHistory
        from prompt_toolkit.key_binding import KeyBindings
        from prompt_toolkit.key_binding.bindings import scroll
        from prompt_toolkit.keys import Keys
        from prompt_toolkit.layout import (
            ConditionalContainer,
            DynamicContainer,
            FormattedTextControl,
            HSplit,
            Layout,
            Window,
        )
        from prompt_toolkit.layout.controls import BufferControl
        from prompt_toolkit.layout.processors import BeforeInput
        from prompt_toolkit.widgets import Frame

        typing = Condition(lambda: self._typing)
        paging = Condition(lambda: self._pager is not None)
        keys_mode = ~typing & ~paging

        def accept(buffer: Buffer) -> bool:
            line = printable_only(buffer.text)
            self._typing = False
            if line.strip():
                self.on_line(line)
            return False  # clear it (prompt_toolkit has put it in the history)

        buffer = Buffer(multiline=False, history=InMemoryHistory(), accept_handler=accept,
                        read_only=~typing)
        self._input = Window(BufferControl(buffer, input_processors=[
            BeforeInput(lambda: ":" if self._typing else "")]), height=1,
            dont_extend_height=True)
        footer_text = Window(FormattedTextControl(self._footer), height=1)
        screen = Window(FormattedTextControl(self._screen), wrap_lines=False)

        def pager() -> Any:
            return Frame(self._pager, title=self._pager_title) if self._pager else Window()

        body = HSplit([
            ConditionalContainer(screen, filter=~paging),
            ConditionalContainer(DynamicContainer(pager), filter=paging),
            ConditionalContainer(self._input, filter=typing),
            ConditionalContainer(footer_text, filter=~typing),
        ])
        kb = KeyBindings()

        def leave_typing(event: Any = None) -> None:
            self._typing = False
            buffer.reset()

        for key in self.keys:
            kb.add(key, filter=keys_mode)(lambda e, key=key: self.on_key(key))

        @kb.add(":", filter=keys_mode)
        def _(event: Any) -> None:
            self._typing = True  # the buffer is empty: accepting or leaving reset it
            event.app.layout.focus(self._input)

        @kb.add("q", filter=keys_mode)
        def _(event: Any) -> None:
            event.app.exit()

        @kb.add("c-c", filter=keys_mode)
        def _(event: Any) -> None:
            self.interrupted = True
            event.app.exit()

        @kb.add(Keys.Any, filter=keys_mode)
        @kb.add("up", filter=keys_mode)
        @kb.add("down", filter=keys_mode)
        @kb.add("left", filter=keys_mode)
        @kb.add("right", filter=keys_mode)
        @kb.add("enter", filter=keys_mode)
        @kb.add("backspace", filter=keys_mode)
        @kb.add("escape", filter=keys_mode)
        def _(event: Any) -> None:
            pass  # any other key does nothing: nothing is typed in, nothing reaches the screen

        @kb.add("escape", filter=typing, eager=True)
        @kb.add("c-c", filter=typing)
        @kb.add("c-g", filter=typing)
        def _(event: Any) -> None:
            leave_typing()

        @kb.add(Keys.BracketedPaste, filter=typing)
        def _(event: Any) -> None:
            buffer.insert_text(printable_only(event.data))  # a paste's escapes stay out

        @kb.add("backspace", filter=typing & Condition(lambda: not buffer.text))
        def _(event: Any) -> None:
            leave_typing()  # backspace over the ':' itself

        @kb.add("escape", filter=paging, eager=True)
        @kb.add("q", filter=paging)
        @kb.add("enter", filter=paging)
        @kb.add("c-c", filter=paging)
        def _(event: Any) -> None:
            self._close_pager()

        for keys, action in ((("down",), scroll.scroll_one_line_down),
                             (("j",), scroll.scroll_one_line_down),
                             (("up",), scroll.scroll_one_line_up),
                             (("k",), scroll.scroll_one_line_up),
                             (("pagedown",), scroll.scroll_page_down),
                             (("space",), scroll.scroll_page_down),
                             (("pageup",), scroll.scroll_page_up),
                             (("b",), scroll.scroll_page_up)):
            kb.add(*keys, filter=paging)(action)

        app = Application(layout=Layout(body, focused_element=self._input), key_bindings=kb,
                          full_screen=True, mouse_support=False,
                          terminal_size_polling_interval=0.5)
        app.ttimeoutlen = 0.05  # a lone Esc is a key after 50 ms, not the start of a sequence
        app.timeoutlen = 0.05
        return app
