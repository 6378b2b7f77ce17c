"""Players, pure: who a player is (identity, names, secrets, claim codes) and their ratings.

No I/O and no clock: :mod:`~flyswat.players.identity` checks names and hashes secrets,
:mod:`~flyswat.players.ratings` rates a finished game with openskill's Plackett–Luce model.
The server keeps both in its store (:mod:`flyswat.server.players_store`).
"""
