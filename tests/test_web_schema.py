"""Schemathesis over the arena's OpenAPI schema, with every check it has: requests made from the
schema, valid and not, must get answers the schema documents (status, content type, headers,
body), never a server error. The count of cases is printed (``-s``) for the record."""

from __future__ import annotations

import tempfile
from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import CHECKS, load_all_checks

from agon.web.app import create_app
from web_fixtures import UNLIMITED

load_all_checks()
ALL_CHECKS = list(CHECKS.get_all())

_folder = tempfile.TemporaryDirectory(prefix="agon-schema-")
app = create_app(
    str(Path(_folder.name) / "schema.db"), workers=1, executor="thread", warm=False,
    limits=UNLIMITED,
)
schema = schemathesis.openapi.from_asgi("/api/openapi.json", app)
cases = [0]


def test_every_check_is_run() -> None:
    names = {check.__name__ for check in ALL_CHECKS}
    assert {"not_a_server_error", "status_code_conformance", "negative_data_rejection",
            "positive_data_acceptance", "response_schema_conformance"} <= names


@schema.parametrize()
@settings(
    max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)
def test_the_api_answers_as_its_schema_says(case: schemathesis.Case) -> None:
    cases[0] += 1
    case.call_and_validate(checks=ALL_CHECKS)


def test_cases_counted() -> None:
    print(f"\nschemathesis cases: {cases[0]}")
