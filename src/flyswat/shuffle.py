"""The seeded shuffle (R5), a documented algorithm anyone can re-implement.

1. The seed's text is ``str(seed)`` for an integer and the string itself for a string,
   encoded as UTF-8.
2. A stream of 32-bit numbers is read from SHA-256 in counter mode: block ``k`` (k = 0, 1, …)
   is ``SHA-256(seed_text + b":" + ascii(k))``, read as eight big-endian unsigned 32-bit
   numbers in order.
3. Start from the canonical deck order (:data:`flyswat.cards.DECK`: flies by colour
   R Y G B P O, then value, then copy; then swatters S-1 … S-16). Fisher–Yates: for
   ``i`` from 111 down to 1, draw ``j`` uniform in ``0..i`` by rejection sampling (take the next
   number ``x``; reject it when ``x >= 2**32 - (2**32 % (i + 1))``; else ``j = x % (i + 1)``)
   and swap positions ``i`` and ``j``.
4. The result is the shuffled deck, top card first.

The server publishes ``SHA-256(seed_text)`` before a game and the seed after it
(:func:`commitment`), so players can check that the deal was fixed in advance.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterator

from flyswat.cards import DECK, Card
from flyswat.errors import MalformedError

Seed = int | str

_U32 = 2**32


def seed_text(seed: object) -> bytes:
    """The seed's canonical bytes (step 1)."""
    if isinstance(seed, bool) or not isinstance(seed, int | str):
        raise MalformedError(f"a seed is a string or an integer, not {seed!r}", "bad_seed")
    try:
        return str(seed).encode("utf-8")
    except ValueError:
        # An integer too long to write in decimal, or a string holding a lone surrogate
        # (which JSON can carry): neither has a canonical text.
        raise MalformedError(
            "a seed must have a UTF-8 decimal or string form", "bad_seed"
        ) from None


def commitment(seed: object) -> str:
    """SHA-256 of the seed's text, hex: published before the game, checked after it."""
    return hashlib.sha256(seed_text(seed)).hexdigest()


def _numbers(seed: object) -> Iterator[int]:
    base = seed_text(seed) + b":"
    k = 0
    while True:
        block = hashlib.sha256(base + str(k).encode("ascii")).digest()
        yield from struct.unpack(">8I", block)
        k += 1


def shuffled(seed: object) -> list[Card]:
    """The whole deck shuffled by ``seed``, top card first (steps 2–4)."""
    deck = list(DECK)
    numbers = _numbers(seed)
    for i in range(len(deck) - 1, 0, -1):
        n = i + 1
        limit = _U32 - (_U32 % n)
        x = next(numbers)
        while x >= limit:
            x = next(numbers)
        j = x % n
        deck[i], deck[j] = deck[j], deck[i]
    return deck
