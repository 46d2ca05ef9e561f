"""The deadwood solver: hand-computed cases, and hypothesis against a slow brute force."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from launcher.games.gin.cards import (
    RANKS,
    cards_of,
    name,
    parse_card,
    parse_hand,
    value,
)
from launcher.games.gin.melds import ACES_HIGH, STANDARD, Solver, best_discard, deadwood

# --- a slow reference, written independently of the solver's meld tables -------------------


def reference_melds(cards: list[int], aces_high: bool) -> list[frozenset[int]]:
    """Every meld within ``cards``, from the rule text's definitions, by plain enumeration."""
    melds = []
    for n in (3, 4):
        for combo in itertools.combinations(cards, n):
            if len({c % 13 for c in combo}) == 1:
                melds.append(frozenset(combo))
    for size in range(3, len(cards) + 1):
        for combo in itertools.combinations(cards, size):
            if len({c // 13 for c in combo}) != 1:
                continue
            ranks = sorted(c % 13 for c in combo)
            low = ranks == list(range(ranks[0], ranks[0] + size))
            # Aces high: the ace (0) counts as 13, above the king.
            high = aces_high and 0 in ranks and sorted(13 if r == 0 else r for r in ranks) == \
                list(range(ranks[1], ranks[1] + size))
            if low or high:
                melds.append(frozenset(combo))
    return melds


def reference_deadwood(mask: int, aces_high: bool = False) -> int:
    """Least deadwood by trying every set of pairwise disjoint melds."""
    cards = list(cards_of(mask))
    melds = reference_melds(cards, aces_high)
    total = sum(min(c % 13 + 1, 10) for c in cards)
    best = total

    def walk(i: int, used: frozenset[int], melded_value: int) -> None:
        nonlocal best
        best = min(best, total - melded_value)
        for j in range(i, len(melds)):
            m = melds[j]
            if not m & used:
                walk(j + 1, used | m, melded_value + sum(min(c % 13 + 1, 10) for c in m))

    walk(0, frozenset(), 0)
    return best


# --- hand-computed cases --------------------------------------------------------------------


@pytest.mark.parametrize(("hand", "expected"), [
    # Two sets and a run: all melded.
    ("AC 2C 3C 4D 4H 4S 7S 8S 9S 10S", 0),
    # No meld at all: the sum. 2+4+6+8+10+10+10+1+3+5
    ("2C 4D 6H 8S 10C JD QH AS 3C 5D", 59),
    # Greedy trap: the longest run 4H-7H would strand 7C 7D (14); split it: 4H-6H + 7s.
    ("4H 5H 6H 7H 7C 7D KS QD", 20),
    # Four 3s and 4S 5S: 3C 3D 3H + 3S 4S 5S, nothing left.
    ("3C 3D 3H 3S 4S 5S", 0),
    # A card belongs to one meld only: 5S in the set or the run, not both. 5C 5D 5S + 6S 7S
    # loose (13), or 5S 6S 7S + 5C 5D loose (10).
    ("5C 5D 5S 6S 7S", 10),
    # Aces low: Q-K-A is no run (10+10+1) and K-A-2 never.
    ("QH KH AH", 21),
    ("KH AH 2H", 13),
    # The ace runs low: A-2-3.
    ("AH 2H 3H", 0),
    # A set of four is one meld; a fifth card of the rank cannot exist, so 4 + loose.
    ("9C 9D 9H 9S 2D", 2),
    # Two runs sharing nothing, plus one loose king.
    ("AD 2D 3D 4D 5D 6D JC QC KC KS", 10),
    # 11 cards (after a draw): the four 8s as a set would strand 9C 10C (19); 8C 9C 10C +
    # 8D 8H 8S uses them all. With KC KD KH, 2S 3D are loose: 5.
    ("8C 9C 10C 8D 8H 8S KC KD KH 2S 3D", 5),
    # 13 cards (Mahjong's size, aces low here): AC-4C, 5S-7S, the four 9s; JH 2H loose.
    ("AC 2C 3C 4C 5S 6S 7S 9D 9H 9S 9C JH 2H", 12),
])
def test_hand_computed(hand: str, expected: int) -> None:
    mask = parse_hand(hand)
    assert deadwood(mask) == expected
    assert reference_deadwood(mask) == expected


@pytest.mark.parametrize(("hand", "expected"), [
    ("QH KH AH", 0),              # aces high: Q-K-A
    ("KH AH 2H", 13),             # but never round the corner
    # The ace high (J-Q-K-A, 2D 3D loose: 5) or low (A-2-3 and J-Q-K: 0).
    ("JD QD KD AD 2D 3D", 0),
])
def test_aces_high_or_low(hand: str, expected: int) -> None:
    mask = parse_hand(hand)
    assert ACES_HIGH.deadwood(mask) == expected == reference_deadwood(mask, True)


def test_aces_high_ace_in_one_run_only() -> None:
    # QD KD AD 2D 3D: the ace serves Q-K-A (2D 3D loose, 5) or A-2-3 (QD KD loose, 20).
    assert ACES_HIGH.deadwood(parse_hand("QD KD AD 2D 3D")) == 5


def test_best_discard_of_eleven() -> None:
    # Drawing 9S to MELDED9 + KD: throwing KD leaves gin.
    mask = parse_hand("AC 2C 3C 4D 4H 4S 7S 8S 9S KD 10S")
    assert best_discard(mask) == (0, parse_card("KD"))
    # With KD forbidden (just taken), 7S or 10S go (8S-10S or 7S-9S stays a run) and KD
    # stays loose: 10. Ties go to the lower card number, 7S.
    dw, c = best_discard(mask, forbidden=1 << parse_card("KD"))
    assert (dw, name(c)) == (10, "7S")


def test_best_discard_breaks_a_meld_when_that_is_best() -> None:
    # Big gin hand: every card is melded and one must go; a run end keeps the rest melded.
    mask = parse_hand("AC 2C 3C 4C 4D 4H 4S 7S 8S 9S 10S")
    dw, c = best_discard(mask)
    assert dw == 0 and deadwood(mask & ~(1 << c)) == 0


def test_melds_of_and_solve_agree() -> None:
    mask = parse_hand("4H 5H 6H 7H 7C 7D KS QD")
    dw, dead = STANDARD.solve(mask)
    assert dw == 20 and dead == parse_hand("KS QD")
    melds = STANDARD.melds_of(mask)
    assert sorted(melds) == sorted([parse_hand("4H 5H 6H"), parse_hand("7H 7C 7D")])


def test_card_names_round_trip() -> None:
    for c in range(52):
        assert parse_card(name(c)) == c
    assert parse_card("Th") == parse_card("10H") and parse_card("7♥") == parse_card("7H")
    with pytest.raises(ValueError, match="not a card"):
        parse_card("1Z")
    with pytest.raises(ValueError, match="twice"):
        parse_hand("AS as")
    assert len(RANKS) == 13 and value(parse_hand("AS KS 7H")) == 18


# --- properties against the brute force --------------------------------------------------


def hands(size: int, pool: range | list[int] = range(52)) -> st.SearchStrategy[int]:
    return st.lists(st.sampled_from(list(pool)), min_size=size, max_size=size,
                    unique=True).map(lambda cs: sum(1 << c for c in cs))


# Low ranks of every suit: hands dense in melds, where sets and runs compete for cards.
DENSE = [c for c in range(52) if c % 13 < 6]
ACE_DENSE = [c for c in range(52) if c % 13 < 4 or c % 13 > 9]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from([10, 11, 13]).flatmap(lambda n: hands(n)))
def test_solver_matches_brute_force_random(mask: int) -> None:
    assert STANDARD.deadwood(mask) == reference_deadwood(mask)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from([10, 11, 13]).flatmap(lambda n: hands(n, DENSE)))
