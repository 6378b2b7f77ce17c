"""A new player's id (``identity.new_id``): never one a command line reads as an option."""

from __future__ import annotations

import secrets

from flyswat.players import identity


def test_an_id_that_would_begin_with_a_dash_is_drawn_again() -> None:
    draws = iter(["-starts-with-a-dash", "_fine", "Abc123"])
    assert identity.new_id(lambda _n: next(draws)) == "_fine"
    ids = [identity.new_id(secrets.token_urlsafe) for _ in range(2000)]  # 31 would begin so
    assert not [i for i in ids if i.startswith("-")]
    assert all(identity.valid_id(i) for i in ids)
