"""What many bot games came to, as one table: shared by the reference simulator
(:func:`flyswat.sim.reference.summarise`) and the fast one (:func:`flyswat.sim.fast.summary`),
so that ``flyswat simulate`` prints the same table either way and neither simulator imports
the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import RenderableType


@dataclass(frozen=True, slots=True)
class Line:
    """One row of the summary: all seat-games of one seat position, or of one bot level.

    ``win_share`` is wins per seat-game, a shared first place counting as a fraction (R24);
    ``points``, ``flies`` and ``wrong`` (wrong hands, R19) are means per seat-game.
    """

    label: str
    seat_games: int
    win_share: float
    points: float
    flies: float
    wrong: float


@dataclass(frozen=True, slots=True)
class Summary:
    """What many bot games came to: by seat position from the start player, by bot level, and
    the games' lengths in turns (reveals) and slap rounds as (mean, least, most)."""

    games: int
    positions: tuple[Line, ...]
    levels: tuple[Line, ...]
    turns: tuple[float, int, int]
    rounds: tuple[float, int, int]

    def render(self) -> RenderableType:
        """The summary as rich tables (the ``sim`` extra)."""
        from rich.console import Group
        from rich.table import Table

        table = Table(title=f"{self.games} bot games")
        for name in ("", "seat-games", "win share", "points", "flies won", "wrong slaps"):
            table.add_column(name, justify="left" if not name else "right")
        for title, lines in (("position", self.positions), ("level", self.levels)):
            table.add_section()
            for line in lines:
                table.add_row(
                    f"{title} {line.label}",
                    str(line.seat_games),
                    f"{line.win_share:.1%}",
                    f"{line.points:.1f}",
                    f"{line.flies:.1f}",
                    f"{line.wrong:.2f}",
                )
        length = Table(title="game length")
        for name in ("", "mean", "least", "most"):
            length.add_column(name, justify="left" if not name else "right")
        for name, (mean, low, high) in (("turns", self.turns), ("slap rounds", self.rounds)):
            length.add_row(name, f"{mean:.1f}", str(low), str(high))
        return Group(table, length)
