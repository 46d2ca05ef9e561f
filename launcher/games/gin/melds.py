"""The exact deadwood solver: the least deadwood over every way to arrange a hand into melds.

Melds are sets (3 or 4 cards of one rank) and runs (3 or more cards of one suit in sequence,
aces low; with ``aces_high`` a run may also end Q-K-A, never wrap K-A-2). A card belongs to
one meld only. Hands are bitmasks (see ``cards.py``).

How it stays fast enough for a bot's inner loop:

1. Bit arithmetic finds every card that lies in *some* meld of the hand (runs by shifting the
   suit slices, sets by counting ranks across the four slices). Every other card is
   deadwood in every arrangement.
2. If no card is claimed both by a set and by a run (and, aces high, no ace by a low and a
   high run), the melds cannot compete, so every meldable card is melded: deadwood is the
   value of the rest. That is most hands.
3. Otherwise a search over the meldable cards only: the lowest card left is either deadwood
   or in one of the melds whose lowest card it is (so each arrangement is met exactly once),
   memoised on the mask of the cards left.
"""

from __future__ import annotations

from collections.abc import Iterator

from launcher.games.gin.cards import (
    DECK_SIZE,
    RANK_VALUE,
    SUIT_BITS,
    SUIT_SUM,
    VALUE,
    cards_of,
    value,
)

_SPREAD = 1 | 1 << 13 | 1 << 26 | 1 << 39  # one bit per suit slice, same rank
# Bits of ranks that can start a three-card run with aces low (A..J): rank <= 10.
_RUN_START = (0x7FF) * _SPREAD
_ACES = _SPREAD
_MASK52 = (1 << DECK_SIZE) - 1
_DW_SHIFT = DECK_SIZE  # memo entries pack (deadwood << 52) | deadwood-mask


def _all_melds(aces_high: bool) -> tuple[int, ...]:
    melds: list[int] = []
    for s in range(4):
        base = s * 13
        for lo in range(13):
            for hi in range(lo + 2, 13):
                melds.append(((1 << (hi - lo + 1)) - 1) << (base + lo))
        if aces_high:
            # Runs that end with the ace above the king: lo..K plus A (Q-K-A at the shortest).
            for lo in range(1, 12):
                melds.append((((1 << (13 - lo)) - 1) << (base + lo)) | 1 << base)
    for r in range(13):
        four = [s * 13 + r for s in range(4)]
        melds.append(sum(1 << c for c in four))
        for skip in four:
            melds.append(sum(1 << c for c in four if c != skip))
    return tuple(melds)


def _floor(loose: int, forbidden: int) -> int:
    """The value of the ``loose`` cards less the dearest one that may be thrown."""
    t = loose & ~forbidden
    ranks = (t | t >> 13 | t >> 26 | t >> 39) & SUIT_BITS  # every rank held, any suit
    return (SUIT_SUM[loose & SUIT_BITS] + SUIT_SUM[loose >> 13 & SUIT_BITS]
            + SUIT_SUM[loose >> 26 & SUIT_BITS] + SUIT_SUM[loose >> 39]
            - (RANK_VALUE[ranks.bit_length() - 1] if ranks else 0))


