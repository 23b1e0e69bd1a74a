"""The multi-arm sweep's arms: plain, and any number of named ones (`--arm NAME=URL|CMD`), or arms
generated from one command (`--draft-max 2,4,8,16` from the draft command, `--ngram` from the plain one).

Pitfalls handled: an arm's name is a file name and a table column, so it is short and plain, and
no two arms share one (nor take "plain"); a `NAME=VALUE` whose value is a URL is a running server,
anything else a command, split without a shell. Generated commands use the flags of the pinned
llama-server build (`--help`): `--draft-max` has been removed there, so a draft length is set with
`--spec-draft-n-max N` (any older length flag in the command is replaced, not doubled), and n-gram
drafting is `--spec-type ngram-simple` with the server's own n-gram defaults. Launched arms run one
at a time (`arms.ArmPool`), so generated arms may share a port.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from collectors.errors import SpectopError
from collectors.launch.process import url_from_argv
from collectors.launch.specflags import derive_plain_argv, has_speculative_flags
from collectors.servers import check_url, registry
from collectors.servers.schedule_argv import without_flags
from collectors.sweep.arms import ArmSpec, split_command

MAX_ARMS = 16  # besides plain: each arm is a server and a row per class
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$")
# llama-server's draft-length flags, the current one and the removed ones older commands carry
_LENGTH_FLAGS = frozenset({"--spec-draft-n-max", "--draft", "--draft-n", "--draft-max"})
LENGTH_FLAG = "--spec-draft-n-max"
NGRAM_FLAGS = ("--spec-type", "ngram-simple")


def parse_arm(text: str) -> ArmSpec:
    """`NAME=URL` (a running server) or `NAME=CMD` (a command spectop starts)."""
    name, eq, value = text.partition("=")
    name, value = name.strip(), value.strip()
    if not eq or not value:
        raise SpectopError(
            f"--arm {text!r} is not NAME=URL or NAME=CMD", "e.g. --arm draft-4=http://host:8081"
        )
    _check_name(name)
    if re.match(r"^https?://", value):
        return ArmSpec(name, check_url(value))
    argv = split_command(value)
    return ArmSpec(name, url_from_argv(argv), tuple(argv))


def _check_name(name: str) -> None:
    if not _NAME.match(name) or name == "plain":
        raise SpectopError(
            f"arm name {name!r} must be 1-32 letters, digits, '.', '_' or '-', and not 'plain'",
            "e.g. --arm draft-4=URL",
        )


def with_draft_length(argv: Sequence[str], n: int) -> list[str]:
    """`argv` drafting `n` tokens per step: its length flags replaced by `--spec-draft-n-max n`."""
    return [*without_flags(argv, _LENGTH_FLAGS), LENGTH_FLAG, str(n)]


def parse_lengths(text: str) -> tuple[int, ...]:
    try:
        lengths = tuple(int(v) for v in text.replace(" ", "").split(",") if v)
    except ValueError:
        lengths = ()
    if not lengths or any(not 1 <= n <= 256 for n in lengths) or len(set(lengths)) != len(lengths):
        raise SpectopError(
            f"--draft-max must be distinct draft lengths from 1 to 256, not {text!r}",
            "e.g. --draft-max 2,4,8,16",
        )
    return lengths


def make_named_arms(
    plain_url: str | None = None,
    plain_cmd: str | None = None,
    arms: Sequence[str] = (),
    draft_cmd: str | None = None,
    draft_max: str | None = None,
    ngram: bool = False,
) -> tuple[ArmSpec, ...]:
    """Plain first, then the generated arms (draft-N per length, ngram), then the named ones."""
    if plain_url and plain_cmd:
        raise SpectopError("give the plain arm as --plain URL or --plain-cmd, not both")
    draft_argv = split_command(draft_cmd) if draft_cmd else None
    if draft_max and draft_argv is None:
        raise SpectopError(
            "--draft-max needs the draft command to vary",
            f"add --draft-cmd '{registry.default_program()} ...'",
        )
    if draft_argv is not None and not has_speculative_flags(draft_argv):
        raise SpectopError(
            "the draft command has no speculative flags", "add e.g. -md draft.gguf --spec-type draft-simple"
        )
    if plain_cmd:
        plain = ArmSpec("plain", url_from_argv(split_command(plain_cmd)), tuple(split_command(plain_cmd)))
    elif plain_url:
        plain = ArmSpec("plain", check_url(plain_url))
    elif draft_argv is not None:
        argv, dropped = derive_plain_argv(draft_argv)
        plain = ArmSpec("plain", url_from_argv(argv), tuple(argv), derived=True, dropped=tuple(dropped))
    else:
        raise SpectopError("the sweep needs a plain arm", "pass --plain URL, --plain-cmd, or --draft-cmd")
    generated: list[ArmSpec] = []
    if draft_argv is not None:
        lengths = parse_lengths(draft_max) if draft_max else ()
        generated += [
            ArmSpec(f"draft-{n}", url_from_argv(draft_argv), tuple(with_draft_length(draft_argv, n)))
            for n in lengths
        ]
        if not lengths:
            generated.append(ArmSpec("draft", url_from_argv(draft_argv), tuple(draft_argv)))
    if ngram:
        if not plain.launched:
            raise SpectopError(
                "--ngram derives its command from the plain one", "give --plain-cmd or --draft-cmd"
            )
        argv = [*derive_plain_argv(plain.argv)[0], *NGRAM_FLAGS]
        generated.append(ArmSpec("ngram", url_from_argv(argv), tuple(argv)))
    named = [parse_arm(text) for text in arms]
    every = [plain, *generated, *named]
    names = [a.name for a in every]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise SpectopError(f"two arms are called {duplicates[0]!r}", "give each --arm its own name")
    if len(every) < 2:
        raise SpectopError(
            "the sweep needs an arm besides plain", "add --arm NAME=URL, --draft-max or --ngram"
        )
    if len(every) - 1 > MAX_ARMS:
        raise SpectopError(f"at most {MAX_ARMS} arms besides plain, not {len(every) - 1}", "split the sweep")
    return tuple(every)
