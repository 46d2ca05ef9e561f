"""The 52-card deck as small ints (``suit * 13 + rank``, ace = rank 0) and hands as bitmasks.

A hand is an ``int`` with bit ``c`` set for each card ``c`` it holds, so the deadwood solver,
the rules and the bots share one cheap representation: union is ``|``, removal ``& ~``, and
a suit's 13 ranks are one 13-bit slice of the mask.
"""

from __future__ import annotations

from collections.abc import Iterable

SUITS = "CDHS"  # clubs, diamonds, hearts, spades: spade = suit 3 (Oklahoma's doubling)
SPADES = 3
RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
DECK_SIZE = 52
FULL_DECK = (1 << DECK_SIZE) - 1
SUIT_BITS = 0x1FFF  # one suit's 13 ranks

# Deadwood values from the rule text: ace 1, number cards face value, J/Q/K 10.
RANK_VALUE = tuple(min(r + 1, 10) for r in range(13))
VALUE = tuple(RANK_VALUE[c % 13] for c in range(DECK_SIZE))
# The value of every subset of one suit's ranks, so a hand's total is four look-ups.
SUIT_SUM = tuple(sum(RANK_VALUE[r] for r in range(13) if m >> r & 1) for m in range(1 << 13))

_SUIT_SYMBOLS = {"♣": "C", "♦": "D", "♥": "H", "♠": "S"}


def card(rank: int, suit: int) -> int:
    """The card of a rank (0 = ace .. 12 = king) and a suit (0..3, ``SUITS`` order)."""
    return suit * 13 + rank


def suit_of(c: int) -> int:
    return c // 13


def name(c: int) -> str:
    """``AS``, ``10H``, ``KD``."""
    return RANKS[c % 13] + SUITS[c // 13]


def parse_card(text: str) -> int:
    """Read ``AS``, ``10h``, ``Th``, ``7♥``; ValueError naming the text otherwise."""
    t = text.strip().upper()
    if t and t[-1] in _SUIT_SYMBOLS:
        t = t[:-1] + _SUIT_SYMBOLS[t[-1]]
    if len(t) < 2 or t[-1] not in SUITS:
        raise ValueError(f"not a card: {text!r} (want e.g. AS, 10H, KD)")
    r = {"T": "10", "1": "A"}.get(t[:-1], t[:-1])
    if r not in RANKS:
        raise ValueError(f"not a card: {text!r} (rank must be A, 2..10, J, Q or K)")
    return card(RANKS.index(r), SUITS.index(t[-1]))


def parse_hand(text: str) -> int:
    """A hand mask from space- or comma-separated card names; a repeated card is an error."""
    mask = 0
    for part in text.replace(",", " ").split():
        c = parse_card(part)
        if mask >> c & 1:
            raise ValueError(f"card {part!r} is listed twice")
        mask |= 1 << c
    return mask


def mask_of(cards: Iterable[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


# The cards of each byte of a mask, per byte position: ``cards_of`` is seven look-ups.
_B0, _B1, _B2, _B3, _B4, _B5, _B6 = (
    tuple(tuple(8 * k + i for i in range(8) if m >> i & 1) for m in range(256))
    for k in range(7))


def cards_of(mask: int) -> tuple[int, ...]:
    """The cards of a mask, lowest first."""
    return (_B0[mask & 255] + _B1[mask >> 8 & 255] + _B2[mask >> 16 & 255]
            + _B3[mask >> 24 & 255] + _B4[mask >> 32 & 255] + _B5[mask >> 40 & 255]
            + _B6[mask >> 48 & 15])


def count(mask: int) -> int:
    return mask.bit_count()


def value(mask: int) -> int:
    """The deadwood value of every card in ``mask``."""
    return (SUIT_SUM[mask & SUIT_BITS] + SUIT_SUM[mask >> 13 & SUIT_BITS]
            + SUIT_SUM[mask >> 26 & SUIT_BITS] + SUIT_SUM[mask >> 39 & SUIT_BITS])


def show(mask: int) -> str:
    """Cards of a mask by suit then rank: ``AC 2C 3C 7D``."""
    return " ".join(name(c) for c in cards_of(mask))
