"""The rules as players read them: Markdown files shipped with each game, one per language.

A game's texts live in ``texts/<lang>.md`` of the package its plugin names. A text may hold
optional blocks, ``<!-- option:value -->`` … ``<!-- /option -->``, kept only when the variant's
option has that value (as :meth:`agon.core.options.Option.text` writes it:
``<!-- rules:traditional -->``, ``<!-- edge_capture:false -->``). Text outside every block is
common to all variants. Blocks may nest when their options differ.

The few words the lobby and the game page show of a game live in ``texts/words.toml``, one
table per language (``[en]``, ``[es]``, …), each with a ``summary`` (one line on what the game is
like) and a ``click_help`` (how a move is made by clicking the board).
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources

from agon.core.errors import AgonError, quoted
from agon.core.game import Game

LANGUAGE_NAMES = {"en": "English", "es": "Español", "nl": "Nederlands", "lt": "Lietuvių"}
"""Every language a game's rules may be written in, by its code."""

_BLOCK = re.compile(
    r"^[ \t]*<!--\s*([\w-]+):([\w-]+)\s*-->[ \t]*\n(.*?)^[ \t]*<!--\s*/\1\s*-->[ \t]*\n?",
    re.DOTALL | re.MULTILINE,
)
_EXTRA_BLANK_LINES = re.compile(r"\n{3,}")


def rules_text(game: Game, package: str, languages: tuple[str, ...], lang: str = "en") -> str:
    """The rules of ``game`` in Markdown, in language ``lang`` (one of ``languages``, those
    the game's texts in ``package`` are written in), for this variant only."""
    language = lang.strip().lower()
    if language not in languages:
        raise AgonError(
            f"no rules text in language {quoted(lang)}: choose one of {', '.join(languages)}"
        )
    source = (resources.files(package) / "texts" / f"{language}.md").read_text(encoding="utf-8")
    options = game.options()
    values = {
        spec.name: spec.text(options[spec.name])
        for spec in game.option_specs if spec.name in options
    }
    selected = _select_blocks(source, values)
    return _EXTRA_BLANK_LINES.sub("\n\n", selected).strip() + "\n"


@dataclass(frozen=True)
class Words:
    """What the lobby and the game page say of a game, in one language."""

    summary: str
    """One line on what the game is like."""
    click_help: str
    """How a move is made by clicking the board."""


def game_words(package: str, languages: tuple[str, ...]) -> dict[str, Words]:
    """The words of the game whose texts are in ``package``, in each of its ``languages``;
    :class:`AgonError` naming the file and what is missing or wrong."""
    return dict(_read_words(package, languages))


WORDS = ("summary", "click_help")
"""The fields of each language's table in ``words.toml``."""


@functools.cache
def _read_words(package: str, languages: tuple[str, ...]) -> tuple[tuple[str, Words], ...]:
    where = f"{package}: texts/words.toml"
    try:
        source = (resources.files(package) / "texts" / "words.toml").read_text(encoding="utf-8")
        tables = tomllib.loads(source)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise AgonError(f"{where} does not read: {error}") from None
    found = []
    for language in languages:
        table = tables.get(language)
        fields = {
            name: text for name in WORDS
            if isinstance(table, dict) and isinstance(text := table.get(name), str) and text
        }
        missing = [name for name in WORDS if name not in fields]
        if missing:
            raise AgonError(f"{where} has no {' or '.join(missing)} in [{language}]")
        found.append((language, Words(**fields)))
    return tuple(found)


def _select_blocks(text: str, values: Mapping[str, str]) -> str:
    def keep_or_drop(block: re.Match[str]) -> str:
        key, value, body = block.groups()
        return _select_blocks(body, values) if values.get(key) == value else ""

    return _BLOCK.sub(keep_or_drop, text)
