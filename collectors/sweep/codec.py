"""The one JSON codec of the sweep's frozen records (points, run meta, summaries): `to_json` and
`from_json`.

Field names are the records' (units in them); a field whose JSON name differs says so in its
metadata (`json`), a nested record written inline says `flatten`, and one that a form leaves out
rather than writing null says `omit_none`. Pitfalls handled: key order is the records' field order,
so a file written from records is the same text as one written from the dicts that came before;
a key that an older file lacks reads as the field's default (older runs still load); a verdict or
other enum is its word.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Mapping
from enum import Enum
from typing import Any


def to_json(value: Any) -> Any:
    """A record (or a value in one) as its JSON form: plain dicts, lists, numbers, text."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for f in dataclasses.fields(value):
            item = getattr(value, f.name)
            if f.metadata.get("flatten"):
                out.update(to_json(item))
            elif not (item is None and f.metadata.get("omit_none")):
                out[f.metadata.get("json", f.name)] = to_json(item)
        return out
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple | list):
        return [to_json(v) for v in value]
    if isinstance(value, Mapping):
        return {k: to_json(v) for k, v in value.items()}
    return value


def from_json(kind: Any, data: Any) -> Any:
    """The record of type `kind` (or a value of that type) read from its JSON form."""
    if data is None:
        return None
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        present = [k for k in typing.get_args(kind) if k is not type(None)]
        return from_json(present[0], data)
    if origin is tuple:
        item = typing.get_args(kind)[0]
        return tuple(from_json(item, v) for v in data)
    if origin is Mapping or origin is dict:
        item = typing.get_args(kind)[1]
        return {k: from_json(item, v) for k, v in data.items()}
    if isinstance(kind, type) and issubclass(kind, Enum):
        return kind(data)
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        if not isinstance(data, Mapping):
            raise TypeError(f"{kind.__name__} is read from a JSON object, not {type(data).__name__}")
        hints = _hints(kind)
        values = {}
        for f in dataclasses.fields(kind):
            name = f.metadata.get("json", f.name)
            if f.metadata.get("flatten"):
                values[f.name] = from_json(hints[f.name], data)
            elif name in data or not _has_default(f):
                values[f.name] = from_json(hints[f.name], data.get(name))
            # else: a key an older file lacks takes the field's default
        record: Any = kind(**values)
        return record
    if kind is float and isinstance(data, int):
        return float(data)
    return data


@functools.cache
def _hints(kind: Any) -> dict[str, Any]:
    return typing.get_type_hints(kind)


def _has_default(f: dataclasses.Field[Any]) -> bool:
    return f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
