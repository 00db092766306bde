"""The rules texts players read: every game and language loads, and each variant gets its part."""

import json
import re
import sys
from importlib import resources
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agon.cli import app
from agon.core.errors import AgonError
from agon.core.game import Game
from agon.core.texts import LANGUAGE_NAMES, game_words
from agon.games import make_game, rules_text, words
from agon.games.alak import Alak, AlakRules
from agon.games.alternator import Alternator
from agon.games.alternator.render import render_text

LANGUAGES = tuple(LANGUAGE_NAMES)

ALAK_VARIANTS = [Alak(rules=rules) for rules in AlakRules] + [Alak(edge_capture=False)]
GAMES: list[Game] = [Alternator(), *ALAK_VARIANTS]


def raw_text(package: str, lang: str) -> str:
    return (resources.files(package) / "texts" / f"{lang}.md").read_text(encoding="utf-8")


def block_headings(raw: str, key: str) -> dict[str, str]:
    """The first line of every ``<!-- key:value -->`` block of the raw file, by value."""
    blocks = re.findall(rf"<!-- {key}:([\w-]+) -->\n(.*?)\n", raw)
    return dict(blocks)


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("game", GAMES, ids=lambda game: game.variant_id)
def test_every_game_and_language_loads(game: Game, lang: str) -> None:
    text = rules_text(game, lang)
    assert text.startswith(f"# {game.title}\n")
    assert len(text) > 1000
    assert "<!--" not in text and "\n\n\n" not in text


@pytest.mark.parametrize("lang", LANGUAGES)
def test_each_alak_rule_set_gets_only_its_own_section(lang: str) -> None:
    headings = block_headings(raw_text("agon.games.alak", lang), "rules")
    assert set(headings) == {rules.value for rules in AlakRules}
    for rules in AlakRules:
        text = rules_text(Alak(rules=rules), lang)
        for other, heading in headings.items():
            assert heading.startswith("## ")
            assert (heading in text) == (other == rules.value), (rules, other)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_baljeu_text_says_whether_edge_capture_is_on(lang: str) -> None:
    lines = block_headings(raw_text("agon.games.alak", lang), "edge_capture")
    assert set(lines) == {"true", "false"}
    with_edge = rules_text(Alak(edge_capture=True), lang)
    without_edge = rules_text(Alak(edge_capture=False), lang)
    assert lines["true"] in with_edge and lines["false"] not in with_edge
    assert lines["false"] in without_edge and lines["true"] not in without_edge
    for rules in (AlakRules.TRADITIONAL, AlakRules.TROMP_TAYLOR):
        text = rules_text(Alak(rules=rules), lang)
        assert lines["true"] not in text and lines["false"] not in text


@pytest.mark.parametrize("lang", LANGUAGES)
def test_alternator_text_gives_default_komi_and_notation(lang: str) -> None:
    text = rules_text(Alternator(), lang)
    assert "3.5" in text
    assert "`d4-d5`" in text


@pytest.mark.parametrize("lang", LANGUAGES)
def test_alternator_example_replays_as_the_text_says(lang: str) -> None:
    text = rules_text(Alternator(), lang)
    moves = re.findall(r"^\d+\. \*\*([a-h][1-8]-[a-h][1-8])\*\*", text, re.MULTILINE)
    assert moves == ["e4-e3", "d4-d5", "d5-d6", "d6-e6", "e6-e7", "f8-f7"]
    state = Alternator().new_state()
    for move in moves[:4]:
        state.play_text(move)
    for refused in ("e7-e6", "e5-e6"):  # the text: a blank cell may not join the tree of 4
        assert not state.is_legal(state.game.parse_move(refused))
    for move in moves[4:]:
        state.play_text(move)
    assert (state.score().black, state.score().white) == (34, 33.5)
    assert "34" in text and "33.5" in text
    assert not state.is_legal(state.game.parse_move("f7-e7"))
    assert state.is_legal(state.game.parse_move("e7-f7"))
    # the diagram after move 6 is the terminal's drawing, blank cells as `·` (not `1`)
    diagram = re.search(r"```text\n(.*?)\n```", text, re.DOTALL)
    assert diagram is not None
    assert diagram[1] == "\n".join(render_text(state).splitlines()[:10])


@pytest.mark.parametrize("lang", LANGUAGES)
def test_alak_board_section_says_how_a_pass_is_written(lang: str) -> None:
    board = rules_text(Alak(), lang).split("\n## ")[1]
    assert "`pass`" in board and "`p`" in board and "16" in board


def test_traditional_six_points_values_are_those_the_text_gives() -> None:
    """The text sets Sensei's Library's claim (2 wins for Black, 3 for White) beside the
    solver's values: 2, 3, 4, 5 and a pass are worth 0, either end loses by 7."""
    done = CliRunner().invoke(
        app, ["solve", "alak", "--size", "6", "--rules", "traditional", "--openings", "--json"]
    )
    assert done.exit_code == 0, done.output
    values = json.loads(done.output)["moves"]
    assert values == {"1": -7, "2": 0, "3": 0, "4": 0, "5": 0, "6": -7, "pass": 0}
    for lang in LANGUAGES:
        claim = rules_text(Alak(rules=AlakRules.TRADITIONAL), lang).split("Sensei's Library")[-1]
        assert " 0" in claim and " 7" in claim


def test_tromp_taylor_empty_board_scores_nothing_as_the_text_says() -> None:
    state = Alak(rules=AlakRules.TROMP_TAYLOR, size=5).new_state()
    state.play_text("pass")
    state.play_text("pass")
    assert state.is_over and (state.score().black, state.score().white) == (0, 0)
    for lang in LANGUAGES:
        assert " 0 " in rules_text(Alak(rules=AlakRules.TROMP_TAYLOR), lang).split("5. **")[-1]


def test_language_is_read_leniently() -> None:
    assert rules_text(make_game("alak"), " NL ") == rules_text(make_game("alak"), "nl")


def test_unknown_language_is_refused_naming_the_choices() -> None:
    with pytest.raises(AgonError, match="en, es, nl, lt"):
        rules_text(Alternator(), "fr")


def test_the_lobby_words_come_in_every_language_of_the_rules() -> None:
    said = words("alak")
    assert set(said) == set(LANGUAGES)
    assert said["es"].summary != said["en"].summary
    assert "piedra" in said["es"].click_help


@pytest.mark.parametrize(
    ("toml", "complaint"),
    [
        (None, "does not read"),
        ("[en\nsummary = 1", "does not read"),
        ('[en]\nsummary = "A game."\n', "no click_help in [en]"),
        ('[en]\nsummary = "A game."\nclick_help = "Click."\n', "no summary or click_help in [es]"),
        ('[en]\nsummary = ""\nclick_help = "Click."\n[es]\nsummary = "x"\nclick_help = "y"\n',
         "no summary in [en]"),
    ],
)
def test_missing_or_broken_words_are_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, toml: str | None, complaint: str
) -> None:
    package = tmp_path / "wordy_game"
    (package / "texts").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    if toml is not None:
        (package / "texts" / "words.toml").write_text(toml, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "wordy_game", raising=False)  # each case its own package
    with pytest.raises(AgonError, match=re.escape(complaint)) as refused:
        game_words("wordy_game", ("en", "es"))
    assert "wordy_game: texts/words.toml" in str(refused.value)
