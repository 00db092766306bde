"""The rules as players read them: Markdown files shipped with each game, one per language.

A text may hold optional blocks, ``<!-- key:value -->`` … ``<!-- /key -->``, kept only when the
variant has that value (Alak: ``rules`` is the rule set, ``edge`` is ``on`` or ``off``). Text
outside every block is common to all variants. Blocks may nest when their keys differ.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from importlib import resources

from agon.core.errors import AgonError, quoted
from agon.core.game import Game
from agon.games.alak import Alak

LANGUAGES = ("en", "es", "nl", "lt")

_BLOCK = re.compile(
    r"^[ \t]*<!--\s*([\w-]+):([\w-]+)\s*-->[ \t]*\n(.*?)^[ \t]*<!--\s*/\1\s*-->[ \t]*\n?",
    re.DOTALL | re.MULTILINE,
)
_EXTRA_BLANK_LINES = re.compile(r"\n{3,}")


def rules_text(game: Game, lang: str = "en") -> str:
    """The rules of ``game`` in Markdown, in language ``lang``, for this variant only."""
    language = lang.strip().lower()
    if language not in LANGUAGES:
        raise AgonError(
            f"no rules text in language {quoted(lang)}: choose one of {', '.join(LANGUAGES)}"
        )
    package = type(game).__module__.rpartition(".")[0]  # e.g. agon.games.alak
    source = (resources.files(package) / "texts" / f"{language}.md").read_text(encoding="utf-8")
    selected = _select_blocks(source, _variant_values(game))
    return _EXTRA_BLANK_LINES.sub("\n\n", selected).strip() + "\n"


def _variant_values(game: Game) -> dict[str, str]:
    """The block values this variant keeps."""
    if isinstance(game, Alak):
        return {"rules": game.rules.value, "edge": "on" if game.edge_capture else "off"}
    return {}


def _select_blocks(text: str, values: Mapping[str, str]) -> str:
    def keep_or_drop(block: re.Match[str]) -> str:
        key, value, body = block.groups()
        return _select_blocks(body, values) if values.get(key) == value else ""

    return _BLOCK.sub(keep_or_drop, text)
