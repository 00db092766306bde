"""What a browser is sent: a game's view, the lobby's lines, the board as SVG, hints, and what
the board places clicked so far make."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agon.core.errors import quoted
from agon.core.game import Game, Move, State, format_points
from agon.core.player import Player
from agon.games import plugins, renderer, words
from agon.web.errors import ArenaError
from agon.web.levels import LEVELS, OfferedLevel, seconds_a_move
from agon.web.pages import variant_query
from agon.web.replay import Loaded
from agon.web.seats import COLOURS, invitation, seats_of, undo_keeps
from agon.web.store import StoredGame

OWN_LEVEL_LABELS: Mapping[str, str] = {level.key: level.label for level in LEVELS}
"""The names of Agon's own levels (an arena with configured programs adds theirs)."""


def seat_view(public: Mapping[str, Any], loaded: Loaded, token: str | None) -> dict[str, Any]:
    """What a browser shows: the game's public view (:func:`public_view`, unchanged), with
    what the seat of ``token`` may do."""
    return {
        **public,
        "you": seats_of(loaded.stored, token),
        "invite_token": invitation(loaded.stored, token),
    }


def public_view(
    loaded: Loaded, labels: Mapping[str, str] = OWN_LEVEL_LABELS
) -> dict[str, Any]:
    """What every watcher of the game is sent."""
    stored, game, state = loaded.stored, loaded.game, loaded.state
    last = _last_move(state)
    score = state.score()
    return {
        "id": stored.id,
        "game": game.name,
        "title": game.title,
        "description": game.description,
        "variant": game.options(),
        "mode": stored.mode,
        "players": {colour: _player(stored, colour, labels) for colour in COLOURS},
        "moves": [
            {"ply": ply, "player": mover.label, "text": text}
            for ply, (mover, text) in enumerate(
                zip(loaded.movers, stored.moves, strict=True), start=1
            )
        ],
        "last_move": game.format_move(last) if last is not None else None,
        "to_move": loaded.to_move,
        "thinking": loaded.computer_to_move,
        "status": stored.status,
        "result": stored.result,
        "reason": stored.reason,
        "headline": headline(stored),
        "score": {"black": score.black, "white": score.white},
        "score_text": {
            "black": format_points(score.black),
            "white": format_points(score.white),
        },
        "komi": game.komi,
        "click_help": click_help(game.name),
        "rules_query": variant_query(game),
        "has_pass": game.pass_move is not None,
        "undo_available": undo_keeps(loaded) is not None,
        "can_pass": loaded.active
        and game.pass_move is not None
        and state.is_legal(game.pass_move),
        "revision": stored.revision,
        "created": stored.created.isoformat(),
        "updated": stored.updated.isoformat(),
        "svg": board_svg(state),
    }


def offered_level(level: OfferedLevel) -> dict[str, Any]:
    """A level as the lobby lists it: its agent, the time it thinks a move (its limit, else the
    mean measured where it was rated; None: not known) and its rating (where rated)."""
    rating = level.rating
    seconds = seconds_a_move(level.spec)
    return {
        "key": level.key, "label": level.label, "agent": level.spec, "games": None,
        "seconds": seconds,
        "measured_seconds": None if rating is None else rating.seconds_mean,
        "rating": None if rating is None else {
            "elo": round(rating.elo), "low": _rounded(rating.low), "high": _rounded(rating.high),
        },
    }


def _rounded(value: float | None) -> int | None:
    return None if value is None else round(value)


def click_help(game_name: str) -> dict[str, str]:
    """How a move is made by clicking the board, in each language of the game's texts (the
    page shows the reader's)."""
    return {lang: said.click_help for lang, said in words(game_name).items()}


