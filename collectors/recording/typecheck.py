"""Whether an object re-made from a recording holds what its type says, field by field.

A recording comes from anywhere (bug reports, other machines, an editor): a count written as
"abc", a flag as "yes", a whole number as 3.5 would pass through the constructors and fail later,
in a panel's format string, as a traceback. Each dataclass field is checked against its annotation
(numbers, text, flags, optional values, tuples, literals, nested dataclasses); a field whose
annotation is none of these is left to its constructor.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any


def wrong_field(obj: object, path: str = "") -> str | None:
    """The dotted name of the first field of `obj` (a dataclass) that does not hold its type; None when all do."""
    hints = _hints(type(obj))
    for field in dataclasses.fields(obj):  # type: ignore[arg-type]
        value = getattr(obj, field.name)
        name = f"{path}{field.name}"
        hint = hints.get(field.name)
        if hint is not None and not _fits(value, hint):
            return name
        inner = _nested(value, f"{name}.")
        if inner is not None:
            return inner
    return None


def _nested(value: Any, path: str) -> str | None:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return wrong_field(value, path)
    if isinstance(value, tuple):
        for i, item in enumerate(value):
            found = _nested(item, f"{path}{i}.")
            if found is not None:
                return found
    return None


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        try:
            _HINTS[cls] = typing.get_type_hints(cls)
        except (NameError, TypeError):  # an annotation only a type checker can resolve: unchecked
            _HINTS[cls] = {}
    return _HINTS[cls]


def _fits(value: Any, hint: Any) -> bool:
    origin = typing.get_origin(hint)
    if hint is Any:
        return True
    if hint is type(None):
        return value is None
    if origin is typing.Union or origin is types.UnionType:
        return any(_fits(value, arg) for arg in typing.get_args(hint))
    if origin is typing.Literal:
        return value in typing.get_args(hint)
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if origin is tuple:
        args = typing.get_args(hint)
        if not isinstance(value, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_fits(item, args[0]) for item in value)
        return not args or (len(args) == len(value) and all(map(_fits, value, args)))
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return isinstance(value, hint)
    return True  # paths, dicts, callables: their constructors judge them
