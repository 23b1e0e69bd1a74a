"""Which command-line flags ask a server for speculative decoding, and the command without them.

Each dialect lists its server's speculative flags and their aliases
(collectors/servers/<name>/advice.py); anything spelled like one (`--spec-*`,
`--speculative-*`, `--draft-*`, `--*-draft`) counts too. Both `--flag value` and `--flag=value`
forms. Pure functions over argv lists; nothing is run.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence

from collectors.servers import registry

# Anything spelled like a speculative flag is one too; whether it takes a value is then guessed.
_SPEC_PATTERN = re.compile(r"^--(no-)?(spec-|speculative-|draft-)|^--[a-z0-9-]+-draft$")
_NUMBER = re.compile(r"^-\.?\d")


def _value_flags() -> frozenset[str]:
    return frozenset().union(*(d.spec_value_flags for d in registry.DIALECTS))


def _switch_flags() -> frozenset[str]:
    return frozenset().union(*(d.spec_switch_flags for d in registry.DIALECTS))


def _is_flag(token: str) -> bool:
    return token.startswith("-") and len(token) > 1 and not _NUMBER.match(token)


def _speculative_spans(argv: Sequence[str]) -> list[tuple[int, int]]:
    """Index ranges [start, end) of speculative flags with their values; argv[0] is the program."""
    spans: list[tuple[int, int]] = []
    value_flags, switch_flags = _value_flags(), _switch_flags()
    i = 1
    while i < len(argv):
        token = argv[i]
        name, has_eq, _ = token.partition("=")
        known_value, known_switch = name in value_flags, name in switch_flags
        if not (known_value or known_switch or _SPEC_PATTERN.match(name)):
            i += 1
            continue
        end = i + 1
        if not has_eq and not known_switch and end < len(argv):
            if known_value or not _is_flag(argv[end]):
                end += 1
        spans.append((i, end))
        i = end
    return spans


def derive_plain_argv(draft_argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """The drafting command without its speculative flags, and the tokens that were dropped."""
    argv = list(draft_argv)
    spans = _speculative_spans(argv)
    drop = {k for start, end in spans for k in range(start, end)}
    return [t for k, t in enumerate(argv) if k not in drop], [t for k, t in enumerate(argv) if k in drop]


def derive_plain_env(env: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """`env` without the variables that set a server's speculative flags, and the names dropped."""
    prefixes = tuple(prefix for d in registry.DIALECTS for prefix in d.spec_env_prefixes)
    dropped = sorted(k for k in env if k.startswith(prefixes))
    return {k: v for k, v in env.items() if k not in dropped}, dropped


def has_speculative_flags(argv: Sequence[str]) -> bool:
    """Whether the command asks for any kind of speculative decoding (or a draft model)."""
    return bool(_speculative_spans(argv))


def _flag_values(argv: Sequence[str], names: frozenset[str]) -> list[str]:
    values = []
    for start, end in _speculative_spans(argv):
        name, has_eq, value = argv[start].partition("=")
        if name in names:
            values.append(value if has_eq else (argv[start + 1] if end > start + 1 else ""))
    return values


def is_void_draft(argv: Sequence[str], env: Mapping[str, str] | None = None) -> bool:
    """The command loads a draft model that its server never uses (a dialect says which)."""
    env = os.environ if env is None else env

    def values(names: frozenset[str]) -> list[str]:
        return _flag_values(argv, names)

    return any(d.loads_unused_draft(argv, values, env) for d in registry.DIALECTS)
