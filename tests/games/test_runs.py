"""``launcher simulate`` and ``launcher tune`` play through the game-state contract
(``games.runs.play_games``): the launcher is the chance player (``LauncherChance``), the
bots sit at the seats, and ``--check`` is the one card check (``base.check_cards``)."""

from __future__ import annotations

import random

import pytest

from launcher.core import config
from launcher.games import runs
from launcher.games.base import GameState, RuleViolation, Run, check_cards, game_seed, play_out
from launcher.games.launchers import DirectLauncher, LauncherChance
from launcher.games.registry import GAMES

NAMES = sorted(GAMES)


def _run(name: str, check: bool = False) -> Run:
    spec = GAMES[name]
    bots = ("heuristic", "random") * (spec.default_players // 2)
    return Run(spec.options({}), bots, 7, config.load(), check=check)


@pytest.mark.parametrize("name", NAMES)
def test_every_game_s_run_plays_through_the_contract_as_its_table_did(name, monkeypatch):
    """The same summary as the game's table gives from the same seeds (the tables are
    what simulate played before), and every game through ``play_out``."""
    spec = GAMES[name]
    run = _run(name)
    played: list[GameState] = []

    def counted(state, *args, **kw):
        played.append(state)
        return play_out(state, *args, **kw)

    monkeypatch.setattr(runs, "play_out", counted)
    through = spec.play(run, 0, 3)
    assert len(played) == 3 and all(s.is_terminal() for s in played)
    tables = spec.summary(bots=list(run.bots), **_fixed(spec))
    for g in range(3):
        rng = random.Random(game_seed(run.seed, g))
        if name == "flip-attack":
            from launcher.games.flip_attack.summary import Recorder

            recorder = Recorder(tables, run.settings.luck)
            table = spec.table(run, rng, [recorder.observe])
            recorder.game(table.play_game(first_dealer=g % run.players))
        elif name == "gin":
            tables.add(spec.table(run, rng).play_game(first_dealer=g % 2))
        else:
            tables.add(spec.table(run, rng).play_game())  # the players draw for the dealer
    assert through.format("x") == tables.format("x")


def _fixed(spec) -> dict:
    return {"game": spec.name, "two_sided": len(spec.game.sides) == 2} \
        if hasattr(spec, "game") else {}


def test_check_finds_a_card_lost_between_two_steps() -> None:
    """``run.check``: ``check_cards`` after every step of ``play_out``; a card gone from the
    launcher's stack is found at once (without the check the game plays on)."""

    class Losing:
        def __init__(self, state: GameState) -> None:
            self.inner = LauncherChance(DirectLauncher(config.load().luck, random.Random(1)),
                                        GAMES["flip-attack"].profile, GAMES["flip-attack"].sides)
            self.n = 0

        def answer(self, state: GameState) -> int:
            self.n += 1
            if self.n == 5:
                del state.stack[0]  # the card at the back of the cartridge, gone
            return self.inner.answer(state)

    spec = GAMES["flip-attack"]
    seats = [spec.player("random", random.Random(q), config.load()) for q in range(4)]
    state = spec.new_game(seed=3)
    with pytest.raises(RuleViolation, match="not conserved"):
        play_out(state, seats, Losing(state), check=True)


def test_check_cards_names_what_is_wrong() -> None:
    state = GAMES["uno"].new_game(seed=1)
    check_cards(state)
    state.hand.hands[0].append(state.hand.hands[1][0])
    with pytest.raises(RuleViolation, match=r"twice \["):
        check_cards(state)
    state = GAMES["gin"].new_game(seed=1)
    state.stack.pop()
    with pytest.raises(RuleViolation, match="lost"):
        check_cards(state)


def test_the_launcher_draws_at_the_dry_streak_the_game_counts() -> None:
    """Every lid cycle the game asked for is done before the next press, so the launcher's
    dry streak is the state's when it draws, though the side may be back where it was (two
    Flips between presses)."""
    spec = GAMES["flip-attack"]
    cycled_back = 0
    for seed in range(6):
        launcher = DirectLauncher(config.load().luck, random.Random(seed))
        chance = LauncherChance(launcher, spec.profile, spec.sides)
        state = spec.new_game(seed=seed)
        real = launcher.press

        def press(state=state, launcher=launcher, real=real) -> list:
            assert launcher.dry_streak == state.streak
            return real()

        launcher.press = press
        seats = [spec.player("random", random.Random(q), config.load()) for q in range(4)]
        last = (0, 0)
        while not state.is_terminal():
            if state.is_chance_node():
                now = (state.lid_cycles(), state.launcher_side())
                cycled_back += now[0] - last[0] >= 2 and now[1] == last[1]
                state.apply_action(chance.answer(state))
                last = (state.lid_cycles(), state.launcher_side())
            else:
                state.apply_action(seats[state.current_player()].act(state))
    assert cycled_back


def test_a_gin_knocker_chooses_its_layout_through_the_contract() -> None:
    """A knock that may be laid out several ways waits for the knocker's layout, as at the
    table, where its bot arranges the melds: the heuristic bot's choice, which is not always
    the rules' own (``engine_layout``), is the one laid out."""
    from launcher.games.gin.bots import HeuristicBot
    from launcher.games.gin.contract import LAYOUT, GinPlayer

    spec = GAMES["gin"]
    own = 0
    for seed in range(40):
        state = spec.new_game(seed=seed)
        rng = random.Random(seed)
        bots = [HeuristicBot(random.Random(seed + q)) for q in range(2)]
        seats = [GinPlayer(b) for b in bots]
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(1)
                continue
            p = state.current_player()
            action = seats[p].act(state)
            if state.knocking >= 0:
                legal = state.legal_actions()
                assert legal == list(range(LAYOUT, LAYOUT + len(state.layouts))) and \
                    len(legal) > 1
                hand = state.hand
                melds = bots[p].arrange(hand.view(p), state.knocking)
                assert set(state.layouts[action - LAYOUT][1]) == set(melds)
                own += action != state.engine_layout()
                before = len(state.results)
                state.apply_action(action)
                assert set(state.results[before].knocker_melds) == set(melds)
                continue
            state.apply_action(action if rng.random() < 0.9 else
                               rng.choice(state.legal_actions()))
    assert own


@pytest.mark.parametrize("name", ["flip-attack", "uno"])
def test_a_table_finds_a_card_lost_between_two_hands(name: str) -> None:
    """Gathering the cards for the next deal counts them (``base.where``): a card the
    launcher lost since the last hand is found before the deal."""
    spec = GAMES[name]
    run = Run(spec.options({}), ("random",) * 4, 3, config.load(), check=True)
    table = spec.table(run, random.Random(3))
    table.play_hand(0)
    assert table.launcher.cards_left
    real = table.launcher.unload
    table.launcher.unload = lambda: real()[1:]  # one card gone
    with pytest.raises(RuleViolation, match="cards missing"):
        table.play_hand(1)
