"""The HTML pages: a shared layout filled from small templates, and the rules in four languages.

Pages carry no game logic: the lobby and game pages are plain ES modules that talk to the API.
The rules are Markdown from ``agon.games.texts``, rendered here to HTML with raw HTML disabled.
"""

from __future__ import annotations

import html
from functools import cache
from importlib import resources
from string import Template
from typing import Any

from markdown_it import MarkdownIt

from agon.core.errors import AgonError, quoted
from agon.core.game import Game
from agon.games import GAMES, Alak, make_game
from agon.games.alak import AlakRules
from agon.games.texts import LANGUAGES, rules_text

LANGUAGE_NAMES = {"en": "English", "es": "Español", "nl": "Nederlands", "lt": "Lietuvių"}
LANG_COOKIE = "agon_lang"
_CURRENT_PAGE = ' aria-current="page"'
_CURRENT = ' aria-current="true"'
RULE_SET_NAMES = {"baljeu": "Baljeu", "traditional": "Traditional", "tromp-taylor": "Tromp–Taylor"}

_markdown = MarkdownIt("commonmark", {"html": False, "typographer": True}).enable(
    ["table", "strikethrough", "replacements", "smartquotes"]
)


@cache
def _template(name: str) -> Template:
    text = (resources.files("agon.web") / "templates" / name).read_text(encoding="utf-8")
    return Template(text)


def layout(title: str, body: str, *, script: str | None = None, nav: str = "") -> str:
    """A whole page; ``body`` is trusted HTML, every other value is escaped here."""
    script_tag = (
        f'<script type="module" src="/static/{html.escape(script)}"></script>' if script else ""
    )
    links = [("/", "Play", "play")] + [
        (f"/rules/{name}", f"{game.title} rules", name) for name, game in GAMES.items()
    ]
    nav_html = "".join(
        f'<a href="{href}"{_CURRENT_PAGE if key == nav else ""}>{html.escape(label)}</a>'
        for href, label, key in links
    )
    return _template("base.html").substitute(
        title=html.escape(title), body=body, script=script_tag, nav=nav_html
    )


def lobby_page() -> str:
    return layout("Agon — play Alternator and Alak", _template("lobby.html").substitute(),
                  script="lobby.js", nav="play")


def game_page(game_id: str, title: str) -> str:
    body = _template("game.html").substitute(game_id=html.escape(game_id))
    return layout(f"{title} — Agon", body, script="game.js")


def error_page(title: str, message: str) -> str:
    body = _template("error.html").substitute(
        title=html.escape(title), message=html.escape(message)
    )
    return layout(f"{title} — Agon", body)


def pick_language(asked: str | None, remembered: str | None) -> str:
    """The language asked for in the URL, else the remembered one, else English."""
    for choice in (asked, remembered):
        if choice and choice.lower() in LANGUAGES:
            return choice.lower()
    return "en"


def rules_html(game: Game, lang: str) -> str:
    """The rules of this variant as HTML (Markdown rendered with raw HTML disabled)."""
    return str(_markdown.render(rules_text(game, lang)))


def rules_variant(game_name: str, rules: str | None, edge: str | None) -> Game:
    """The variant whose rules a page shows: Alak has three rule sets and an edge option."""
    if game_name not in GAMES:
        raise AgonError(f"there are rules for {' and '.join(GAMES)}, not for {quoted(game_name)}")
    if game_name != "alak":
        return make_game(game_name)
    options: dict[str, Any] = {"rules": rules or "baljeu"}
    if edge is not None:
        options["edge_capture"] = edge != "off"
    return make_game("alak", options)


def _variant_tabs(game: Game, lang: str) -> str:
    if not isinstance(game, Alak):
        return ""
    links = []
    for rules in AlakRules:
        current = _CURRENT if rules is game.rules else ""
        label = RULE_SET_NAMES[rules.value]
        links.append(f'<a href="?lang={lang}&amp;rules={rules.value}"{current}>{label}</a>')
    return f'<nav class="variant-switch" aria-label="Rule set">{"".join(links)}</nav>'


def rules_page(game: Game, lang: str) -> str:
    query = ""
    if isinstance(game, Alak):
        query = f"&amp;rules={game.rules.value}" + ("" if game.edge_capture else "&amp;edge=off")
    switch = "".join(
        f'<a class="lang" href="?lang={code}{query}" data-lang="{code}" hreflang="{code}" '
        f'lang="{code}"{_CURRENT if code == lang else ""}>{html.escape(LANGUAGE_NAMES[code])}</a>'
        for code in LANGUAGES
    )
    body = _template("rules.html").substitute(
        title=html.escape(game.title),
        game=html.escape(game.name),
        lang=html.escape(lang),
        switch=switch,
        variants=_variant_tabs(game, lang),
        content=rules_html(game, lang),
    )
    return layout(f"{game.title} rules — Agon", body, script="rules.js", nav=game.name)
