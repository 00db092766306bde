"""Game options: what each option of a game's variants is called, what values it takes, and
its default. Declared once by the game (``Game.option_specs``), they build its command-line
options, the lobby's form and the adapters' parameters, and read every variant given as data.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal

from agon.core.errors import AgonError, quoted

OptionKind = Literal["whole", "number", "bool", "choice", "text"]
MAX_OPTION_DIGITS = 18
"""The longest whole number an option may be written with: beyond every range here."""
_TRUE_TEXTS = ("true", "on", "yes", "1")
_FALSE_TEXTS = ("false", "off", "no", "0")


@dataclass(frozen=True)
class Choice:
    """One value of a choice option, as people see it."""

    value: str
    label: str
    description: str = ""


@dataclass(frozen=True)
class Option:
    """One option of a game's variants: what it is called, what values it takes, its default.

    The game's ``__post_init__`` keeps the last word on ranges and combinations (its messages
    name the rule); an option checks a value's type, so that ``7.5`` or ``true`` is refused
    rather than cut or taken for 1.
    """

    name: str
    kind: OptionKind
    default: Any
    help: str
    label: str = ""
    """A short label for a form (the name, capitalised, if empty)."""
    minimum: float | None = None
    maximum: float | None = None
    step: float | None = None
    """For a number: the step a form's field moves by."""
    choices: tuple[Choice, ...] = ()
    applies_when: tuple[str, tuple[Any, ...]] | None = None
    """Where the option means something only when another option has one of some values:
    (that option, those values). Forms hide the field otherwise."""
    shortcut: bool = False
    """Accepted as input (``--size 8x8``), but not one of the variant's own options: records,
    forms and adapters' parameters leave it out."""
    reader: Callable[[Any], Any] | None = None
    """Reads a value the game's own way (and words its refusal), instead of by ``kind``."""

    @property
    def title(self) -> str:
        return self.label or self.name.replace("_", " ").capitalize()

    @property
    def flag(self) -> str:
        """The command-line option: ``--edge-capture``."""
        return "--" + self.name.replace("_", "-")

    def read(self, value: Any) -> Any:
        """A value as a record, a request or an adapter gives it (JSON types), checked."""
        if self.reader is not None:
            return self.reader(value)
        if self.kind == "whole":
            return _whole_number(self.name, value)
        if self.kind == "number":
            return _number(self.name, value)
        if self.kind == "bool":
            if not isinstance(value, bool):
                raise AgonError(f"{self.name} must be true or false")
            return value
        if self.kind == "choice":
            return self._choice(str(value))
        if not isinstance(value, str):
            raise AgonError(f"option {self.name} must be a text, not {quoted(value)}")
        return value

    def parse(self, text: str) -> Any:
        """A value written as text (a command line, a query string) as data, for the game's
        ``from_options`` to read: a bool for ``true``/``false`` (``on``/``off``, ``yes``/``no``),
        else the text itself."""
        if self.kind != "bool":
            return text
        key = text.strip().lower()
        if key in _TRUE_TEXTS or key in _FALSE_TEXTS:
            return key in _TRUE_TEXTS
        raise AgonError(f"{self.name} must be true or false, not {quoted(text)}")

    def text(self, value: Any) -> str:
        """A value as text: what :meth:`parse` reads back (``true``/``false`` for a bool)."""
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, Enum):
            return str(value.value)
        return str(value)

    def _choice(self, text: str) -> str:
        key = text.strip().lower().replace("_", "-")
        for choice in self.choices:
            if key == choice.value:
                return choice.value
        names = ", ".join(choice.value for choice in self.choices)
        raise AgonError(f"unknown {self.name} {quoted(text)}: choose one of {names}")

    def describe(self) -> dict[str, Any]:
        """The option as JSON, for a form: every field a form needs to offer it."""
        return {
            "name": self.name,
            "kind": self.kind,
            "label": self.title,
            "help": self.help,
            "default": self.text(self.default) if self.kind == "choice" else self.default,
            "minimum": self.minimum,
            "maximum": self.maximum,
            "step": self.step,
            "choices": [
                {"value": c.value, "label": c.label, "description": c.description}
                for c in self.choices
            ],
            "applies_when": None if self.applies_when is None else {
                "option": self.applies_when[0],
                "values": [self.text(value) for value in self.applies_when[1]],
            },
        }


def read_options(
    specs: Sequence[Option], given: Mapping[str, Any], title: str
) -> dict[str, Any]:
    """The options ``given`` for a game called ``title`` (a record's, a request's), each read
    by its spec, with the defaults of those not given (shortcuts only where given)."""
    names = {spec.name for spec in specs}
    unknown = set(given) - names
    if unknown:
        raise AgonError(f"unknown {title} option(s): {', '.join(sorted(map(str, unknown)))}")
    values: dict[str, Any] = {}
    for spec in specs:
        if spec.name in given:
            values[spec.name] = spec.read(given[spec.name])
        elif not spec.shortcut:
            values[spec.name] = spec.default
    return values


def _whole_number(name: str, value: Any) -> int:
    """An int, a whole float or a string of digits; not a bool (JSON's ``true`` would pass as
    1), nor 7.5 (which ``int`` would cut to 7)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?[0-9]+\s*", value):
        if len(value.strip()) > MAX_OPTION_DIGITS:  # and int() refuses over 4,300 digits
            raise AgonError(f"option {name} is out of range: {quoted(value)}")
        return int(value)
    raise AgonError(f"option {name} must be a whole number, not {quoted(value)}")


def _number(name: str, value: Any) -> float:
    """A number or a string that reads as one, not a bool."""
    try:
        # (float() reads other scripts' digits too, which no position or move text takes)
        if isinstance(value, bool) or (isinstance(value, str) and not value.isascii()):
            raise TypeError
        return float(value)
    except (TypeError, ValueError):
        raise AgonError(f"option {name} must be a number, not {quoted(value)}") from None


def check_komi(komi: float) -> None:
    """Refuse a komi that is not a finite number (``nan`` and ``inf`` parse as floats)."""
    if not math.isfinite(komi):
        raise AgonError(f"komi must be a finite number, not {komi}")
