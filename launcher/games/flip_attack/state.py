"""UNO Flip Attack as objects: the options (``GameOptions``), the actions a player takes,
the effects a step has, and a hand between two steps (``HandState``).

They are what the pure interface (``rules``) takes and gives; the rules themselves work on
small integers (``core``) and read these in and out at the boundary.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from launcher.games.base import Options, Seats, whole
from launcher.games.cards import Card, Face
from launcher.games.flip_attack.core import PRESS_STEPS, Step

# --- options: every point the rule text leaves open ----------------------------------


@dataclass(frozen=True)
class GameOptions(Options):
    """House rules for what the rule text leaves open; docs/games.md explains each one."""

    hand_size: int = whole(7)
    # Two players: "skip" (a Reverse gives its player another turn, as in UNO Flip's
    # two-player rules) or "reverse" (the direction turns, which changes nothing).
    two_player_reverse: Literal["skip", "reverse"] = "skip"
    # An action card turned to start the discard pile is ignored: "cover" leaves it
    # under the next card turned, "return" puts it back among the cards to be loaded.
    first_card_action: Literal["cover", "return"] = "cover"
    # A Wild turned first: "ignore" (the rule text lists Wild among the action cards) or
    # "play" (it stays; the first player may lay any card, as in UNO Flip).
    first_card_wild: Literal["ignore", "play"] = "ignore"
    # What each Wild Press Your Luck discard must be: "any" card, a card of the "colour"
    # chosen with the Wild Press Your Luck, or a card that "match"es the pile as it grows.
    pyl_discard: Literal["any", "colour", "match"] = "any"
    # When a Wild Press Your Luck run shoots, the card itself stays played (False) or goes
    # back into the hand with the discards (True).
    pyl_card_returns: bool = False
    # A player hit by a Hit 2x (Hit 5x) may pass it on, adding their own Hit 2x (Hit 5x).
    stack_hits: bool = False
    uno_penalty_presses: int = whole(2, at_least=0)
    # Going out on a Hit 2x / Hit 5x / Wild All-Out Attack: the presses still happen and
    # the cards they shoot are scored.
    last_card_penalties: bool = True
    # Wild All-Out Attack: "everybody takes one turn pressing", the attacker included.
    attack_includes_attacker: bool = True
    # A Flip that turns a wild face to the top of the pile: the player who flipped picks
    # the colour ("flipper_chooses"), or any card may follow ("open").
    flip_wild_top: Literal["flipper_chooses", "open"] = "flipper_chooses"
    # A reload leaves the top card on the pile (True), or takes the whole pile and players
    # keep matching the face that was on top (False).
    reload_keep_top: bool = True
    # Not a rule: a hand still going after this many turns ends with no winner.
    max_turns: int = whole(2000)
    target_score: int = whole(500)

    def idle(self, name: str, seats: Seats) -> str | None:
        if name == "two_player_reverse" and seats.players != 2:
            return f"it only acts with 2 players, not {seats.players}"
        return None


# --- actions ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Play:
    """Lay a card. ``colour``: a wild's colour, or the new side's colour after a Flip that
    turns a wild face up; ``discard_colour``: the colour a Wild Discard All clears."""

    card: Card
    colour: str | None = None
    discard_colour: str | None = None
    uno: bool = False


@dataclass(frozen=True, slots=True)
class Press:
    """Press the launcher instead of playing (allowed even with a playable card)."""


@dataclass(frozen=True, slots=True)
class PressLuck:
    """Wild Press Your Luck: press once more."""


@dataclass(frozen=True, slots=True)
class StopLuck:
    """Wild Press Your Luck: stop; the card goes on top of the discards."""

    uno: bool = False


@dataclass(frozen=True, slots=True)
class Discard:
    """Wild Press Your Luck: the card given up for a press that shot nothing."""

    card: Card


@dataclass(frozen=True, slots=True)
class Catch:
    """Catch the player who did not call UNO."""


@dataclass(frozen=True, slots=True)
class Pass:
    """Do not catch."""


@dataclass(frozen=True, slots=True)
class TakeHit:
    """(stack_hits) Take the presses instead of passing them on."""


Action = Play | Press | PressLuck | StopLuck | Discard | Catch | Pass | TakeHit

# --- effects ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Load:
    """Put these cards into the empty launcher, ``side`` facing the back (front first)."""

    cards: tuple[Card, ...]
    side: str
    reason: str  # "deal" or "reload"


@dataclass(frozen=True, slots=True)
class FlipLid:
    """Cycle the lid: the cartridge must turn so that ``side`` faces the back."""

    side: str


@dataclass(frozen=True, slots=True)
class Played:
    """A card was laid (with ``discarded`` more under a Discard All)."""

    player: int
    card: Card
    side: str
    discarded: int = 0  # cards a Discard All took with it


@dataclass(frozen=True, slots=True)
class Pressed:
    """One press of the launcher and what it shot (the cards went to ``recipient``), from a
    launcher that held ``held`` cards: a shot larger than that is cut short to them."""

    player: int
    recipient: int
    cards: tuple[Card, ...]
    side: str
    why: str
    held: int

    @property
    def empty(self) -> bool:
        """The launcher held no card (the firmware draws no luck then)."""
        return self.held == 0


@dataclass(frozen=True, slots=True)
class Caught:
    """``player`` was caught without UNO by ``by``."""

    player: int
    by: int


@dataclass(frozen=True, slots=True)
class LuckEnded:
    """A Wild Press Your Luck run is over: stopped, or ``busted`` by a shot."""

    player: int
    discarded: int
    busted: bool


@dataclass(frozen=True, slots=True)
class HandOver:
    """The hand is over; ``points`` is what the winner scores."""

    winner: int | None  # None: stopped at max_turns
    side: str
    points: int


Effect = Load | FlipLid | Played | Pressed | Caught | LuckEnded | HandOver


# --- state --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LuckRun:
    """A Wild Press Your Luck in progress: the card and the discards are held aside."""

    player: int
    card: Card
    colour: str
    discards: tuple[Card, ...] = ()


@dataclass(frozen=True, slots=True)
class HandState:
    """One hand, between two steps. Hands hold cards; which face shows depends on ``side``."""

    options: GameOptions
    players: int
    dealer: int
    side: str
    hands: tuple[tuple[Card, ...], ...]
    discard: tuple[Card, ...]  # bottom first
    top: Face | None  # the face to match (normally the top card's face on this side)
    colour: str | None  # the colour in play; None: any card may follow
    direction: int  # +1 clockwise (to the left), -1 counterclockwise
    agenda: tuple[Step, ...]
    launcher_count: int
    luck: LuckRun | None = None
    winner: int | None = None
    over: bool = False
    turns: int = 0
    presses: int = 0
    flips: int = 0
    reloads: int = 0

    @property
    def step(self) -> Step | None:
        return self.agenda[0] if self.agenda else None

    @property
    def awaiting_press(self) -> bool:
        return bool(self.agenda) and self.agenda[0].kind in PRESS_STEPS

    @property
    def held(self) -> tuple[Card, ...]:
        """Cards in flight: a Wild Press Your Luck and the discards under it."""
        if self.luck is None:
            return ()
        return (self.luck.card, *self.luck.discards)

    def next_player(self, player: int, steps: int = 1) -> int:
        return (player + steps * self.direction) % self.players

    def visible(self, player: int) -> list[Face]:
        """The faces ``player`` sees in their hand."""
        return [c.face(self.side) for c in self.hands[player]]