def summary(
    loaded: Loaded, watchers: int, labels: Mapping[str, str] = OWN_LEVEL_LABELS
) -> dict[str, Any]:
    """A line in the lobby's lists."""
    stored = loaded.stored
    return {
        "id": stored.id,
        "game": loaded.game.name,
        "description": loaded.game.description,
        "mode": stored.mode,
        "players": {colour: _player(stored, colour, labels) for colour in COLOURS},
        "plies": len(stored.moves),
        "to_move": loaded.to_move,
        "status": stored.status,
        "result": stored.result,
        "headline": headline(stored),
        "updated": stored.updated.isoformat(),
        "watchers": watchers,
    }


def player_label(
    stored: StoredGame, colour: str, labels: Mapping[str, str] = OWN_LEVEL_LABELS
) -> str:
    """Who sits on a seat, in a few words ("Player", "Computer · Medium")."""
    return str(_player(stored, colour, labels)["label"])


def _player(stored: StoredGame, colour: str, labels: Mapping[str, str]) -> dict[str, Any]:
    """Who sits on a seat, in words: a person, or the computer at its level."""
    agent, level_key = stored.agents[colour], stored.levels[colour]
    if agent is None:
        label = "Friend" if stored.mode == "friend" and colour != stored.host else "Player"
        return {"kind": "human", "label": label}
    name = labels.get(level_key or "", agent)
    label = f"Computer · {name}"
    return {"kind": "computer", "label": label, "agent": agent, "level": level_key}


def headline(stored: StoredGame) -> str | None:
    """The result in words (:func:`result_headline`), None while the game goes on."""
    if stored.status != "over" or stored.result is None:
        return None
    return result_headline(stored.game, stored.result)


def result_headline(game_name: str, result: str) -> str:
    """A result (``B+2.5``, ``W+R``, ``draw``) in words: "Black wins by 2.5", "White wins by
    resignation", "Draw"; "Black wins" in a game of wins and losses without points."""
    if result == "draw":
        return "Draw"
    winner = "Black" if result.startswith("B") else "White"
    margin = result.partition("+")[2]
    if margin == "R":
        return f"{winner} wins by resignation"
    if margin == "F":
        return f"{winner} wins by forfeit"
    if _outcome_only(game_name):
        return f"{winner} wins"  # (a game of wins and losses: its B+1 counts no points)
    return f"{winner} wins by {margin}"


def _outcome_only(name: str) -> bool:
    """Whether the game called ``name`` has only wins, draws and losses (False where no game
    of that name is installed any more)."""
    found = plugins().get(name)
    return found is not None and found.judging.outcome_only


def _last_move(state: State) -> Move | None:
    return state.history[-1] if state.history else None


def board_svg(state: State, highlight: Iterable[int] = ()) -> str:
    """The board as SVG, its last move marked and the places ``highlight`` names lit."""
    return renderer(state.game).render_svg(
        state, highlight=list(highlight), last_move=_last_move(state)
    )


def hint_view(loaded: Loaded, hint: dict[str, Any]) -> dict[str, Any]:
    """A hint (:func:`agon.web.analysts.hint`: the move, its value in words from the player's
    view, the line expected), with the move lit on the board."""
    move = loaded.game.parse_move(hint["move"])
    return {**hint, "svg": board_svg(loaded.state, highlight=loaded.game.move_places(move))}


def position_view(
    state: State, start: str | None, movers: list[Player]
) -> dict[str, Any]:
    """A position of the analysis board: ``state``, reached from the start position ``start``
    (None: the game's start) by the moves of its history, played by ``movers``."""
    game = state.game
    score = state.score()
    over = state.is_over
    return {
        "game": game.name,
        "title": game.title,
        "description": game.description,
        "variant": game.options(),
        "start_position": start,
        "position": state.position(),
        "moves": [
            {"ply": ply, "player": mover.label, "text": game.format_move(move)}
            for ply, (mover, move) in enumerate(zip(movers, state.history, strict=True), start=1)
        ],
        "to_move": None if state.to_move is None else state.to_move.label,
        "status": "over" if over else "active",
        "result": state.result,
        "reason": state.end_reason,
        "score_text": {
            "black": format_points(score.black),
            "white": format_points(score.white),
        },
        "komi": game.komi,
        "legal_moves": [] if over else [game.format_move(move) for move in state.legal_moves()],
        "has_pass": game.pass_move is not None,
        "click_help": click_help(game.name),
        "rules_query": variant_query(game),
        "svg": board_svg(state),
    }


