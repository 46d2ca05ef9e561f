"""What every game shares: its errors, its options, the trusted-bot mark, and ``GameSpec``.

A game package (``flip_attack``, ``uno``, ``gin``) builds its rules on these and gives the
command line one ``GameSpec`` per game it plays (its ``spec`` module); ``registry.GAMES``
holds them all, so ``launcher simulate``, ``launcher tune`` and the benchmarks find every
game the same way and no caller names a game's modules.

- ``RuleViolation`` and ``LauncherFault``: the two errors a game raises on purpose.
- ``Options``: a game's house rules, a frozen dataclass whose annotations say what each
  rule takes (``bool``, a whole number with its bounds, or a ``Literal`` of the choices);
  every game checks them here, so a bad one is the same one-line error in every game.
- ``trusted``: the mark on a bot class whose answers are always legal (``trusted = True``).
- ``GameSpec`` and ``Run``: what a game offers the command line, and what a run asks of it.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields, replace
from functools import cache
from typing import (
    TYPE_CHECKING,
    Any,
    Generic,
    Literal,
    NamedTuple,
    NoReturn,
    Protocol,
    TypeVar,
    get_args,
    get_origin,
    get_type_hints,
)

from launcher.core.errors import ConfigError, LauncherError

if TYPE_CHECKING:
    from launcher.core.config import Settings
    from launcher.games.launchers import Launcher, OnFirmware, Profile
    from launcher.games.roster import Roster


class RuleViolation(LauncherError, ValueError):
    """An action the rules forbid, or a broken invariant (a card made or lost)."""


class LauncherFault(LauncherError, RuntimeError):
    """The launcher did not do what the game asked (two cards for one, a wrong side)."""


class OptionError(ConfigError):
    """A house rule that is unknown, or a value it does not take: names the rule and value."""


# --- options ----------------------------------------------------------------------------


def whole(default: int, at_least: int = 1, at_most: int | None = None, note: str = "") -> Any:
    """A whole-number option and its bounds (``note``: why, in the error's brackets)."""
    return field(default=default, metadata={"range": (at_least, at_most), "note": note})


OptionsT = TypeVar("OptionsT", bound="Options")


@dataclass(frozen=True)
class Options:
    """A game's house rules, checked as they are made: each field's annotation says what it
    takes (``bool``; ``int`` between the bounds of ``whole``, at least 1 by default; a
    ``Literal`` of its choices), and a bad value raises ``OptionError`` naming the field and
    the value. A subclass adds checks across fields in ``check`` and says in ``idle`` which
    rules cannot change a game under the others (or at a table)."""

    def __post_init__(self) -> None:
        for name, (kind, lo, hi, note) in _kinds(type(self)).items():
            value = getattr(self, name)
            why = _refusal(kind, lo, hi, value)
            if why:
                raise OptionError(name, value, why + (f" ({note})" if note else ""))
        self.check()

    def check(self) -> None:
        """Checks across fields (``OptionError`` naming the field); none by default."""

    def idle(self, name: str, seats: Seats) -> str | None:
        """Why the rule ``name`` cannot change a game under these options at ``seats``
        (the shell refuses a rule that does nothing), or None."""
        return None

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(_kinds(cls))

    @classmethod
    def choices(cls, name: str) -> tuple[Any, ...]:
        """A ``Literal`` rule's choices (empty for the others)."""
        kind = _kinds(cls)[name][0]
        return get_args(kind) if get_origin(kind) is Literal else ()

    def changed(self: OptionsT, game: str, changes: Mapping[str, Any],
                rules: Collection[str] | None = None) -> OptionsT:
        """These options with ``changes`` laid over; ``OptionError`` names a rule that is not
        one of ``rules`` (every field by default) of ``game``, or a value it does not take."""
        known = self.names() if rules is None else tuple(rules)
        for name, value in changes.items():
            if name not in known:
                raise OptionError(name, value, f"is not a rule of {game} (its rules: "
                                               f"{', '.join(known)})")
        return replace(self, **changes)


@cache
def _kinds(cls: type[Options]) -> dict[str, tuple[Any, int, int | None, str]]:
    """Per field: its annotation, its bounds (whole numbers) and the bounds' note."""
    hints = get_type_hints(cls)
    out = {}
    for f in fields(cls):
        lo, hi = f.metadata.get("range", (1, None))
        out[f.name] = (hints[f.name], lo, hi, f.metadata.get("note", ""))
        if f.default is MISSING:
            raise TypeError(f"{cls.__name__}.{f.name} has no default")
    return out


def _refusal(kind: Any, lo: int, hi: int | None, value: Any) -> str | None:
    """Why ``value`` is not one that ``kind`` takes, or None."""
    if get_origin(kind) is Literal:
        choices = get_args(kind)
        if any(value == c and type(value) is type(c) for c in choices):
            return None
        return "must be one of " + ", ".join(map(str, choices))
    if kind is bool:
        return None if isinstance(value, bool) else "must be true or false"
    if kind is int:
        ok = type(value) is int and value >= lo and (hi is None or value <= hi)
        if ok:
            return None
        return (f"must be a whole number from {lo} to {hi}" if hi is not None else
                f"must be a whole number, at least {lo}")
    raise TypeError(f"an option cannot be a {kind!r}")


# --- bots -------------------------------------------------------------------------------


def trusted(bots: Iterable[object]) -> bool:
    """Whether every bot is trusted: its own class (a subclass must say it again) sets
    ``trusted = True``, a promise that it answers only with legal moves, so the table takes
    its answers unchecked (the UNO table) or asks its ``decide`` on the rules' own state
    (Flip Attack)."""
    return _trusted(tuple(map(type, bots)))


@cache
def _trusted(kinds: tuple[type, ...]) -> bool:
    return all(k.__dict__.get("trusted", False) for k in kinds)


# --- what a game gives the command line ---------------------------------------------------


class Seats(NamedTuple):
    """A table to be: how many players, and each seat's bot by name."""

    players: int
    bots: tuple[str, ...]


def game_seed(seed: int, index: int) -> int:
    """The seed of game ``index`` of the run seeded ``seed``: each game's every random choice
    follows from it alone, so a run gives the same summary however it is split (--jobs)."""
    return random.Random(f"launcher-game/{seed}/{index}").getrandbits(64)


FirmwareMaker = Callable[..., "OnFirmware"]  # (settings=, seed=, sides=) -> the firmware


@dataclass(frozen=True)
class Run:
    """What one run of games asks of a game, the same for every game: the options, the bots
    by seat, the run's seed, the configuration (its luck, and the firmware's settings), and
    the launcher: the game's direct model, or the firmware on the simulated launcher made
    by ``firmware`` (``launcher.sim.games.FirmwareLauncher``; the games never import it)."""

    options: Options
    bots: tuple[str, ...]
    seed: int
    settings: Settings
    check: bool = False  # check card conservation after every step
    deal_with_launcher: bool = False  # the hands dealt by the launcher's ``deal N``
    firmware: FirmwareMaker | None = None
    variant: str = ""  # the preset the options came from (``--variant``), for the heading

    @property
    def players(self) -> int:
        return len(self.bots)


def launcher_for(run: Run, rng: random.Random, direct: Callable[[], Launcher],
                 **firmware: Any) -> Launcher:
    """The launcher of one game of ``run``: ``direct()``, or the firmware made by
    ``run.firmware`` (seeded from ``rng``; ``firmware``: its other arguments, ``sides``)."""
    if run.firmware is None:
        return direct()
    return run.firmware(settings=run.settings, seed=rng.getrandbits(32), **firmware)


def finish(run: Run, summary: Summary, launcher: Any) -> None:
    """After a game on the firmware (``run.firmware``): count its faults, close its rig."""
    if run.firmware is not None:
        summary.add_faults(launcher.faults)
        launcher.close()


class Summary(Protocol):
    """A game's summary of whole games (``stats.Tally`` under each game's own)."""

    faults: Counter[str]

    def add_faults(self, faults: Sequence[dict[str, Any]]) -> None: ...

    def merge(self, later: Any) -> Any: ...

    def format(self, title: str = "") -> str: ...


class Table(Protocol):
    """A game's table: it plays whole games with its bots and its launcher."""

    def play_game(self, first_dealer: Any = ...) -> Any: ...


HandT = TypeVar("HandT")


@dataclass
class GameResult(Generic[HandT]):
    """One game: its hands, played until it was decided, and the scores."""

    scores: list[int]
    winner: int | None
    hands: list[HandT] = field(default_factory=list)


class HandsTable(Generic[HandT]):
    """What the tables of hands share (UNO Flip Attack's, the UNO family's and Gin's): a game
    is hands until ``book`` says it is decided, the deal passing as ``next_dealer`` says (to
    the left unless the game says otherwise)."""

    bots: list[Any]

    @property
    def players(self) -> int:
        return len(self.bots)

    def play_hand(self, dealer: int) -> HandT:
        raise NotImplementedError

    def book(self, scores: list[int], hand: HandT) -> tuple[bool, int | None]:
        """Book a finished hand into ``scores`` (in place): whether the game is decided,
        and its winner."""
        raise NotImplementedError

    def next_dealer(self, dealer: int, hand: HandT) -> int:
        """Who deals after ``hand``, which ``dealer`` dealt: the player to the left."""
        return (dealer + 1) % self.players

    def hands_until_decided(self, first_dealer: int, max_hands: int) -> GameResult[HandT]:
        """Hands from ``first_dealer``'s deal on; a game still undecided after ``max_hands``
        hands (only when hands keep hitting their turn limit) ends with no winner."""
        scores = [0] * self.players
        result: GameResult[HandT] = GameResult(scores, None)
        dealer = first_dealer
        while len(result.hands) < max_hands:
            hand = self.play_hand(dealer)
            result.hands.append(hand)
            decided, winner = self.book(scores, hand)
            if decided:
                result.winner = winner
                return result
            dealer = self.next_dealer(dealer, hand)
        return result


class GameSpec(Protocol):
    """One game, as ``launcher simulate`` plays it (``registry.GAMES`` by ``name``)."""

    name: str  # ``--game NAME``
    title: str
    help: str  # one line for ``--game``'s help
    bots: Roster[Any]
    target: str  # the option ``--target`` sets
    luck: bool  # the launcher's luck plays a part (``--config``, ``tune``)
    variants: Mapping[str, Mapping[str, Any]]  # named presets of the options (``--variant``)
    launcher_deal: str | None  # None: may deal with the launcher; else why not
    default_players: int
    summary: type[Summary]

    def options(self, changes: Mapping[str, Any], variant: str | None = None) -> Options:
        """The game's defaults (or ``variant``'s) with ``changes``; ``OptionError`` names a
        bad rule."""
        ...

    def idle(self, options: Options, name: str, seats: Seats) -> str | None:
        """Why the rule ``name`` changes nothing in a game with ``options`` at ``seats``
        (its bots included), or None."""
        ...

    def refuse_seats(self, options: Options, players: int) -> str | None:
        """Why this game cannot be dealt to ``players`` under ``options``, or None."""
        ...

    def table(self, run: Run, rng: random.Random, observers: Sequence[Any] = ()) -> Table:
        """A table for ``run``: its launcher (the game's direct one, or ``run.firmware``'s)
        and its bots, each seeded from ``rng`` in the game's own order; ``observers`` hear
        every event."""
        ...

    def play(self, run: Run, start: int, stop: int) -> Summary:
        """Games ``start`` to ``stop - 1`` of ``run``, each at a ``table`` seeded from its
        own ``game_seed``."""
        ...

    def heading(self, run: Run) -> str:
        """The summary's title line for ``run``."""
        ...

    profile: Profile  # what a press must do (``launchers``): the launcher as chance player
    sides: tuple[str, str]  # the cartridge's halves as the game calls them (front first)

    def player(self, bot: str, rng: random.Random, settings: Settings) -> Player:
        """The bot ``bot`` (one of ``bots``) on the contract, seeded from ``rng``."""
        ...

    def new_game(self, players: int | None = None, seed: int = 0,
                 options: Options | None = None, settings: Settings | None = None
                 ) -> GameState:
        """A whole game at its start, on the contract (``GameState``): ``players`` seats
        (the game's default when None), every random choice but the launcher's from
        ``seed``, ``options`` the game's defaults when None; ``settings``: the
        configuration whose luck the launcher's chance outcomes follow (the defaults)."""
        ...


# --- the game-state contract ------------------------------------------------------------
#
# OpenSpiel's state shape, one for every game: whose turn it is (a seat, the chance player
# or nobody), the legal actions as ints, the chance outcomes with their probabilities,
# ``apply_action``, ``returns`` and ``clone``. The chance player is the launcher: its shot
# is a chance node in every game that shoots cards. Each game's ``GameState`` asks its own
# engine what is legal (``legal_actions`` is the engine's legality, never a second copy).

CHANCE = -1  # ``current_player()`` at a chance node: the launcher shoots
TERMINAL = -4  # ``current_player()`` once the game is over


StateT = TypeVar("StateT", bound="GameState")


class GameState:
    """One whole game in progress, stepped by ``apply_action`` (see the section above).

    A subclass gives ``num_players``, ``current_player``, ``chance_outcomes``,
    ``legal_actions`` (from its engine), ``_apply`` (an action already known to be legal),
    ``returns``, ``clone``, ``action_to_string`` and ``view``. ``apply_action`` checks the
    action against ``chance_outcomes`` or ``legal_actions`` before anything changes, so an
    illegal one raises ``RuleViolation`` and leaves the state as it was. One seed and one
    list of actions give one game: every other random choice (the deal, a reshuffle)
    comes from the state's own ``random.Random``, seeded by ``new_game``.
    """

    history: list[int]
    rng: random.Random  # the deal's, the reshuffles': every random choice but the launcher's
    stack: list[Any]  # the launcher's cartridge, the next card to shoot last

    def num_players(self) -> int:
        raise NotImplementedError

    def current_player(self) -> int:
        """The seat to move (0..n-1), ``CHANCE`` (the launcher shoots) or ``TERMINAL``."""
        raise NotImplementedError

    def is_chance_node(self) -> bool:
        return self.current_player() == CHANCE

    def is_terminal(self) -> bool:
        return self.current_player() == TERMINAL

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """At a chance node: ``[(action, probability)]``, the probabilities summing to 1."""
        raise NotImplementedError

    def legal_actions(self) -> list[int]:
        """At a seat's turn: its legal actions, as the engine decides them (empty
        otherwise)."""
        raise NotImplementedError

    def _legal(self) -> Sequence[int]:
        """``legal_actions``, not to be changed: a state that keeps them overrides it."""
        return self.legal_actions()

    def apply_action(self, action: int) -> None:
        """Play ``action`` (a chance outcome at a chance node); ``RuleViolation`` if it is
        not one of those allowed now, and then nothing has changed."""
        who = self.current_player()
        if who >= 0:
            if action not in self._legal():
                self._refuse(who, action, self._legal())
        elif who == CHANCE:
            for outcome, _ in self.chance_outcomes():  # (a loop: no list made a step)
                if outcome == action:
                    break
            else:
                self._refuse(who, action, [a for a, _ in self.chance_outcomes()])
        else:
            raise RuleViolation("the game is over")
        self._apply(action)
        self.history.append(action)

    def _refuse(self, who: int, action: int, allowed: Sequence[int]) -> NoReturn:
        what = "chance outcome" if who == CHANCE else f"action for seat {who}"
        raise RuleViolation(
            f"{self._words(action)} ({action}) is not a legal {what}; legal: "
            + ", ".join(f"{a} {self.action_to_string(a)}" for a in allowed))

    def _apply(self, action: int) -> None:
        raise NotImplementedError

    def _words(self, action: int) -> str:
        """``action_to_string``, or a plain name for an int that is no action at all."""
        try:
            return self.action_to_string(action)
        except LookupError:
            return f"action {action}"

    def returns(self) -> list[float]:
        """One number a seat: the points of the game so far (final once terminal)."""
        raise NotImplementedError

    def clone(self) -> GameState:
        """An independent copy: stepping one leaves the other as it was."""
        raise NotImplementedError

    def _copy(self: StateT, **fresh: Any) -> StateT:
        """A clone's start: this state's fields, with its own generator (``rng``), history,
        launcher cartridge (``stack``), and ``fresh`` (copies of what else a step changes)."""
        other = object.__new__(type(self))
        other.__dict__.update(self.__dict__)
        other.__dict__.update(fresh, rng=copy_rng(self.rng), history=list(self.history),
                              stack=list(self.stack))
        return other

    def action_to_string(self, action: int) -> str:
        """``action`` as text, in the words of the game (a chance outcome too)."""
        raise NotImplementedError

    def view(self, seat: int) -> SeatView:
        """What ``seat`` may know now: its own hand, the table, the others' card counts."""
        raise NotImplementedError

    def launcher_side(self) -> int:
        """The cartridge half at the back of the launcher (0: the front side, Mild or
        Light; 1 after a flip), for a launcher that shoots this state's cards."""
        return 0

    def lid_cycles(self) -> int:
        """The lid cycles (open fully, close: the cartridge turns) the game has asked of
        the launcher so far; a game that never turns it, none."""
        return 0

    def places(self) -> tuple[list[Sequence[int]], int, int]:
        """Where every card is, for ``check_cards``: each place's cards (the hands, the
        piles, the launcher's ``stack`` last), the deck's size (the cards are ``0`` to
        ``size - 1``), and how many cards the rules say the launcher holds."""
        raise NotImplementedError


class Player(Protocol):
    """A seat's bot on the contract: handed the state, it answers one of its legal
    actions."""

    def act(self, state: GameState) -> int: ...


class Chance(Protocol):
    """The chance player: at a chance node, one of the state's chance outcomes (the
    launcher's shot: ``launchers.LauncherChance``; or drawn from the outcomes'
    probabilities, ``Sampled``)."""

    def answer(self, state: GameState) -> int: ...


class Sampled:
    """The chance player that draws each outcome with its probability from ``rng``."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def answer(self, state: GameState) -> int:
        return sample_chance(state, self.rng)


def play_out(state: GameState, seats: Sequence[Player], chance: Chance,
             check: bool = False) -> GameState:
    """Play ``state`` to its end through the contract alone: each seat's player acts, the
    chance player answers each chance node; ``check``: every card in one place after every
    step (``check_cards``). What every whole game of ``launcher simulate`` and ``tune``
    goes through."""
    apply, terminal, at_chance = state.apply_action, state.is_terminal, state.is_chance_node
    who = state.current_player
    while not terminal():
        apply(chance.answer(state) if at_chance() else seats[who()].act(state))
        if check:
            check_cards(state)
    return state


def check_cards(state: GameState) -> None:
    """Card conservation on the contract: ``check_places`` over the state's ``places``."""
    check_places(*state.places())


def check_places(places: Sequence[Sequence[int]], size: int, count: int) -> None:
    """Card conservation, the one check of every game and table: each card ``0`` to
    ``size - 1`` in exactly one of ``places``, and the last place (the launcher) holding
    ``count`` cards, as the rules count them; ``RuleViolation`` naming the cards otherwise."""
    twice, lost = where(places, size)
    if twice or lost:
        raise RuleViolation(f"cards not conserved: twice {twice[:5]}, lost {lost[:5]}")
    if len(places[-1]) != count:
        raise RuleViolation(f"the launcher holds {len(places[-1])} cards, the rules count "
                            f"{count}")


def where(places: Iterable[Iterable[int]], size: int) -> tuple[list[int], list[int]]:
    """(cards seen twice, cards ``0`` to ``size - 1`` seen nowhere) over ``places``; a card
    out of that range counts as seen twice."""
    seen = bytearray(size)
    twice: list[int] = []
    for place in places:
        for c in place:
            if not 0 <= c < size or seen[c]:
                twice.append(c)
            else:
                seen[c] = 1
    return twice, [i for i in range(size) if not seen[i]]


@dataclass(frozen=True)
class SeatView:
    """A seat's view of the game, for a person (``str``) or a bot (the fields)."""

    seat: int
    hand: tuple[str, ...]  # the seat's own cards, as text
    table: tuple[str, ...]  # one line each: the discard pile's top, the scores, the others

    def __str__(self) -> str:
        return "\n".join([*self.table, f"your hand ({len(self.hand)}): " + ", ".join(self.hand)])


def copy_rng(rng: random.Random) -> random.Random:
    """A generator that draws what ``rng`` would draw next, independently of it."""
    other = random.Random()
    other.setstate(rng.getstate())
    return other


def sample_chance(state: GameState, rng: random.Random) -> int:
    """One chance outcome of ``state``, drawn with its probability from ``rng``."""
    outcomes = state.chance_outcomes()
    if len(outcomes) == 1:
        return outcomes[0][0]
    x = rng.random()
    total = 0.0
    for action, p in outcomes:
        total += p
        if x < total:
            return action
    return outcomes[-1][0]
