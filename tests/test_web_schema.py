"""Schemathesis over the arena's OpenAPI schema, with every check it has: requests made from the
schema, valid and not, must get answers the schema documents (status, content type, headers,
body), never a server error. The count of cases is printed (``-s``) for the record."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from schemathesis.checks import CHECKS, load_all_checks
from schemathesis.config import SchemathesisConfig

from agon.games import names
from agon.web.app import create_app
from web_fixtures import UNLIMITED

load_all_checks()
ALL_CHECKS = list(CHECKS.get_all())

_folder = tempfile.TemporaryDirectory(prefix="agon-schema-")
app = create_app(
    str(Path(_folder.name) / "schema.db"), workers=1, executor="thread", warm=False,
    limits=UNLIMITED,
)
# A schema cannot say which options a game takes nor which moves are legal: there a request the
# schema allows may be refused for its meaning, 400 (not understood) or 422 (against the rules);
# nor which games are over (a review: 409) or which puzzles there are (404). The study's bodies
# (positions, lines of moves, records) are large enough that a body breaking their limits can be
# over the request body's limit too: refused with 413 before it is read.
MEANING_CHECKED = """
[[operations]]
include-path-regex = "^/api/games(/[^/]+/(moves|pass|choices|review))?$"
include-method = "POST|GET"

[operations.checks.positive_data_acceptance]
expected-statuses = ["2xx", "400", "403", "404", "409", "422", "429"]

[[operations]]
include-path-regex = "^/api/(study/[a-z]+|puzzles/[^/]+(/[^/]+/moves)?)$"

[operations.checks.positive_data_acceptance]
expected-statuses = ["2xx", "400", "403", "404", "409", "422", "429"]

[operations.checks.negative_data_rejection]
expected-statuses = ["400", "404", "409", "413", "422", "429"]
"""
schema = schemathesis.openapi.from_asgi(
    "/api/openapi.json", app, config=SchemathesisConfig.from_str(MEANING_CHECKED)
)
cases = [0]


def test_every_check_is_run() -> None:
    names = {check.__name__ for check in ALL_CHECKS}
    assert {"not_a_server_error", "status_code_conformance", "negative_data_rejection",
            "positive_data_acceptance", "response_schema_conformance"} <= names


@schema.parametrize()
@settings(
    max_examples=200, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)
def test_the_api_answers_as_its_schema_says(case: schemathesis.Case) -> None:
    cases[0] += 1
    case.call_and_validate(checks=ALL_CHECKS)


_games = [0]


def _real_game(client: TestClient) -> tuple[str, str]:
    """A new game against the computer, of each registered game in turn: (id, token)."""
    game = names()[_games[0] % len(names())]
    _games[0] += 1
    created = client.post("/api/games", json={"game": game, "level": "easy"}).json()
    return created["id"], created["token"]


_client = TestClient(app)


@schema.include(path_regex=r"\{game_id\}").parametrize()
@settings(
    max_examples=200, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)
def test_the_api_answers_as_its_schema_says_about_real_games(case: schemathesis.Case) -> None:
    """The same on games that exist, as their players (the token of the seat)."""
    cases[0] += 1
    case.path_parameters["game_id"], token = _real_game(_client)
    if case.headers is not None and "X-Agon-Token" in case.headers:
        case.headers["X-Agon-Token"] = token
    case.call_and_validate(checks=ALL_CHECKS)


SCHEMA_TESTS = "test_the_api_answers_as_its_schema_says"
"""The start of the names of the tests that run schemathesis's cases."""
schema_tests_run = [0]


@pytest.fixture(autouse=True)
def schema_test(request: pytest.FixtureRequest) -> None:
    """Counts the schemathesis tests this process runs (xdist may give it none of them)."""
    if request.node.name.startswith(SCHEMA_TESTS):
        schema_tests_run[0] += 1


@pytest.fixture(scope="module", autouse=True)
def counted() -> Iterator[None]:
    """The cases run by this file's tests (in this process), for the record (``-s``); each
    case's own checks have already failed its test where it found something wrong."""
    before, tests_before = cases[0], schema_tests_run[0]
    yield
    print(f"\nschemathesis cases: {cases[0]}")
    if schema_tests_run[0] > tests_before:
        assert cases[0] > before, "schemathesis ran no case"