def choices_view(loaded: Loaded, picked: list[str]) -> dict[str, Any]:
    """What the board places picked so far (by name, in order) make: one move (``move``,
    legal or not: playing it explains the rule it breaks), or the places that can come
    next, each legal or not and why (``choices``), or nothing legal (``reason``)."""
    return choices_for(loaded.state, picked)


def choices_for(state: State, picked: list[str]) -> dict[str, Any]:
    """:func:`choices_view` for any position (the analysis board's, a puzzle's)."""
    game = state.game
    picking = pick_places(game, state, picked)
    legal_next = [place for place, why in picking.choices.items() if why is None]
    completed = picking.completed_by
    return {
        "picked": picked,
        "move": None if picking.move is None else game.format_move(picking.move),
        "choices": [
            {
                "place": game.place_name(place), "legal": why is None, "reason": why,
                "move": game.format_move(completed[place]) if place in completed else None,
            }
            for place, why in picking.choices.items()
        ],
        "reason": picking.reason,
        "svg": board_svg(state, highlight=legal_next),
    }


@dataclass(frozen=True)
class Picking:
    """What places picked on the board make (see :func:`pick_places`)."""

    move: Move | None
    choices: dict[int, str | None]
    """The places that can come next, each with why no legal move goes through it (None: one
    does)."""
    reason: str | None
    completed_by: dict[int, Move] = field(default_factory=dict)
    """The places of :attr:`choices` that, picked next, make a move (legal or not) at once: the
    one move of the places picked and that place alone, through which no longer move goes."""


def pick_places(game: Game, state: State, picked: list[str]) -> Picking:
    """The moves made of the places ``picked`` (names) and more: where exactly one move is made
    of these places alone, that move; else the next places of the moves that start with them,
    and, where none of those moves is legal, why not."""
    places = _places_by_name(game)
    unknown = [name for name in picked if name not in places]
    if unknown:
        raise ArenaError(f"{quoted(unknown[0])} is not a place of this board")
    prefix = tuple(places[name] for name in picked)
    if not prefix:
        raise ArenaError("pick at least one place")
    moves = {  # (each move that starts with the picked places, and all its places)
        move: made_of for move in range(game.num_actions)
        if (made_of := game.move_places(move))[: len(prefix)] == prefix
    }
    complete = [move for move, made_of in moves.items() if len(made_of) == len(prefix)]
    if len(complete) == 1 and len(moves) == 1:
        return Picking(complete[0], {}, None)
    choices: dict[int, str | None] = {}
    ending: dict[int, list[Move]] = {}  # (the moves that end with each next place)
    going_on: set[int] = set()  # (the next places that longer moves go through)
    for move, made_of in moves.items():
        if len(made_of) > len(prefix):
            why = state.illegal_reason(move)
            following = made_of[len(prefix)]
            if choices.get(following, "") is not None:
                choices[following] = why
            if len(made_of) == len(prefix) + 1:
                ending.setdefault(following, []).append(move)
            else:
                going_on.add(following)
    completed_by = {
        place: made[0] for place, made in ending.items()
        if len(made) == 1 and place not in going_on
    }
    if any(why is None for why in choices.values()):
        return Picking(None, choices, None, completed_by)
    distinct = sorted({str(why) for why in choices.values()}) or ["no move starts there"]
    reason = f"{' '.join(picked)} has no legal move: " + "; ".join(distinct)
    return Picking(None, choices, reason, completed_by)


@functools.lru_cache(maxsize=64)
def _places_by_name(game: Game) -> dict[str, int]:
    """The board's places by name: every place some move is made of."""
    return {
        game.place_name(place): place
        for move in range(game.num_actions) for place in game.move_places(move)
    }
