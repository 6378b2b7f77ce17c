"""The client's strings files: every language says everything, with the same placeholders,
and every string the code asks for exists (no user-facing text is hard-coded in the code)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

WEB = Path(__file__).resolve().parents[2] / "src" / "flyswat" / "web"
LANGUAGES = ["en", "pt", "es", "vi", "de"]
PLACEHOLDER = re.compile(r"\{(\w+)\}")


def strings(lang: str) -> dict[str, str]:
    data: dict[str, str] = json.loads((WEB / "i18n" / f"{lang}.json").read_text("utf-8"))
    return data


def test_the_client_offers_exactly_the_languages_it_has_files_for() -> None:
    files = sorted(p.stem for p in (WEB / "i18n").glob("*.json"))
    assert files == sorted(LANGUAGES)
    code = (WEB / "js" / "i18n.js").read_text("utf-8")
    assert f"export const LANGUAGES = {json.dumps(LANGUAGES)};".replace('","', '", "') in code
    html = (WEB / "index.html").read_text("utf-8")
    assert re.findall(r'<option value="(\w+)">', html) == LANGUAGES


@pytest.mark.parametrize("lang", LANGUAGES[1:])
def test_every_language_has_every_string_with_the_same_placeholders(lang: str) -> None:
    en, other = strings("en"), strings(lang)
    assert set(other) == set(en)
    for key, text in en.items():
        assert set(PLACEHOLDER.findall(other[key])) == set(PLACEHOLDER.findall(text)), key
        assert other[key].strip(), key


def _keys_used_in_code() -> set[str]:
    used: set[str] = set()
    for path in [*(WEB / "js").glob("*.js"), WEB / "index.html"]:
        text = path.read_text("utf-8")
        used |= set(re.findall(r'\bt\("([\w.]+)"', text))
        used |= set(re.findall(r'data-i18n(?:-\w+)?="([\w.]+)"', text))
    return used


def test_every_string_the_code_asks_for_exists() -> None:
    en = strings("en")
    missing = sorted(k for k in _keys_used_in_code() if k not in en)
    assert not missing


def test_every_error_code_of_the_protocol_has_words_for_players() -> None:
    from flyswat.errors import wire_codes

    en = strings("en")
    assert sorted(c for c in wire_codes() if f"error.{c}" not in en) == []


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_wire_error_code_has_words_in_every_language(lang: str) -> None:
    """Issue 14 (4): each code a client can receive (flyswat.errors.wire_codes()) is said in
    the player's words, in every language — never "Something went wrong (code)"."""
    from flyswat.errors import wire_codes

    words = strings(lang)
    missing = [c for c in wire_codes() if not words.get(f"error.{c}", "").strip()]
    assert missing == []


# The printed rulebook's own words (shared/seeds/) against words it does not use.
RULEBOOK_WORDS = {
    "pt": (
        ["acertar nas moscas", "mata-moscas", "monte"],
        ["bater", "batida", "PAF", "Baralhar justo"],
    ),
    "es": (["aplast", "matamoscas", "pila", "muestra"], ["golpe", "mazo", "destap"]),
    "vi": (["vợt đập ruồi", "xấp bài"], ["vỉ đập ruồi", "chồng bài", "hạt giống", '"Space"']),
    "de": (["Fliegenklatsche"], ["Zusage"]),
}


@pytest.mark.parametrize("lang", sorted(RULEBOOK_WORDS))
def test_each_language_speaks_the_rulebooks_words(lang: str) -> None:
    text = (WEB / "i18n" / f"{lang}.json").read_text("utf-8")
    used, avoided = RULEBOOK_WORDS[lang]
    assert [w for w in used if w not in text] == []
    assert [w for w in avoided if w in text] == []


def test_the_intros_speak_to_one_player_throughout() -> None:
    """One "you" from start to end: no plural imperative (vosotros, ihr) beside tú and du."""
    assert not re.search(r"\bDad\b|\bhaced\b", strings("es")["home.intro"])
    assert not re.search(r"\bDeckt\b|\bhaut\b|\beuch\b", strings("de")["home.intro"])
    assert "por ti" not in strings("pt")["table.autoReveal"]


def test_portuguese_speaks_to_the_player_as_tu_in_european_portuguese_throughout() -> None:
    """The game says "tu" in Portugal's Portuguese ("Vira", "ganhaste", "ficheiro"); the pages
    added later had Brazil's "você" beside it ("Você" in the header, "Comece já", "arquivo de
    registro", the turns of one who leaves "played by you")."""
    pt = strings("pt")
    brazil = re.compile(r"\b(você|vocês|arquivo|registro|esperando|aperte|Comece|Crie|Use)\b", re.I)
    assert sorted(k for k, v in pt.items() if brazil.search(v)) == []
    assert "por você" not in pt["table.leaveConfirm"]
