"""flyswat: the real-time card game *Fliegen klatschen*, played fairly online.

The pure core (no I/O, no clock, no global random state):

- :mod:`flyswat.cards` — colours, cards and the deck (R1–R3);
- :mod:`flyswat.rules` — the rule options (R4, R6, R16, R21);
- :mod:`flyswat.shuffle` — the seeded, documented shuffle (R5);
- :mod:`flyswat.engine` — the game itself (R7–R24);
- :mod:`flyswat.view` — what one seat may see (R25);
- :mod:`flyswat.errors` — the few exception types.
"""

from flyswat import native as native  # first: the compiled hot path, where there is one
from flyswat.cards import DECK, Card, Colour
from flyswat.engine import Game, Result, Round, Turn
from flyswat.errors import FlyswatError, IllegalActionError, MalformedError
from flyswat.rules import Rules
from flyswat.view import View, view

__all__ = [
    "DECK",
    "Card",
    "Colour",
    "FlyswatError",
    "Game",
    "IllegalActionError",
    "MalformedError",
    "Result",
    "Round",
    "Rules",
    "Turn",
    "View",
    "view",
]
