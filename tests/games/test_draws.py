"""``draws``: the fast bounded draws are ``random.Random``'s public ones, draw for draw.

``draw_below`` and ``shuffle_as_random`` make with ``getrandbits`` the draws that
``choice``, ``randrange`` and ``shuffle`` make through CPython's private
``_randbelow_with_getrandbits``; on a Python the module does not know, or with a generator
that draws its own way, they call the public methods. Either way a seeded game is the same.
"""

from __future__ import annotations

import random
import sys

import pytest

from launcher.games import draws
from launcher.games.draws import draw_below, shuffle_as_random

SIZES = [1, 2, 3, 7, 8, 9, 64, 65, 108, 2**31 + 1, 10**20 + 7]


def _draws(rng: random.Random) -> tuple[list[int], list[list[int]]]:
    below = draw_below(rng)
    # ``choice`` takes a len(): no range of more than sys.maxsize things.
    picks = [below(n) for n in SIZES * 20 if n <= sys.maxsize]
    picks += [below(n) for n in range(1, 200)]
    shuffled = []
    for size in (0, 1, 2, 52, 112, 256, 257, 600):
        items = list(range(size))
        shuffle_as_random(items, rng)
        shuffled.append(items)
    return picks, shuffled


@pytest.mark.parametrize("seed", range(20))
def test_the_fast_draws_are_the_public_methods_draw_for_draw(seed):
    """The same results as ``randrange``, ``choice`` and ``shuffle``, and the generator left
    in the same state, or the seeded games would change."""
    ours, theirs = random.Random(seed), random.Random(seed)
    below = draw_below(ours)
    assert [below(n) for n in SIZES * 20] == [theirs.randrange(n) for n in SIZES * 20]
    assert [below(n) for n in range(1, 200)] == [theirs.choice(range(n)) for n in range(1, 200)]
    for size in (0, 1, 2, 52, 112, 256, 257, 600):
        mine, stdlib = list(range(size)), list(range(size))
        shuffle_as_random(mine, ours)
        theirs.shuffle(stdlib)
        assert mine == stdlib
    assert ours.getstate() == theirs.getstate()


@pytest.mark.skipif(not (3, 11) <= sys.version_info[:2] <= (3, 13), reason="not a known Python")
def test_a_known_python_takes_the_fast_path():
    assert draws.KNOWN
    assert draws._fast(random.Random(1), "choice") and draws._fast(random.Random(1), "shuffle")


@pytest.mark.parametrize("seed", range(5))
def test_an_unknown_python_draws_through_the_public_methods_the_same(seed, monkeypatch):
    fast = _draws(random.Random(seed))
    monkeypatch.setattr(draws, "KNOWN", False)
    assert not draws._fast(random.Random(seed), "choice")
    assert _draws(random.Random(seed)) == fast


def test_the_fast_draws_defer_to_a_generator_that_draws_its_own_way():
    class Counting(random.Random):
        calls = 0

        def random(self) -> float:  # a subclass with its own random: ints come from it
            Counting.calls += 1
            return super().random()

    rng = Counting(5)
    below = draw_below(rng)
    assert all(0 <= below(n) < n for n in range(1, 50))
    items = list(range(30))
    shuffle_as_random(items, rng)
    assert sorted(items) == list(range(30)) and Counting.calls > 49

    class Keeping(random.Random):
        def shuffle(self, x: list) -> None:  # type: ignore[override]
            pass

    items = list(range(30))
    shuffle_as_random(items, Keeping(5))
    assert items == list(range(30))

    class Choosy(random.Random):
        def choice(self, seq):  # a subclass with its own choice: its picks
            return seq[0]

    assert [draw_below(Choosy(5))(n) for n in range(1, 20)] == [0] * 19
