"""The shape of a server's JSON answer, checked before anything reads it.

Server answers are untrusted: a field of the wrong type would otherwise surface as a TypeError deep
inside a dialect's `derive` or a stream parser, or as a wrongly typed snapshot field that breaks
whoever formats it. A shape names the fields that are read and their kinds; other fields are not
looked at, and an absent or null field reads as unknown. Anything else is one SpectopError that
names the endpoint and the field. Pitfalls handled: JSON `true` is not a number (Python's bool is
an int); a whole number is an int within 64 bits, never 3.5, "3" or 1e400; NaN and infinities,
which Python's json module reads, are not numbers; nesting deep enough to exhaust the JSON
decoder's recursion is not JSON.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from collectors.errors import SpectopError
from collectors.http import NOT_A_SERVER


@dataclass(frozen=True)
class Scalar:
    """A kind of JSON value: what it is called in a message, and its test."""

    name: str
    test: Callable[[Any], bool]


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**64


def _number(value: Any) -> bool:
    return _whole(value) or (isinstance(value, float) and math.isfinite(value))


INT = Scalar("a whole number", _whole)
NUMBER = Scalar("a number", _number)
TEXT = Scalar("text", lambda value: isinstance(value, str))


@dataclass(frozen=True)
class ListOf:
    item: Any


@dataclass(frozen=True)
class OneOf:
    """Any of several shapes (e.g. a list of objects, or one object in older builds)."""

    options: tuple[Any, ...]


@dataclass(frozen=True)
class Required:
    """A field that must be present and not null."""

    kind: Any


def check(value: Any, shape: Any, where: str) -> Any:
    """`value` itself when it has `shape`; else SpectopError("<where> answered a `field` that is not …")."""
    problem = _problem(value, shape, "")
    if problem is not None:
        raise SpectopError(f"{where} answered {problem}", NOT_A_SERVER)
    return value


def problem_of(value: Any, shape: Any) -> str | None:
    """What is wrong with `value` against `shape` ("a `field` that is not text"), or None."""
    return _problem(value, shape, "")


def member(value: Any, *keys: str) -> Any:
    """`value[k1][k2]…`, or None where a level is missing or is not an object."""
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def objects(value: Any) -> list[dict[str, Any]]:
    """The objects in a list (others left out); [] when `value` is not a list."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def decode(text: str | bytes, where: str) -> Any:
    """The JSON value of `text`; SpectopError when it is not JSON."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nesting too deep for the decoder
        raise SpectopError(f"{where} answered something that is not JSON", NOT_A_SERVER) from None


def json_of(resp: httpx.Response, where: str, shape: Any) -> Any:
    """The JSON body of an answer, checked against `shape`."""
    return check(decode(resp.content, where), shape, where)


def describe(kind: Any) -> str:
    if isinstance(kind, Scalar):
        return kind.name
    if isinstance(kind, ListOf):
        return "a list"
    if isinstance(kind, OneOf):
        return " or ".join(describe(option) for option in kind.options)
    return "an object"


def _problem(value: Any, kind: Any, path: str) -> str | None:
    # on the stream's hot path (every event of every stream): a field's path is spelt out only
    # when it is wrong, and a scalar is tested in place rather than by another call
    if isinstance(kind, Scalar):
        return None if kind.test(value) else _wrong(path, kind)
    if isinstance(kind, OneOf):
        fits = any(_problem(value, option, path) is None for option in kind.options)
        return None if fits else _wrong(path, kind)
    if isinstance(kind, ListOf):
        if not isinstance(value, list):
            return _wrong(path, kind)
        item = kind.item
        for i, entry in enumerate(value):
            if isinstance(item, Scalar):
                if not item.test(entry):
                    return _wrong(f"{path}[{i}]", item)
            elif (problem := _problem(entry, item, f"{path}[{i}]")) is not None:
                return problem
        return None
    if not isinstance(value, dict):
        return _wrong(path, kind)
    for key, field_kind in kind.items():
        field = value.get(key)
        if field is None:
            if isinstance(field_kind, Required):
                name = f"{path}.{key}" if path else key
                return f"an object without `{name}`" if not path else f"a `{path}` without `{key}`"
            continue
        inner = field_kind.kind if isinstance(field_kind, Required) else field_kind
        if isinstance(inner, Scalar):
            if inner.test(field):
                continue
            return _wrong(f"{path}.{key}" if path else key, inner)
        problem = _problem(field, inner, f"{path}.{key}" if path else key)
        if problem is not None:
            return problem
    return None


def _wrong(path: str, kind: Any) -> str:
    return f"a `{path}` that is not {describe(kind)}" if path else f"something that is not {describe(kind)}"
