"""``flyswat simulate --fast``: the command-line adapter of :func:`simulate_fast`.

The same options as the reference simulator (:mod:`flyswat.sim.reference`), the same summary
table; only ``--plot`` is not offered (the reference's figure draws from per-game objects).
With ``--records``, each game's record is built by replay through the reference engine
(:func:`flyswat.sim.fast.records`) and written as ``<folder>/fast-<seed>-<game>.json``.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime

from flyswat.errors import FlyswatError, MalformedError
from flyswat.sim.fast.batch import records, simulate_fast
from flyswat.sim.fast.summary import summary


def run(args: argparse.Namespace) -> int:
    """Play, print the summary, write records if asked; 0, or 2 for a bad option or path."""
    from rich.console import Console

    try:
        if args.plot is not None:
            raise MalformedError("--plot needs the reference simulator: leave out --fast")
        if args.jobs is not None and args.jobs < 1:
            raise MalformedError(f"jobs must be 1 or more, not {args.jobs}", "bad_jobs")
        levels = [s.strip() for s in args.bots.split(",") if s.strip()]
        result = simulate_fast(
            args.games,
            args.seats,
            levels,
            args.seed,
            remove=args.remove,
            jobs=args.jobs if args.jobs is not None or args.ray else 1,
            ray=args.ray,
            trace=args.records is not None,
        )
        if args.records is not None:
            from flyswat.record import write_record

            args.records.mkdir(parents=True, exist_ok=True)
            started_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            for record in records(result, started_at=started_at, prefix=f"fast-{args.seed}"):
                write_record(record, args.records / f"{record['id']}.json")
    except (FlyswatError, OSError) as e:
        print(f"flyswat simulate: {e}", file=sys.stderr)
        return 2
    if result.games == 0:
        print("no games played")
        return 0
    Console().print(summary(result).render())
    return 0
