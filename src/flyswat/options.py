"""Settings declared once as dataclass fields, read from flags or from the environment.

A field made with :func:`option` names its flag and its help; its environment variable is
``FLYSWAT_`` and the flag's name in capitals. :func:`add_options` turns a dataclass of such
fields into ``argparse`` options whose defaults come from the environment when it sets them
(a flag wins over its variable, which wins over the default), and :func:`values` and
:func:`build` turn the parsed options back into the dataclass. Used by
:class:`flyswat.server.settings.Settings` and :class:`flyswat.server.limits.Limits`.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import Field, field, fields
from typing import Any

#: The prefix of every setting's environment variable.
ENV_PREFIX = "FLYSWAT_"


def option(default: Any, flag: str, help: str, **extra: Any) -> Any:
    """A settings field: its ``default``, its ``flag`` (``--name``) and ``help``; its variable
    is ``FLYSWAT_`` and the flag's name in capitals (``--node-id``: ``FLYSWAT_NODE_ID``).
    ``extra``: ``choices``, ``metavar``."""
    return field(default=default, metadata={"flag": flag, "help": help, **extra})


def env_name(f: Field[Any]) -> str:
    """The environment variable of settings field ``f``."""
    return ENV_PREFIX + str(f.metadata["flag"]).lstrip("-").upper().replace("-", "_")


def _kind(f: Field[Any]) -> type:
    default = f.default
    return str if default is None or isinstance(default, (str, frozenset)) else type(default)


def _parse(f: Field[Any], text: str) -> Any:
    """The value of field ``f`` given as ``text`` (a variable's or a flag's)."""
    if isinstance(f.default, frozenset):
        return frozenset(a.strip() for a in text.split(",") if a.strip())
    kind = _kind(f)
    try:
        return kind(text)
    except ValueError:
        raise SystemExit(
            f"flyswat serve: {env_name(f)}={text!r} is not {'an' if kind is int else 'a'} "
            f"{kind.__name__}"
        ) from None


def add_options(
    group: argparse.ArgumentParser | argparse._ArgumentGroup,
    cls: type,
    environ: Mapping[str, str] | None = None,
) -> None:
    """One option per field of the dataclass ``cls``, its default read from ``environ``
    (the process's environment by default) when its variable is set."""
    environ = os.environ if environ is None else environ
    for f in fields(cls):
        if "flag" not in f.metadata:
            continue
        flag, text, env = f.metadata["flag"], f.metadata["help"], env_name(f)
        given = environ.get(env)
        default = f.default if given is None or given == "" else _parse(f, given)
        shown = "" if f.default in (None, "", frozenset()) else f"; default {f.default}"
        help_text = f"{text} (${env}{shown})"
        if isinstance(f.default, frozenset):  # repeatable: the flags replace the variable
            group.add_argument(flag, dest=f.name, action="append", default=None, help=help_text,
                               metavar=f.metadata.get("metavar", "ADDRESS"))  # fmt: skip
            group.set_defaults(**{_UNSET + f.name: default})
            continue
        metavar = f.metadata.get("metavar")
        if metavar is None and "choices" not in f.metadata:
            kind = _kind(f)
            metavar = "S" if f.name.endswith("_s") else {int: "N", float: "R"}.get(kind, "TEXT")
        group.add_argument(flag, dest=f.name, type=_kind(f), default=default, help=help_text,
                           metavar=metavar, choices=f.metadata.get("choices"))  # fmt: skip


#: Where a repeatable option keeps the value its variable gave (used when no flag is given).
_UNSET = "_from_env_"


def values(cls: type, args: argparse.Namespace) -> dict[str, Any]:
    """The fields of the dataclass ``cls`` that :func:`add_options` parsed into ``args``."""
    found = {}
    for f in fields(cls):
        if "flag" not in f.metadata:
            continue
        value = getattr(args, f.name)
        if isinstance(f.default, frozenset):
            if value is None:
                value = getattr(args, _UNSET + f.name, f.default)
            else:  # each flag may name several, comma-separated
                value = frozenset(a.strip() for v in value for a in v.split(",") if a.strip())
        found[f.name] = value
    return found


def build(cls: type, **given: Any) -> Any:
    """``cls(**given)``; a value out of range ends the command with its message."""
    try:
        return cls(**given)
    except ValueError as e:
        raise SystemExit(f"flyswat serve: {e}") from None
