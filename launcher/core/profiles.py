"""Launcher profiles: what one press of the button does, as data the state machine reads.

The toy plays press-your-luck (``flip-attack``). Owners also use the launcher as the draw
pile of classic games: ``dealer`` shoots one card a press (UNO, UNO Splash), ``uno-flip``
does the same with the lid cycle flipping the cartridge, ``gin`` is a one-card stock that
refuses to go below two cards (Gin Rummy: the hand is then a draw), and ``deal N`` shoots N
cards a press, one seat's hand, with a chime to pass to the next seat. The machine has one
table for all of them; the profile only changes how many cards a press asks for, which cues
it plays and where the stock stops.
"""

from __future__ import annotations

from dataclasses import dataclass

from launcher.core import cues

DEAL_MAX = 30  # cards one press of ``deal N`` may shoot


@dataclass(frozen=True, slots=True)
class Profile:
    """What one press does.

    ``per_press``: None = press your luck (the side's hazard curve and shot sizes, dry
    presses that escalate, BAM); N = exactly N cards, fewer only when the cartridge runs
    out, with no escalation and no BAM. ``flips``: the game turns the cartridge with lid
    cycles (the firmware turns it on every full opening whatever the profile; a game that
    does not flip just never opens the lid fully). ``after_shot``: a cue once a shot is out
    (``deal N``: pass to the next seat). ``stock_floor``: presses are refused, with the
    ``hand_draw`` cue, while the firmware counts this many cards or fewer (``gin``: 2).
    """

    name: str
    per_press: int | None
    flips: bool
    after_shot: str | None = None
    stock_floor: int = 0

    def __str__(self) -> str:
        return self.name

    @property
    def lucky(self) -> bool:
        """Presses draw from the luck tables (and escalate)."""
        return self.per_press is None


FLIP_ATTACK = Profile("flip-attack", None, True)
DEALER = Profile("dealer", 1, False)
UNO_FLIP = Profile("uno-flip", 1, True)
GIN = Profile("gin", 1, False, stock_floor=2)
NAMED = {p.name: p for p in (FLIP_ATTACK, DEALER, UNO_FLIP, GIN)}


def deal_profile(n: int) -> Profile:
    """``deal N``: every press shoots exactly N cards, then the next-seat chime."""
    if not 1 <= n <= DEAL_MAX:
        raise ValueError(f"deal N needs N within 1..{DEAL_MAX}, not {n}")
    return Profile(f"deal {n}", n, False, after_shot=cues.DEAL_NEXT)


def parse_profile(text: str) -> Profile:
    """``flip-attack``, ``dealer``, ``uno-flip``, ``gin`` or ``deal N``; ValueError naming them."""
    word = " ".join(str(text).split())
    if word in NAMED:
        return NAMED[word]
    head, _, n = word.partition(" ")
    if head == "deal" and n.isdigit():
        return deal_profile(int(n))
    raise ValueError(f"unknown launcher profile {text!r}: one of {', '.join(NAMED)}, "
                     f"or deal N (N within 1..{DEAL_MAX})")
