"""The DC network the electrical model (hal/electrical.py) solves: conductances between named
nodes, sources with their own resistance, fixed rails, solved by Gaussian elimination."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

G_STRONG = 1.0  # a path at least this good can carry a motor's current
G_LEAK = 1e-9  # every node to GND: keeps a floating part of the network solvable


class Network:
    """Conductances and sources of one evaluation; nodes are names, rails are fixed."""

    def __init__(self, rails: Mapping[str, float]) -> None:
        self.rails = rails
        self.links: list[tuple[str, str, float]] = []
        self.sources: list[tuple[str, float, float]] = []  # node, volts, conductance
        self.emfs: list[tuple[str, str, float, float]] = []  # minus, plus, volts, conductance
        self.to_rails: list[tuple[str, str, float]] = []  # rail, node, conductance

    def link(self, a: str | None, b: str | None, g: float) -> None:
        if a is None or b is None or a == b or g <= 0:
            return
        if a in self.rails and b in self.rails:
            return
        if a in self.rails:
            a, b = b, a
        if b in self.rails:
            self.sources.append((a, self.rails[b], g))
            self.to_rails.append((b, a, g))
        else:
            self.links.append((a, b, g))

    def source(self, node: str | None, volts: float, g: float) -> None:
        if node is not None and node not in self.rails:
            self.sources.append((node, volts, g))

    def emf(self, minus: str | None, plus: str | None, volts: float, g: float) -> None:
        if minus is None or plus is None:
            return
        if minus in self.rails:
            self.source(plus, self.rails[minus] + volts, g)
        elif plus in self.rails:
            self.source(minus, self.rails[plus] - volts, g)
        else:
            self.emfs.append((minus, plus, volts, g))

    def into_rail(self, rail: str, volts: Mapping[str, float | None]) -> float:
        """The current the links to ``rail`` push into it (A; negative: it sources)."""
        fixed = self.rails[rail]
        return sum(g * (v - fixed) for r, node, g in self.to_rails
                   if r == rail and (v := volts.get(node)) is not None)

    def solve(self, nodes: Iterable[str]) -> tuple[dict[str, float | None], set[str]]:
        """Every node's voltage (None: no path to any source) and the strong nodes."""
        names = sorted(set(nodes) - set(self.rails))
        index = {n: i for i, n in enumerate(names)}
        parent = list(range(len(names)))

        def find(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        for a, b, _ in self.links:
            parent[find(index[a])] = find(index[b])
        for a, b, _, _ in self.emfs:
            parent[find(index[a])] = find(index[b])
        groups: dict[int, list[str]] = {}
        for n in names:
            groups.setdefault(find(index[n]), []).append(n)
        sourced = {n for n, _, _ in self.sources}
        volts: dict[str, float | None] = dict(self.rails)
        for members in groups.values():
            if sourced.isdisjoint(members):
                for m in members:
                    volts[m] = None  # nothing holds it to any voltage (an EMF alone floats)
                continue
            volts.update(self._solve_group(members))
        return volts, self._strong(names)

    def _solve_group(self, members: list[str]) -> dict[str, float]:
        k = {n: i for i, n in enumerate(members)}
        size = len(members)
        a = [[0.0] * size for _ in range(size)]
        b = [0.0] * size
        for i in range(size):
            a[i][i] += G_LEAK
        for x, y, g in self.links:
            if x in k:
                i, j = k[x], k[y]
                a[i][i] += g
                a[j][j] += g
                a[i][j] -= g
                a[j][i] -= g
        for n, v, g in self.sources:
            if n in k:
                a[k[n]][k[n]] += g
                b[k[n]] += g * v
        for minus, plus, v, g in self.emfs:
            if minus in k:
                i, j = k[minus], k[plus]
                a[i][i] += g
                a[j][j] += g
                a[i][j] -= g
                a[j][i] -= g
                b[j] += g * v
                b[i] -= g * v
        x = gauss(a, b)
        return {n: x[k[n]] for n in members}

    def _strong(self, names: list[str]) -> set[str]:
        """Nodes joined by paths of at least G_STRONG to a rail or a strong source."""
        parent: dict[str, str] = {n: n for n in (*names, *self.rails)}

        def find(n: str) -> str:
            while parent[n] != n:
                parent[n] = parent[parent[n]]
                n = parent[n]
            return n

        for a, b, g in self.links:
            if g >= G_STRONG:
                parent[find(a)] = find(b)
        for a, b, _, g in self.emfs:
            if g >= G_STRONG:
                parent[find(a)] = find(b)
        anchored = {find(r) for r in self.rails}
        anchored |= {find(n) for n, _, g in self.sources if g >= G_STRONG}
        return {n for n in names if find(n) in anchored}


def gauss(a: list[list[float]], b: list[float]) -> list[float]:
    n = len(b)
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        b[col], b[pivot] = b[pivot], b[col]
        p = a[col][col]
        for r in range(col + 1, n):
            f = a[r][col] / p
            if f:
                row, top = a[r], a[col]
                for c in range(col, n):
                    row[c] -= f * top[c]
                b[r] -= f * b[col]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        s = b[r] - sum(a[r][c] * x[c] for c in range(r + 1, n))
        x[r] = s / a[r][r]
    return x
