"""A shot's size is drawn as ``random.choices`` draws it: a seed replays the same shots."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from launcher.core.config import SideLuck
from launcher.core.luck import shot_size

_TABLES = st.integers(1, 12).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, 20), min_size=n, max_size=n),
    st.lists(st.floats(0.01, 100.0), min_size=n, max_size=n)))


@settings(max_examples=200, deadline=None)
@given(table=_TABLES, seed=st.integers(0, 2**32))
def test_shot_size_is_the_draw_of_random_choices_and_uses_the_same_randomness(table, seed):
    sizes, weights = table
    side = SideLuck(hazard=(1.0,), sizes=tuple(sizes), weights=tuple(weights))
    ours, theirs = random.Random(seed), random.Random(seed)
    for _ in range(20):
        assert shot_size(side, ours) == theirs.choices(side.sizes, side.weights)[0]
    assert ours.random() == theirs.random()  # the generators are in the same state after
