"""The exception types of flyswat, all in one place.

::

    FlyswatError (Exception)
    ├── MalformedError (ValueError)        input that can never be valid: "R9-1", seats=12,
    │                                      a record that is not a record
    └── IllegalActionError (FlyswatError)  well-formed, but not allowed now: a slap with no
                                           round open, a third hand, a card not in the centre

Each carries a short machine-readable ``code`` that the server passes on in its
``{"type": "error", "code": ..., "message": ...}`` message. A failed action changes nothing.
"""

from __future__ import annotations


class FlyswatError(Exception):
    """Base class of every error flyswat raises on purpose."""

    code = "error"

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code

    @property
    def message(self) -> str:
        """The human-readable explanation."""
        return str(self.args[0]) if self.args else ""


class MalformedError(FlyswatError, ValueError):
    """Input that is malformed whatever the state of the game."""

    code = "malformed"


class IllegalActionError(FlyswatError):
    """A well-formed action that the rules do not allow at this moment."""

    code = "illegal"
