"""The ``flyswat`` command line: one subcommand per module.

Each module named in :data:`COMMANDS` provides ``add_arguments(parser)`` and ``run(args) -> int``
(the exit status), so a subcommand lives beside the code it drives.
"""

from __future__ import annotations

import argparse
import importlib
import sys

#: subcommand -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "serve": ("flyswat.server.serve", "run the game server: play in the browser"),
    "simulate": ("flyswat.sim.reference", "play many bot games and summarise them"),
    "verify": ("flyswat.record", "check game records against the rules"),
    "fairplay": ("flyswat.server.operator", "list the players under fair-play review"),
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every available subcommand."""
    parser = argparse.ArgumentParser(
        prog="flyswat", description="The real-time card game Fliegen klatschen, played fairly."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as e:
            if e.name and module_name.startswith(e.name):
                continue  # not built yet
            raise
        p = sub.add_parser(name, help=help_text, description=help_text)
        module.add_arguments(p)
        p.set_defaults(func=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``flyswat`` console script."""
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
