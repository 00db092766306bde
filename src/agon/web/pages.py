"""The HTML pages: a shared layout filled from small templates, and the rules in four languages.

Pages carry no game logic: the lobby and game pages are plain ES modules that talk to the API.
The rules are Markdown from ``agon.games.texts``, rendered here to HTML with raw HTML disabled.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from functools import cache
from importlib import resources
from string import Template

from markdown_it import MarkdownIt

from agon.core.game import Game
from agon.core.texts import LANGUAGE_NAMES
from agon.games import make_game, plugin, plugin_of, plugins, rules_text

LANG_COOKIE = "agon_lang"
_CURRENT_PAGE = ' aria-current="page"'
_CURRENT = ' aria-current="true"'

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
    links = [("/", "Play", "play"), ("/analysis", "Analysis", "analysis"),
             ("/puzzles", "Puzzles", "puzzles")] + [
        (f"/rules/{name}", f"{found.title} rules", name) for name, found in plugins().items()
    ]
    nav_html = "".join(
        f'<a href="{href}"{_CURRENT_PAGE if key == nav else ""}>{html.escape(label)}</a>'
        for href, label, key in links
    )
    credits = " · ".join(html.escape(found.credit) for found in plugins().values())
    return _template("base.html").substitute(
        title=html.escape(title), body=body, script=script_tag, nav=nav_html, credits=credits
    )


def lobby_page() -> str:
    titles = " and ".join(found.title for found in plugins().values())
    return layout(f"Agon — play {titles}", _template("lobby.html").substitute(),
                  script="lobby.js", nav="play")


def game_page(game_id: str, title: str) -> str:
    body = _template("game.html").substitute(game_id=html.escape(game_id))
    return layout(f"{title} — Agon", body, script="game.js")


def analysis_page(game_id: str | None, title: str) -> str:
    """The analysis board: of the arena's game ``game_id`` (its review), else of a record
    imported or a position set up on the page."""
    body = _template("analysis.html").substitute(game_id=html.escape(game_id or ""))
    return layout(f"{title} — Agon", body, script="analysis.js", nav="analysis")


def puzzles_page(game_name: str) -> str:
    """The puzzles of a game, one after the other (the page asks the API for them)."""
    found = plugin(game_name)
    tabs = "".join(
        f'<a href="/puzzles/{name}"{_CURRENT if name == game_name else ""}>'
        f"{html.escape(other.title)}</a>"
        for name, other in plugins().items()
    )
    body = _template("puzzles.html").substitute(
        game=html.escape(game_name), title=html.escape(found.title), tabs=tabs
    )
    return layout(f"{found.title} puzzles — Agon", body, script="puzzles.js", nav="puzzles")


def error_page(title: str, message: str) -> str:
    body = _template("error.html").substitute(
        title=html.escape(title), message=html.escape(message)
    )
    return layout(f"{title} — Agon", body)


def pick_language(asked: str | None, remembered: str | None, game: Game) -> str:
    """The language asked for in the URL, else the remembered one, else English: the first
    of them the game's rules are written in."""
    languages = plugin_of(game).languages
    for choice in (asked, remembered):
        if choice and choice.lower() in languages:
            return choice.lower()
    return "en" if "en" in languages else languages[0]


def rules_html(game: Game, lang: str) -> str:
    """The rules of this variant as HTML (Markdown rendered with raw HTML disabled)."""
    return str(_markdown.render(rules_text(game, lang)))


def rules_variant(game_name: str, query: Mapping[str, str]) -> Game:
    """The variant whose rules a page shows: its game's options as the query gives them
    (others keep their defaults)."""
    found = plugin(game_name)
    specs = {option.name: option for option in found.game.option_specs if not option.shortcut}
    return make_game(
        found.name,
        {name: specs[name].parse(text) for name, text in query.items() if name in specs},
    )


def variant_query(game: Game, **changed: str) -> dict[str, str]:
    """The query parameters that name this variant's options where they are not the default
    (with ``changed`` ones set), for its rules page."""
    values = {}
    options = game.options()
    for option in game.option_specs:
        if option.shortcut or option.name not in options:
            continue
        text = changed.get(option.name, option.text(options[option.name]))
        if text != option.text(option.default) or option.name in changed:
            values[option.name] = text
    return values


def _variant_query(game: Game, **changed: str) -> str:
    """:func:`variant_query` to follow ``?lang=…`` in a link, escaped for an attribute."""
    return "".join(
        f"&amp;{name}={html.escape(text)}" for name, text in variant_query(game, **changed).items()
    )


def _variant_tabs(game: Game, lang: str) -> str:
    """A switch between the values of each choice the game offers (its rule sets, say)."""
    options = game.options()
    switches = []
    for option in game.option_specs:
        if option.kind != "choice" or option.shortcut:
            continue
        links = []
        for choice in option.choices:
            current = _CURRENT if option.text(options[option.name]) == choice.value else ""
            query = _variant_query(game, **{option.name: choice.value})
            links.append(
                f'<a href="?lang={lang}{query}"{current}>{html.escape(choice.label)}</a>'
            )
        switches.append(
            f'<nav class="variant-switch" aria-label="{html.escape(option.title)}">'
            f'{"".join(links)}</nav>'
        )
    return "".join(switches)


def rules_page(game: Game, lang: str) -> str:
    query = _variant_query(game)
    switch = "".join(
        f'<a class="lang" href="?lang={code}{query}" data-lang="{code}" hreflang="{code}" '
        f'lang="{code}"{_CURRENT if code == lang else ""}>{html.escape(LANGUAGE_NAMES[code])}</a>'
        for code in plugin_of(game).languages
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
