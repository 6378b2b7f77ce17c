"""The tables of one server process, put together: the :class:`Runner` holds its parts and
does nothing itself.

- :class:`~flyswat.server.executor.Executor` (``runner.executor``): store, then tell; the
  tables' timers; the connections' writes.
- :class:`~flyswat.server.directory.Directory` (``runner.directory``): the tables in memory,
  made, loaded, found and forgotten.
- :class:`~flyswat.server.node.Node` (``runner.node``): which tables are this node's in the
  cluster, its shared-list entries and its hand-over.
- :class:`~flyswat.server.admission.Admission` (``runner.admission``): the door a new
  table's create and joins wait at while the loop runs late.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from flyswat.server.admission import Admission
from flyswat.server.cluster import Cluster
from flyswat.server.directory import Directory
from flyswat.server.executor import Executor, Ticking, monotonic_ms
from flyswat.server.limits import Limits
from flyswat.server.node import Node
from flyswat.server.settings import MAX_SPECTATORS
from flyswat.server.store import Store
from flyswat.table.core import Table
from flyswat.table.io import Sources
from flyswat.table.seats import Audience

__all__ = ["Runner", "monotonic_ms"]


class Runner:
    """One process's tables over ``store``: its executor, directory and node."""

    def __init__(
        self,
        store: Store,
        *,
        bot_pace: float = 1.0,
        clock: Callable[[], float] = monotonic_ms,
        sources: Callable[[], Sources] = Sources,
        limits: Limits | None = None,
        cluster: Cluster | None = None,
        max_spectators: int = MAX_SPECTATORS,
    ) -> None:
        """``cluster``: this node among the others serving the store (none: the store is
        this process's alone, as in tests of the tables); ``max_spectators``: the spectators
        this node takes, over all its tables."""
        self.store = store
        self.cluster = cluster
        tables: dict[str, Table] = {}

        def forget(table: Ticking) -> None:  # the executor's tables are these Tables
            self.directory.forget(cast(Table, table))

        self.executor = Executor(store, tables, forget, clock)
        self.directory = Directory(store, self.executor, tables, bot_pace=bot_pace,
                                   sources=sources, limits=limits or Limits(),
                                   audience=Audience(max_spectators))  # fmt: skip
        self.node = Node(self.directory, cluster)
        self.admission = Admission()

    def start(self, writer: str = "thread") -> None:
        """Store through the group-commit writer (on the running loop; ``writer``: in a
        ``thread`` or a ``process``); a table the store fences is lost to this node."""
        self.executor.start(fenced=self.node.lost, apart=writer == "process")

    def close(self) -> None:
        """Stop every timer, write what is queued, and release the store."""
        self.executor.close()
