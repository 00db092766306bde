"""Boards as text, Rich renderables and SVG (the SVG board contract)."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from agon.core.game import State
from agon.core.render import status_lines
from agon.games import make_game, renderer
from agon.games.alak import render as alak_render
from agon.games.alternator import render as alternator_render


def render_text(state: State, *, ascii: bool = False) -> str:
    return renderer(state.game).render_text(state, ascii=ascii)


def render_rich(state: State) -> object:
    return renderer(state.game).render_rich(state)


def render_svg(
    state: State, *, highlight: list[int] | None = None, last_move: int | None = None
) -> str:
    return renderer(state.game).render_svg(state, highlight=highlight or [], last_move=last_move)

SVG = "{http://www.w3.org/2000/svg}"


def alternator(size: str = "3x3", moves: str = "") -> State:
    state = make_game("alternator", {"size": size}).new_state()
    state.play_all(state.game.parse_moves(moves))
    return state


def alak(size: int = 7, rules: str = "baljeu", moves: str = "", position: str = "") -> State:
    game = make_game("alak", {"size": size, "rules": rules})
    state = game.parse_position(position) if position else game.new_state()
    state.play_all(game.parse_moves(moves))
    return state


def rich_text(state: State) -> str:
    console = Console(record=True, width=120, color_system="truecolor")
    console.print(render_rich(state))
    return console.export_text()


def parse_svg(text: str) -> ET.Element:
    root = ET.fromstring(text)
    assert root.tag == f"{SVG}svg"
    assert root.find(f"{SVG}style") is not None
    return root


def classes(element: ET.Element) -> set[str]:
    return set(element.get("class", "").split())


def groups(root: ET.Element, attribute: str) -> dict[str, ET.Element]:
    return {g.get(attribute, ""): g for g in root.iter(f"{SVG}g") if g.get(attribute)}


# --- Alternator text ---------------------------------------------------------------------------


def test_alternator_text_start_shows_checkerboard_labels_and_score() -> None:
    text = render_text(alternator("3x3"))
    lines = text.splitlines()
    assert lines[0].split() == ["a", "b", "c"]
    assert lines[1] == " 3 [·] · [·] 3"
    assert lines[3] == " 1 [·] · [·] 1"
    assert "Black to move" in text
    assert "Score: Black 5, White 7.5 (komi 3.5)" in text


def test_alternator_text_shows_pits_sizes_and_owners() -> None:
    # a1 (dark) points east to b1 (light); c1 (dark) north to c2 (light): White's tree of
    # size 2; then b1 north to b2 (dark): Black's tree of size 3.
    state = alternator("3x3", "a1-b1 c1-c2 b1-b2")
    text = render_text(state)
    rows = {line.split()[0]: line for line in text.splitlines()[1:4]}
    assert rows["2"] == " 2  · [3] 2  2"
    assert rows["1"] == " 1 [→] ↑ [↑] 1"
    assert "White to move" in text
    assert "Score: Black 5, White 7.5 (komi 3.5)" in text


def test_alternator_ascii_fallback() -> None:
    text = render_text(alternator("3x3", "a1-b1 c2-c1 b1-b2 a3-a2"), ascii=True)
    assert text.isascii()
    assert "[>] ^ [2]" in text
    assert "[v]" in text


def test_alternator_text_widens_cells_for_big_trees() -> None:
    files = "abcdefghijk"
    moves = " ".join(f"{files[i]}1-{files[i + 1]}1" for i in range(10))
    text = render_text(alternator("11x1", moves))
    # two characters per cell once a tree reaches size 10; k1 is dark
    assert " 1 [ →]  → [ →]" in text and "[11] 1" in text


def test_alternator_game_over_shows_result() -> None:
    text = render_text(alternator("2x2", "a1-b1 pass pass"))
    assert "Game over: both players passed. Result: W+5.5" in text


def test_alternator_rich_colours_cells_and_owners() -> None:
    state = alternator("3x3", "a1-b1 c1-c2 b1-b2")
    board = render_rich(state)
    top_rank = board.renderables[1]  # type: ignore[attr-defined]
    styles = {str(span.style) for span in top_rank.spans}
    assert alternator_render.DARK_CELL in styles and alternator_render.LIGHT_CELL in styles
    rank_2 = board.renderables[2]  # type: ignore[attr-defined]
    size_styles = {
        rank_2.plain[span.start : span.end]: str(span.style)
        for span in rank_2.spans
        if rank_2.plain[span.start : span.end].isdigit()
    }
    # b2 (dark) holds Black's tree of 3, c2 (light) White's tree of 2
    assert size_styles == {"3": alternator_render.BLACK_TREE, "2": alternator_render.WHITE_TREE}
    text = rich_text(state)
    assert "→" in text and "↑" in text and "White to move" in text


# --- Alak text ---------------------------------------------------------------------------------


def test_alak_text_numbers_stones_and_captures() -> None:
    # Baljeu's example: o at c (3) captures four stones, 1-2 and 4-5.
    state = alak(7, position="xx.xxo. o", moves="3")
    text = render_text(state)
    lines = text.splitlines()
    assert lines[0].split() == [str(n) for n in range(1, 8)]
    assert lines[1].strip() == "*──*──o──*──*──o──·"
    assert "Just captured: 1, 2, 4, 5" in text
    assert "Prisoners" not in text  # baljeu counts stones on the board only
    assert "Black to move" in text and "Score: Black 0, White 2" in text


def test_alak_text_traditional_shows_prisoners_and_komi() -> None:
    game = make_game("alak", {"size": 5, "rules": "traditional", "komi": 0.5})
    state = game.new_state()
    state.play_all(game.parse_moves("1 2"))
    text = render_text(state, ascii=True)
    assert text.isascii()
    assert "*--o--.--.--." in text
    assert "Prisoners: Black 0, White 1" in text
    assert "(komi 0.5)" in text


def test_alak_rich_uses_discs() -> None:
    text = rich_text(alak(5, moves="1 3"))
    assert "●" in text and "○" in text and "Black to move" in text


# --- SVG ---------------------------------------------------------------------------------------


def test_alternator_svg_contract() -> None:
    state = alternator("3x3", "a1-b1 c1-c2 b1-b2")
    last = state.history[-1]
    root = parse_svg(render_svg(state, highlight=[8], last_move=last))
    assert classes(root) == {"board", "alternator"}
    assert (root.get("data-width"), root.get("data-height")) == ("3", "3")
    cells = groups(root, "data-place")
    assert len(cells) == 9
    assert classes(cells["a1"]) == {"cell", "dark", "pit"}
    assert classes(cells["b1"]) == {"cell", "light", "pit", "last"}
    assert classes(cells["b2"]) == {"cell", "dark", "root", "last"}
    assert classes(cells["c3"]) == {"cell", "dark", "root", "highlight"}
    assert all(cell.find(f"{SVG}rect") is not None for cell in cells.values())
    # the stem of a1 runs from its centre to the centre of b1
    line = cells["a1"].find(f"{SVG}line")
    assert line is not None and "stem" in classes(line)
    pit = cells["a1"].find(f"{SVG}circle")
    assert pit is not None and "pit" in classes(pit)
    b1_rect = cells["b1"].find(f"{SVG}rect")
    assert b1_rect is not None
    centre = (
        float(b1_rect.get("x", 0)) + float(b1_rect.get("width", 0)) / 2,
        float(b1_rect.get("y", 0)) + float(b1_rect.get("height", 0)) / 2,
    )
    assert (float(line.get("x2", 0)), float(line.get("y2", 0))) == centre
    # roots of size >= 2 show their size in the owner's colour; blank cells show nothing
    size = cells["b2"].find(f"{SVG}text")
    assert size is not None and size.text == "3" and classes(size) == {"size", "owner-black"}
    mark = cells["b2"].find(f"{SVG}circle")
    assert mark is not None and classes(mark) == {"root-mark", "owner-black"}
    white_root = cells["c2"].find(f"{SVG}text")
    assert white_root is not None and classes(white_root) == {"size", "owner-white"}
    assert len(cells["c3"]) == 1  # just its rect
    labels = [t.text for t in root.iter(f"{SVG}text") if "label" in classes(t)]
    assert {"a", "b", "c", "1", "2", "3"} <= set(labels)


def test_alternator_svg_draws_roots_after_the_stems_reaching_them() -> None:
    state = alternator("3x3", "a1-b1 b1-b2 c2-c1")
    order = [g.get("data-place") for g in parse_svg(render_svg(state)).iter(f"{SVG}g")]
    order = [cell for cell in order if cell]
    assert order.index("a1") < order.index("b1") < order.index("b2")
    assert order.index("c2") < order.index("c1")


def test_alak_svg_contract() -> None:
    state = alak(7, position="xx.xxo. o", moves="3")
    root = parse_svg(render_svg(state, highlight=[6], last_move=2))
    assert classes(root) == {"board", "alak"} and root.get("data-size") == "7"
    points = groups(root, "data-place")
    assert sorted(points, key=int) == [str(n) for n in range(1, 8)]
    assert classes(points["1"]) == {"point", "captured"}
    assert classes(points["3"]) == {"point", "last"}
    assert classes(points["7"]) == {"point", "highlight"}
    stones = {
        number: classes(circle) for number, g in points.items() for circle in g.iter(f"{SVG}circle")
    }
    assert stones == {"3": {"stone", "white"}, "6": {"stone", "white"}}
    assert points["1"].find(f"{SVG}path[@class='capture-mark']") is not None
    for number, g in points.items():
        assert g.find(f"{SVG}line") is not None
        label = g.find(f"{SVG}text")
        assert label is not None and label.text == number


def test_the_registry_gives_each_game_its_own_renderer() -> None:
    alak_state, alternator_state = alak(5, moves="2"), alternator("2x2", "a1-b1")
    assert renderer(alak_state.game) is alak_render
    assert renderer(alternator_state.game) is alternator_render


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), name=st.sampled_from(["alternator", "alak"]))
def test_random_games_render_consistently(seed: int, name: str) -> None:
    options = {"size": "4x3"} if name == "alternator" else {"size": 6, "rules": "tromp-taylor"}
    state = make_game(name, options).new_state()
    rng = random.Random(seed)
    for _ in range(rng.randrange(12)):
        if state.is_over:
            break
        state.play(rng.choice(state.legal_moves()))
    text = render_text(state, ascii=True)
    assert text.isascii()
    assert ("Game over" in text) == state.is_over
    root = parse_svg(render_svg(state))
    if name == "alternator":
        pits = [c for c in root.iter(f"{SVG}circle") if "pit" in classes(c)]
        assert len(pits) == sum(1 for value in state.cells if value < 0)  # type: ignore[attr-defined]
    else:
        stones = [c for c in root.iter(f"{SVG}circle") if "stone" in classes(c)]
        assert len(stones) == sum(1 for point in state.board if point != ".")  # type: ignore[attr-defined]


def test_a_game_of_wins_and_losses_shows_no_points() -> None:
    game = make_game("tictactoe", {"width": 3, "height": 3, "line": 3})
    state = game.new_state()
    assert status_lines(state, outcome_only=True) == ["Black to move"]
    for move in ("a1", "a2", "b1", "b2", "c1"):
        state.play_text(move)
    assert status_lines(state, outcome_only=True) == [
        f"Game over: {state.end_reason}. Black wins"
    ]
    text = renderer(game).render_text(state)
    assert "Black wins" in text and "Score" not in text and "B+1" not in text
