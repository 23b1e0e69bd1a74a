"""Secrets in command lines: the one place that knows what a secret looks like in a command.

Pitfalls handled: a server command given to a sweep (`--draft-cmd 'llama-server … --api-key S'`)
is saved in meta.json and every point row and printed, so its secrets are replaced first: the
value of every option whose name ends in a secret word (`--api-key`, `--admin-api-key`,
`--hf-token`, `-hft`, `--db-password`), as `--opt VALUE` or `--opt=VALUE`; env-style assignments
(`HF_TOKEN=…`); a URL's password (`http://user:pw@host`); and all of these inside a command quoted
in one word (spectop's own `--draft-cmd '…'`). The secret word must end the name: `--max-tokens`,
`--tokenizer` and `--num-speculative-tokens` count or name things, and `--api-key-file PATH` or
`--ssl-keyfile PATH` say where a secret is, which is no secret.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence

REDACTED = "***"
_SECRET_WORDS = ("key", "token", "secret", "password", "passwd")
_SHORT_SECRET_OPTIONS = frozenset({"-hft"})  # llama.cpp's short --hf-token
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# `NAME=value`, `name: value`, `'name': 'value'` in free text (a server's log); the name decides.
# A name starts only where a word does: else a long run of letters is tried from each of its
# positions, quadratic in a line's length (a server prints what it likes)
_ASSIGNED = re.compile(
    r"(?<![A-Za-z0-9_-])(?P<name>[A-Za-z_][A-Za-z0-9_-]*)(?P<sep>['\"]?\s*[=:]\s*['\"]?)(?P<value>[^\s'\",}\]]+)"
)
_URL_PASSWORD = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:)(?P<password>[^/\s@]+)@")


def is_secret_name(name: str) -> bool:
    """An option or variable whose value is a secret: the last word of its name ends in key, token, …"""
    return re.split(r"[-_]", name.lstrip("-").lower())[-1].endswith(_SECRET_WORDS)


class _Redactor:
    """Replaces secrets in argv words, remembering each value it hid (in order)."""

    def __init__(self, placeholder: str, abbreviations: Sequence[str]) -> None:
        self.placeholder, self.abbreviations = placeholder, abbreviations
        self.found: list[str] = []

    def hide(self, value: str) -> str:
        self.found.append(value)
        return self.placeholder

    def secret_option(self, name: str) -> bool:
        if not name.startswith("-") or name in ("-", "--"):
            return False
        # argparse reads any unambiguous prefix of a long option (spectop's own --api as --api-key)
        abbreviated = len(name) > 2 and any(option.startswith(name) for option in self.abbreviations)
        return is_secret_name(name) or name in _SHORT_SECRET_OPTIONS or abbreviated

    def argv(self, words: Iterable[str]) -> list[str]:
        out: list[str] = []
        value_next = plain_value_next = False
        for word in words:
            name, eq, value = word.partition("=")
            if value_next:  # llama.cpp takes the next word as the value whatever it is (`-KEY`)
                out.append(self.hide(word))
                value_next = False
                # `--api-key --api-key K` may be the option said twice: a plain word after it is hidden too
                plain_value_next = self.secret_option(name) and not eq
                continue
            if plain_value_next and not word.startswith("-"):
                out.append(self.hide(word))
                plain_value_next = False
                continue
            plain_value_next = False
            if self.secret_option(name):
                out.append(f"{name}={self.hide(value)}" if eq else word)
                value_next = not eq
            elif eq and _ENV_NAME.fullmatch(name) and is_secret_name(name):
                out.append(f"{name}={self.hide(value)}")
            elif eq and name.startswith("-"):
                out.append(f"{name}={self.word(value)}")
            else:
                out.append(self.word(word))
        return out

    def word(self, word: str) -> str:
        """One word that may hold a whole command (`--draft-cmd 'llama-server … --api-key S'`) or a URL."""
        if len(_words(word)[0]) > 1:  # each of its words is shorter: this ends
            before = len(self.found)
            inner = self.command(word)
            if len(self.found) > before:
                return inner
        return _URL_PASSWORD.sub(lambda m: m["head"] + self.hide(m["password"]) + "@", word)

    def command(self, command: str) -> str:
        words, quoted = _words(command)
        hidden = self.argv(words)
        return shlex.join(hidden) if quoted else " ".join(hidden)


def _words(command: str) -> tuple[list[str], bool]:
    """The words of a command line, and whether shlex could read it (else they are split at spaces)."""
    try:
        return shlex.split(command), True
    except ValueError:  # unbalanced quotes: still hide what the words show
        return command.split(), False


def redact_argv(
    argv: Iterable[str], *, placeholder: str = REDACTED, abbreviations: Sequence[str] = ()
) -> list[str]:
    """`argv` with every secret value replaced by `placeholder`; `abbreviations` are secret long
    options the program also reads abbreviated (argparse's prefixes)."""
    return _Redactor(placeholder, abbreviations).argv(argv)


def redact_command(command: str | Sequence[str]) -> str:
    """A command line to store or show: `command` with its secrets replaced (a string without any is
    returned as it was typed)."""
    redactor = _Redactor(REDACTED, ())
    if isinstance(command, str) and not any(ch.isspace() for ch in command):
        return redactor.word(command)  # one word, a URL: left unquoted, so it still reads as one
    if isinstance(command, str):
        shown = redactor.command(command)
        # as typed when nothing was hidden, or only what was hidden already: redacting twice changes nothing
        return shown if any(value != REDACTED for value in redactor.found) else command
    return shlex.join(redactor.argv(command))


def secrets_in(argv: Iterable[str], *, abbreviations: Sequence[str] = ()) -> list[str]:
    """The secret values `redact_argv` would hide, in order."""
    redactor = _Redactor(REDACTED, abbreviations)
    redactor.argv(argv)
    return [value for value in redactor.found if value]


def scrub(text: str, secrets: Iterable[str]) -> str:
    """`text` (an error message, a log tail) with each secret replaced, longest first.

    A secret of 8 characters or more is replaced wherever it appears; a shorter one only where it
    stands as a word of its own, since it could also be part of ordinary words.
    """
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        if len(secret) >= 8:
            text = text.replace(secret, REDACTED)
        else:
            text = re.sub(rf"(?<![A-Za-z0-9]){re.escape(secret)}(?![A-Za-z0-9])", REDACTED, text)
    return text


def scrub_text(text: str, secrets: Iterable[str]) -> str:
    """A server's output as spectop may keep it: each known secret (`scrub`), the value of every
    secret-named assignment (`HF_TOKEN=…`, `'api_key': '…'`) and every URL's password replaced."""
    text = scrub(text, secrets)
    text = _ASSIGNED.sub(
        lambda m: m[0] if not is_secret_name(m["name"]) else f"{m['name']}{m['sep']}{REDACTED}", text
    )
    return _URL_PASSWORD.sub(lambda m: m["head"] + REDACTED + "@", text)


def restore(command: str, original: str) -> str:
    """`command`, an edit of `redact_command(original)`, with each placeholder given back the secret
    it stood for, in order: the dashboard shows a command redacted and runs what the user meant."""
    if REDACTED not in command:
        return command
    try:
        secrets, words = iter(secrets_in(shlex.split(original))), shlex.split(command)
    except ValueError:
        return command  # unbalanced quotes: splitting it into argv will say so
    out = []
    for word in words:
        while REDACTED in word:
            secret = next(secrets, None)
            if secret is None:
                break
            word = word.replace(REDACTED, secret, 1)
        out.append(word)
    return shlex.join(out)
