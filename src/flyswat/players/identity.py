"""A player's identity without sign-up: an id, a secret the browser keeps, one name.

The server stores a secret only as its SHA-256 (as it stores seat tokens), and compares in
constant time. A name is chosen once and is unique per server by its *key* (case, width and
spacing folded, :func:`name_key`): a name already taken is shown with a short tag ("Ana #K7Q",
:func:`tagged`), and no typed name may hold the tag's sign or one like it; names that read
as a bot's or a free seat's ("Bot 2", "bot", "Seat 3", in any of the client's languages) are
refused, so nobody can pose as one.
A one-time *claim code* moves an identity to another device.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import unicodedata
from collections.abc import Callable

from flyswat.errors import MalformedError

#: The longest name (the protocol's).
MAX_NAME = 32
#: Player ids and secrets are URL-safe base64 of this many random bytes' worth of text.
ID_CHARS = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
#: A claim code: letters and digits that do not look alike, in groups for reading aloud.
CLAIM_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CLAIM_LENGTH = 8
#: How long a claim code may be used (s).
CLAIM_TTL_S = 600

#: Words that name a bot or a free seat in the client's languages (web/i18n), compared by
#: :func:`name_key`: a name that is one of them alone or with a number ("Bot 2", "Máy 3",
#: "Seat #4") is not a person's, nor is any name whose first word is "bot".
_RESERVED = ("bot", "robot", "robo", "may", "seat", "lugar", "asiento", "platz", "cho")
_RESERVED_RE = re.compile(
    r"^(?:(?:" + "|".join(_RESERVED) + r")[\s\W_]*\d*[\s\W_]*|bot\b.*|bot\d.*)$"
)


def hash_secret(secret: str) -> str:
    """What the store keeps of a secret (or a claim code): its SHA-256, hex."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def secret_matches(stored_hash: str | None, secret: str) -> bool:
    """Does ``secret`` hash to ``stored_hash``? Constant time; False when nothing is stored."""
    return stored_hash is not None and hmac.compare_digest(stored_hash, hash_secret(secret))


def display_name(name: str) -> str:
    """A name as shown: its spaces collapsed, blank-looking characters taken as spaces;
    raises :class:`MalformedError` ``bad_name`` when it is empty (or only characters drawn
    as nothing), too long or not printable."""
    cleaned = " ".join(unicodedata.normalize("NFC", name).translate(_BLANK_AS_SPACE).split())
    if not 1 <= len(cleaned) <= MAX_NAME or not cleaned.isprintable() or not name_key(cleaned):
        raise MalformedError(f"a name is 1 to {MAX_NAME} printable characters", "bad_name")
    return cleaned


def clean_name(name: str) -> str:
    """A player's display name (:func:`display_name`); raises :class:`MalformedError`
    ``bad_name`` as that does, and when it reads as a bot or a seat, or holds a tag's sign
    (:data:`TAG_SIGNS`)."""
    cleaned = display_name(name)
    key = name_key(cleaned)
    if _RESERVED_RE.match(key):
        raise MalformedError("that name reads as a bot's or a seat's: choose another", "bad_name")
    if any(c in TAG_SIGNS for c in key) or any(c in WORD_TAG_SIGNS for c in cleaned):
        raise MalformedError(
            "a name may not hold '#' or a sign like it: the server's tags (\"Ana #K7Q\") use it",
            "bad_name",
        )
    return cleaned


#: A tag told apart a name already taken: "Ana #K7Q".
TAG_LENGTH = 3
#: The tag's sign and the signs that look like it, as :func:`name_key` leaves them (the
#: full-width and small number signs fold to "#"): no typed name may hold one, so a tag is
#: only ever the server's.
TAG_SIGNS = frozenset("#\u266f\u2317\u22d5\u29e3\u29e4\u29e5")
#: Number signs that fold to letters ("№" is "No"), looked for in the name as typed.
WORD_TAG_SIGNS = frozenset("\u2116")

#: Characters that show as blank space though they are letters or symbols (Hangul fillers,
#: the braille blank): spaces in a name, so a name is never made of them nor padded by them.
_BLANKS = "\u115f\u1160\u3164\uffa0\u2800"
_BLANK_AS_SPACE = str.maketrans(dict.fromkeys(_BLANKS, " "))
#: Unicode's default-ignorable code points (DerivedCoreProperties.txt): drawn as nothing,
#: variation selectors included (an emoji's U+FE0F), so "Zed" and "Zed" + U+FE0F are one name.
_IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
#: Cyrillic and Greek letters drawn as Latin ones (after case folding: "О" and "о" alike),
#: taken as those in a name's key, so that "Bоt 2" with a Cyrillic о is "Bot 2", and "Zеd"
#: is "Zed" (Unicode's confusables, TR39, for the scripts a name mixes most).
_LOOKALIKES = str.maketrans({
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p",
    "с": "c", "т": "t", "у": "y", "х": "x", "і": "i", "ї": "i", "ј": "j", "ѕ": "s", "һ": "h",
    "ԁ": "d", "ԛ": "q", "ԝ": "w", "ӏ": "l", "ɡ": "g",
    "α": "a", "β": "b", "ε": "e", "ζ": "z", "η": "n", "ι": "i", "κ": "k", "μ": "u", "ν": "v",
    "ο": "o", "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "ϲ": "c", "ϳ": "j",
})  # fmt: skip


def tagged(name: str, tag: str) -> str:
    """``name`` with a short ``tag``, shortened to fit: what a second "Ana" is shown as."""
    return f"{name[: MAX_NAME - len(tag) - 2].rstrip()} #{tag}"


def name_key(name: str) -> str:
    """The form two names are compared in: compatibility-folded (full-width letters, ligatures),
    case-folded, spaces collapsed, the marks that make look-alikes stripped ("Ána" is
    "ana"), characters drawn as nothing dropped, blank ones taken as spaces, and Cyrillic
    and Greek look-alikes of Latin letters taken as those ("Zеd" is "zed")."""
    folded = unicodedata.normalize("NFKD", name.translate(_BLANK_AS_SPACE)).casefold()
    bare = "".join(c for c in folded if not unicodedata.combining(c))
    return " ".join(_IGNORABLE.sub("", bare).translate(_LOOKALIKES).split())


def new_id(draw: Callable[[int], str]) -> str:
    """A new player's id from ``draw`` (``secrets.token_urlsafe``), drawn again while it
    begins with ``-``: a command line reads such a word as an option (``flyswat fairplay
    --clear ID`` failed for one id in 64)."""
    while (pid := draw(12)).startswith("-"):
        pass
    return pid


def valid_id(text: str) -> bool:
    """Is ``text`` shaped like a player id or a secret (never looked up otherwise)?"""
    return bool(ID_CHARS.match(text))


def clean_claim(code: str) -> str:
    """A claim code as typed ("abcd-2345", spaces and dashes allowed), in its stored form;
    raises :class:`MalformedError` when it cannot be one."""
    bare = re.sub(r"[\s-]", "", code).upper()
    if len(bare) != CLAIM_LENGTH or any(c not in CLAIM_ALPHABET for c in bare):
        raise MalformedError(f"a claim code is {CLAIM_LENGTH} letters and digits")
    return bare
