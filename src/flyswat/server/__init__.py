"""The game server: tables in rooms, a WebSocket per player, HTTP for tables and records.

Layers (``shared/STYLE.md``): :mod:`flyswat.arbiter` (pure) decides slap order;
:mod:`.table` drives one game with clocks and timers; :mod:`.store` keeps every event;
:mod:`.app` is the Starlette transport and the ``flyswat serve`` command;
:mod:`.protocol` holds every message as a pydantic model.
"""