class Solver:
    """Exact minimum deadwood for one meld family (aces low, or aces high or low).

    Results of the search step are memoised per instance; the memo is dropped whole when it
    passes ``cache_size`` entries, which bounds memory over millions of hands.
    """

    def __init__(self, aces_high: bool = False, cache_size: int = 1 << 20) -> None:
        self.aces_high = aces_high
        self.melds = _all_melds(aces_high)
        self._meld_set = frozenset(self.melds)
        by_min: list[list[int]] = [[] for _ in range(DECK_SIZE)]
        for m in self.melds:
            by_min[(m & -m).bit_length() - 1].append(m)
        # Longer melds first: the first branch then finds a low bound early.
        self._by_min = tuple(tuple(sorted(ms, key=lambda m: -m.bit_count())) for ms in by_min)
        self._memo: dict[int, int] = {}
        self.cache_size = cache_size

    # --- the meldable cards ------------------------------------------------------------

    def _meldable(self, mask: int) -> tuple[int, bool]:
        """(cards that lie in some meld of ``mask``, whether two melds compete for a card)."""
        r3 = mask & (mask >> 1) & (mask >> 2) & _RUN_START
        runs = r3 | r3 << 1 | r3 << 2
        a = mask & SUIT_BITS
        b = mask >> 13 & SUIT_BITS
        c = mask >> 26 & SUIT_BITS
        d = mask >> 39 & SUIT_BITS
        ranks3 = (a & b & (c | d)) | (c & d & (a | b))
        sets = mask & (ranks3 * _SPREAD)
        clash = runs & sets
        if self.aces_high:
            high = 0
            for base in (0, 13, 26, 39):
                if mask >> (base + 11) & 3 == 3 and mask >> base & 1:
                    high |= 0b11 << (base + 11) | 1 << base
            if high:
                clash |= (high & sets) | (high & runs & _ACES)
                runs |= high
        return runs | sets, clash != 0

    def meldable(self, mask: int) -> int:
        """Every card of ``mask`` that belongs to at least one meld within ``mask``."""
        return self._meldable(mask)[0]

    # --- the solver --------------------------------------------------------------------

    def solve(self, mask: int) -> tuple[int, int]:
        """(least deadwood, the deadwood cards of one best arrangement)."""
        meld, clash = self._meldable(mask)
        loose = mask & ~meld
        if not clash:
            return value(loose), loose
        packed = self._search(meld)
        return value(loose) + (packed >> _DW_SHIFT), loose | (packed & _MASK52)

    def deadwood(self, mask: int) -> int:
        """The least deadwood of the hand ``mask`` over every meld arrangement."""
        meld, clash = self._meldable(mask)
        if not clash:
            return value(mask & ~meld)
        return value(mask & ~meld) + (self._search(meld) >> _DW_SHIFT)

    def _search(self, mask: int) -> int:
        memo = self._memo
        hit = memo.get(mask)
        if hit is not None:
            return hit
        if not mask:
            return 0
        low = mask & -mask
        c = low.bit_length() - 1
        rest = self._search(mask ^ low)
        best = rest + ((VALUE[c] << _DW_SHIFT) | low)
        for m in self._by_min[c]:
            if m & mask == m:
                cand = self._search(mask ^ m)
                if cand < best:
                    best = cand
        if len(memo) >= self.cache_size:
            memo.clear()
        memo[mask] = best
        return best

    def melds_of(self, mask: int) -> list[int]:
        """The melds (masks) of one best arrangement; the deadwood is what they leave."""
        dw_mask = self.solve(mask)[1]
        left = mask & ~dw_mask
        out: list[int] = []
        # Peel melds off the melded cards: any exact cover found by the same search.
        for melds in self._covers(left):
            out = list(melds)
            break
        return out

    def _covers(self, mask: int) -> Iterator[tuple[int, ...]]:
        """Every way to split ``mask`` exactly into melds."""
        if not mask:
            yield ()
            return
        low = mask & -mask
        c = low.bit_length() - 1
        for m in self._by_min[c]:
            if m & mask == m:
                for rest in self._covers(mask ^ m):
                    yield (m, *rest)

    def arrangements(self, mask: int) -> Iterator[tuple[int, tuple[int, ...]]]:
        """Every arrangement of ``mask``: (deadwood value, melds), each partition once."""
        meld = self.meldable(mask)
        loose = value(mask & ~meld)

        def walk(m: int, dw: int, acc: tuple[int, ...]) -> Iterator[tuple[int, tuple[int, ...]]]:
            if not m:
                yield dw, acc
                return
            low = m & -m
            c = low.bit_length() - 1
            yield from walk(m ^ low, dw + VALUE[c], acc)
            for x in self._by_min[c]:
                if x & m == x:
                    yield from walk(m ^ x, dw, (*acc, x))

        yield from walk(meld, loose, ())

    def best_arrangements(self, mask: int) -> list[tuple[int, ...]]:
        """Every arrangement (melds) that reaches the least deadwood."""
        best = self.deadwood(mask)
        return [melds for dw, melds in self.arrangements(mask) if dw == best]

    # --- 11 cards: what to throw ---------------------------------------------------------

    def discard_deadwood(self, mask: int, forbidden: int = 0) -> list[tuple[int, int]]:
        """(card, deadwood of the hand without it) for every card of ``mask`` not forbidden."""
        return self._discard_deadwood(mask, forbidden, self._meldable(mask)[0])

    def _discard_deadwood(self, mask: int, forbidden: int, meld: int) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        base = -1
        for c in cards_of(mask & ~forbidden):
            if not meld >> c & 1:
                # A card in no meld leaves every arrangement as it was: one solve covers all.
                if base < 0:
                    base = self.deadwood(mask)
                out.append((c, base - VALUE[c]))
            else:
                out.append((c, self.deadwood(mask & ~(1 << c))))
        return out

    def best_discard(self, mask: int, forbidden: int = 0) -> tuple[int, int]:
        """(least deadwood after one discard, the card to throw); ties go to the lowest card."""
        best_dw, best_c = 1 << 30, -1
        for c, dw in self.discard_deadwood(mask, forbidden):
            if dw < best_dw:
                best_dw, best_c = dw, c
        return best_dw, best_c

    def knock_discards(self, mask: int, limit: int, forbidden: int = 0) -> list[int]:
        """Every card whose discard leaves deadwood of ``limit`` or less (sorted by card)."""
        return self.discard_options(mask, limit, forbidden)[0]

    def discard_options(self, mask: int, limit: int, forbidden: int = 0) -> tuple[list[int],
                                                                                 bool]:
        """(``knock_discards``, whether every card of ``mask`` melds: big gin) at the cost of
        one look at the hand's meldable cards, which settles most hands alone."""
        meld, clash = self._meldable(mask)
        loose = mask & ~meld
        if loose:
            if _floor(loose, forbidden) > limit:
                return [], False  # loose cards stay whatever is thrown: no knock, no gin
            gin = False
        else:
            gin = not clash or self._search(meld) >> _DW_SHIFT == 0
        if limit < 0:
            return [], gin
        return [c for c, dw in self._discard_deadwood(mask, forbidden, meld) if dw <= limit], gin

    # --- melds as sets of cards ----------------------------------------------------------

    def is_meld(self, mask: int) -> bool:
        return mask in self._meld_set

    def layoff(self, hand: int, melds: tuple[int, ...] | list[int]) -> tuple[int, int, int]:
        """The defender's best answer to a knock: (deadwood, cards laid off, own deadwood).

        Cards may be laid off one after another (a run grows at either end, a set of three
        takes its fourth), and a card laid off is then not in the defender's own melds. Each
        of the knocker's melds may grow in several ways (``_growths``) and a card can go on
        one meld only, so every choice of one growth per meld with no card used twice is
        tried against the solver. Returns the least deadwood after laying off, the cards laid
        off for it (the fewest, then the lowest mask, on a tie), and the deadwood before.
        """
        own = self.deadwood(hand)
        options = [g for g in (self._growths(hand, m) for m in melds) if len(g) > 1]
        if not options:
            return own, 0, own
        # Every distinct set of cards that can be laid off at once. A card may fit two melds
        # (5H on 5C 5D 5S or after 2H-4H), so placing each card on the first meld it fits
        # would miss chains that need it on the other one: enumerate the choices instead.
        laids = {0}
        for grow in options:
            laids = {laid | g for laid in laids for g in grow if not laid & g}
        best, best_laid = own, 0
        for laid in laids:
            if not laid:
                continue
            dw = self.deadwood(hand & ~laid)
            if (dw, laid.bit_count(), laid) < (best, best_laid.bit_count(), best_laid):
                best, best_laid = dw, laid
        return best, best_laid, own

    def _growths(self, hand: int, meld: int) -> list[int]:
        """Every set of ``hand``'s cards that can be laid off, one by one, onto ``meld`` alone.

        Includes 0 (nothing laid). Grown one card at a time, each step a meld, as at the table.
        """
        seen = {meld}
        todo = [meld]
        while todo:
            m = todo.pop()
            for c in cards_of(hand & ~m):
                g = m | 1 << c
                if g not in seen and g in self._meld_set:
                    seen.add(g)
                    todo.append(g)
        return sorted(g & ~meld for g in seen)

STANDARD = Solver()
ACES_HIGH = Solver(aces_high=True)


def solver_for(aces_high: bool) -> Solver:
    """The shared solver of a meld family (its memo is a pure cache, safe to share)."""
    return ACES_HIGH if aces_high else STANDARD


def deadwood(mask: int, aces_high: bool = False) -> int:
    """The least deadwood of a hand (10, 11, 13 cards or any other size)."""
    return solver_for(aces_high).deadwood(mask)


def best_discard(mask: int, aces_high: bool = False, forbidden: int = 0) -> tuple[int, int]:
    """(least deadwood after one discard, which card) for an 11- (or 14-) card hand."""
    return solver_for(aces_high).best_discard(mask, forbidden)
