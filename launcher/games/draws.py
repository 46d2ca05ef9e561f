"""``random.Random``'s own bounded draws in fewer calls: the one module that knows how it draws.

A ``random.Random`` draws an int below ``n`` (for ``choice``, ``randrange`` and ``shuffle``)
by taking ``n.bit_length()`` bits from ``getrandbits`` until they fall below ``n``: the
private ``_randbelow_with_getrandbits`` of CPython's Lib/random.py, the same in 3.11 to
3.13. ``draw_below`` and ``shuffle_as_random`` make those very draws with ``getrandbits``
(public) bound once, without a Python call per draw, so a seeded game is the same whichever
path it takes. They do so only where the draws are known (``KNOWN``: CPython of those
versions, a generator whose bounded ints are ``random.Random``'s own); anywhere else they
call the public methods, ``rng.choice(range(n))`` and ``rng.shuffle``. tests/games/
test_draws.py checks the two paths draw for draw.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from typing import Any

# The Pythons whose Lib/random.py draws as the fast path does.
KNOWN = sys.implementation.name == "cpython" and (3, 11) <= sys.version_info[:2] <= (3, 13)

_BITS_WAY = getattr(random.Random, "_randbelow_with_getrandbits", None)


def _fast(rng: random.Random, method: str) -> bool:
    """Whether ``rng.<method>`` draws as ``random.Random`` does on a known Python."""
    kind = type(rng)
    return (KNOWN and _BITS_WAY is not None and getattr(kind, "_randbelow", None) is _BITS_WAY
            and getattr(kind, method) is getattr(random.Random, method))


def draw_below(rng: random.Random) -> Callable[[int], int]:
    """``below(n)``: the index ``rng.choice`` of ``n`` things draws (``rng.randrange(n)``
    draws it too), from the same bits."""
    if not _fast(rng, "choice"):
        choice = rng.choice

        def public(n: int) -> int:
            return choice(range(n))

        return public
    getrandbits = rng.getrandbits

    def below(n: int) -> int:
        if n == 1:  # bits until a 0 (``choice`` of one thing still draws)
            while getrandbits(1):
                pass
            return 0
        k = n.bit_length()
        r = getrandbits(k)
        while r >= n:
            r = getrandbits(k)
        return r

    return below


_BITS = tuple(n.bit_length() for n in range(1, 257))  # _BITS[i]: the bits of i + 1


def shuffle_as_random(items: list[Any], rng: random.Random) -> None:
    """``rng.shuffle(items)``: the same swaps from the same draws, without a call per card."""
    if not _fast(rng, "shuffle"):
        rng.shuffle(items)
        return
    getrandbits = rng.getrandbits
    bits = _BITS if len(items) <= len(_BITS) else tuple(n.bit_length() for n in range(
        1, len(items) + 1))
    for i in range(len(items) - 1, 0, -1):  # swap item i with one of 0..i, as ``below(i + 1)``
        k = bits[i]
        j = getrandbits(k)
        while j > i:
            j = getrandbits(k)
        items[i], items[j] = items[j], items[i]
