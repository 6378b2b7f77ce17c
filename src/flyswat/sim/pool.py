"""Where the simulators' chunks of games are played: here, in local processes, or on Ray.

:func:`run_chunks` maps a pure function over a list of chunks and gives the results back in
the chunks' order, whoever played them: one process, ``jobs`` local processes
(``forkserver``, not fork: a forked child would inherit the locks of the caller's threads,
the progress bar's among them), or the tasks of a Ray cluster (the ``ray`` extra). Since
every chunk is seeded by its own index, the results never depend on where or in what order
the chunks were played.

Ray: ``ray="local"`` starts a Ray instance on this machine with ``jobs`` CPUs (all of them
when ``jobs`` is None) and stops it at the end; any other value is the address of a running
cluster (``ray start --head`` and its nodes; ``"auto"`` finds the one this machine belongs
to), whose nodes must have flyswat installed as the driver does. At most ``jobs`` tasks run
at once (every CPU of the cluster when None).
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any, TypeVar

from flyswat.errors import MalformedError

#: A local Ray that did not come up in time (a busy machine) is started again this often.
START_TRIES = 3

T = TypeVar("T")
R = TypeVar("R")


def run_chunks(
    func: Callable[[T], R],
    work: Sequence[T],
    *,
    jobs: int | None = 1,
    ray: str | None = None,
    done: Callable[[int], None] | None = None,
) -> list[R]:
    """``[func(w) for w in work]``, over ``jobs`` processes or on Ray (module docstring);
    ``done(k)`` is called as chunk ``k`` finishes, in the order they finish. Raises
    :class:`MalformedError` for ``jobs`` below 1."""
    if jobs is not None and jobs < 1:
        raise MalformedError(f"jobs must be 1 or more, not {jobs}", "bad_jobs")
    if ray is not None:
        return _on_ray(func, work, jobs, ray, done)
    results: dict[int, R] = {}
    if (jobs or 1) <= 1 or len(work) <= 1:
        for k, w in enumerate(work):
            results[k] = func(w)
            if done:
                done(k)
    else:
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
            futures = {pool.submit(func, w): k for k, w in enumerate(work)}
            for future in as_completed(futures):
                results[futures[future]] = future.result()
                if done:
                    done(futures[future])
    return [results[k] for k in range(len(work))]


@contextlib.contextmanager
def ray_session(address: str, jobs: int | None = None) -> Iterator[None]:
    """Ray connected for the block: a local instance of ``jobs`` CPUs started (and stopped
    after) for ``"local"``, else the cluster at ``address``; already connected, as it is.
    :func:`run_chunks` inside the block uses it rather than starting its own."""
    from flyswat.extras import require

    require("ray", "flyswat simulate --ray", "ray")
    local = address == "local"
    if local:  # workers here share the driver's environment: no `uv run` each
        os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")  # read as ray is imported
    import ray

    if ray.is_initialized():
        yield
        return
    tries = START_TRIES if local else 1
    for attempt in range(tries):
        try:
            ray.init(
                address=None if local else address,
                num_cpus=jobs if local else None,
                include_dashboard=False,
                log_to_driver=False,
                logging_level=logging.WARNING,
            )
            break
        except Exception as e:  # Ray's own, when its node is not up within its 30 s
            ray.shutdown()
            if attempt == tries - 1 or "timed out during startup" not in str(e):
                raise
    try:
        yield
    finally:
        ray.shutdown()


def _on_ray(
    func: Callable[[T], R],
    work: Sequence[T],
    jobs: int | None,
    address: str,
    done: Callable[[int], None] | None,
) -> list[R]:
    with ray_session(address, jobs):
        import ray

        resources: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]
        cap = jobs or max(1, int(resources.get("CPU", 1)))
        task = ray.remote(num_cpus=1)(func)
        results: dict[int, R] = {}
        pending: dict[Any, int] = {}
        queue = iter(enumerate(work))
        while True:
            for k, w in queue:  # keep ``cap`` tasks in flight
                pending[task.remote(w)] = k
                if len(pending) >= cap:
                    break
            if not pending:
                break
            ready, _ = ray.wait(list(pending), num_returns=1)
            k = pending.pop(ready[0])
            results[k] = ray.get(ready[0])
            if done:
                done(k)
        return [results[k] for k in range(len(work))]
