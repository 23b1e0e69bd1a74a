"""The toy dialect's command line and settings: `--lookahead K` drafts K tokens a step."""

from __future__ import annotations

from collectors.servers.advice import DialectAdvice, requests_text


class ToyAdvice(DialectAdvice):
    spec_value_flags = frozenset({"--lookahead", "-la"})
    void_draft_hint = "Toy needs --lookahead above 0"

    @classmethod
    def plain_setting(cls, at: str) -> str:
        return f"Toy {at}: run without --lookahead"

    @classmethod
    def draft_setting(cls, n: int, at: str) -> str:
        return f"Toy {at}: --lookahead {n}"

    @classmethod
    def off_above(cls, batch: int, build: str | None, draft_tokens: int | None) -> str:
        return f"Toy: run without --lookahead above {requests_text(batch)}"
