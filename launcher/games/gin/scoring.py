"""Scoring across hands: games to 100 with game, line and shutout bonuses; Hollywood; streaks."""

from __future__ import annotations

from dataclasses import dataclass, field

from launcher.games.gin.rules import GinRules, HandResult


@dataclass
class GameScore:
    """One game's running score (Hollywood keeps three of these)."""

    points: list[int] = field(default_factory=lambda: [0, 0])
    wins: list[int] = field(default_factory=lambda: [0, 0])   # hands that scored here
    winner: int | None = None
    totals: tuple[int, int] | None = None                   # with the bonuses, once over
    shutout: bool = False

    @property
    def over(self) -> bool:
        return self.winner is not None


class Scoreboard:
    """Credits hand results to the games they count toward and closes games at the target.

    A hand won is its winner's k-th win of the session: it counts toward games
    ``1..min(k, games)`` that are still open (Hollywood; with one game, always game 1).
    A game closes when a player reaches ``game_target`` there; then its winner gets the
    game bonus (multiplied when the loser won no hand in that game) and each player the
    line bonus for every hand they won in it.
    """

    def __init__(self, rules: GinRules) -> None:
        self.rules = rules
        self.games = [GameScore() for _ in range(rules.games)]
        self.session_wins = [0, 0]
        self.hands = 0
        self.streak_player: int | None = None
        self.streak = 0
        self.streak_bonuses = [0, 0]

    @property
    def over(self) -> bool:
        return all(g.over for g in self.games)

    def record(self, result: HandResult) -> int:
        """Book one hand; returns the points credited to its winner (0 on a draw)."""
        rules = self.rules
        self.hands += 1
        w = result.winner
        if w is None:
            if rules.draw_breaks_streak:
                self.streak_player, self.streak = None, 0
            return 0
        if w == self.streak_player:
            self.streak += 1
        else:
            self.streak_player, self.streak = w, 1
        points = result.points
        if self.streak >= 2 and rules.streak_bonus:
            points += rules.streak_bonus
            self.streak_bonuses[w] += rules.streak_bonus
        self.session_wins[w] += 1
        counts = min(self.session_wins[w], len(self.games))
        for g in self.games[:counts]:
            if g.over:
                continue
            g.points[w] += points
            g.wins[w] += 1
            if g.points[w] >= rules.game_target:
                self._close(g, w)
        return points

    def _close(self, g: GameScore, w: int) -> None:
        rules = self.rules
        loser = 1 - w
        g.winner = w
        g.shutout = g.wins[loser] == 0
        bonus = rules.game_bonus * (rules.shutout_multiplier if g.shutout else 1)
        totals = [g.points[p] + rules.line_bonus * g.wins[p] for p in (0, 1)]
        totals[w] += bonus
        g.totals = (totals[0], totals[1])

    def margin(self, player: int) -> int:
        """Final points of ``player`` minus the opponent's, over the closed games."""
        return sum(g.totals[player] - g.totals[1 - player] for g in self.games if g.totals)