def test_solver_matches_brute_force_dense(mask: int) -> None:
    solver = Solver()  # a fresh memo: the answer must not depend on what was cached
    dw, dead = solver.solve(mask)
    assert dw == reference_deadwood(mask) == STANDARD.deadwood(mask)
    # The deadwood cards really are what one arrangement leaves.
    assert value(dead) == dw and dead & ~mask == 0
    melds = solver.melds_of(mask)
    covered = 0
    for m in melds:
        assert solver.is_meld(m) and not covered & m
        covered |= m
    assert covered | dead == mask and not covered & dead


@settings(max_examples=100, deadline=None)
@given(st.sampled_from([10, 11, 13, 14]).flatmap(lambda n: hands(n, ACE_DENSE)))
def test_aces_high_matches_brute_force(mask: int) -> None:
    assert ACES_HIGH.deadwood(mask) == reference_deadwood(mask, aces_high=True)


@settings(max_examples=100, deadline=None)
@given(hands(11, DENSE), st.integers(0, 51))
def test_best_discard_is_the_best_single_throw(mask: int, ban: int) -> None:
    forbidden = 1 << ban if mask >> ban & 1 else 0
    dw, c = STANDARD.best_discard(mask, forbidden)
    by_hand = min(reference_deadwood(mask & ~(1 << x)) for x in cards_of(mask & ~forbidden))
    assert dw == by_hand and mask >> c & 1 and not forbidden >> c & 1
    for limit in (0, 5, 10):
        knocks = STANDARD.knock_discards(mask, limit, forbidden)
        assert knocks == [x for x in cards_of(mask & ~forbidden)
                          if reference_deadwood(mask & ~(1 << x)) <= limit]
