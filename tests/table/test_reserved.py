"""A table whose free seat is kept for one player (a challenge's: ``TableOptions.reserved``)."""

from __future__ import annotations

import pytest

from flyswat import protocol as p
from flyswat.errors import FlyswatError
from flyswat.table.core import Table
from flyswat.table.io import Join, Sources

JONAS = "jonas-player-id"


def _table() -> Table:
    options = p.TableOptions(seats=2, public=False, reserved=JONAS)
    table, _ = Table.create("RESERV", options, "Ines", Sources.fixed(), 0.0, player="ines-id-123")
    return table


def test_the_kept_seat_is_taken_by_its_player_only() -> None:
    table = _table()
    for stranger in (Join("Zed"), Join("Zed", player="someone-else-1")):
        with pytest.raises(FlyswatError) as refused:
            table.handle(stranger, 1.0)
        assert refused.value.code == "seat_reserved"
    assert not table.seats[1].joined  # nothing changed
    out = table.handle(Join("Jonas", player=JONAS), 2.0)
    assert out.reply[0] == 1 and table.seats[1].player == JONAS


def test_a_kept_seat_names_a_player_id() -> None:
    with pytest.raises(FlyswatError) as refused:
        Table.create("RESERV", p.TableOptions(reserved="../x"), "Ines", Sources.fixed(), 0.0)
    assert refused.value.code == "bad_options"
