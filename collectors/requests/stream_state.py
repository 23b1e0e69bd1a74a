"""What a streamed answer has said so far: a request's events, text and the server's own counts.

Filled by a dialect's event reader (collectors/servers/wire.py and each dialect's `stream.py`),
read by the client (`record_of`) and the capture proxy. A request's steps are taken from the
server's counts wherever it gives them (`steps()`), never from event bursts, which split and
merge under load: verify passes where the server counts every one (`verify_steps`), else
T − 1 − A, never fewer than the steps the server says drafted (`drafted_steps`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from collectors.energy import ledger
from collectors.requests.latency import ChunkEvent


@dataclass
class StreamState:
    """What a stream has said so far; `final` fields arrive with the last events."""

    events: list[ChunkEvent] = field(default_factory=list)
    text_parts: list[str] = field(default_factory=list)
    committed_tokens: int | None = None
    prompt_tokens: int | None = None
    draft_n: int | None = None
    draft_n_accepted: int | None = None
    spec_reported: bool = False  # the server reported this request's drafting (absent counts: none)
    verify_steps: int | None = None  # verify passes, where the server counts every decode step
    drafted_steps: int | None = None  # steps that had draft tokens, where the server counts those
    finish_reason: str | None = None
    model: str | None = None
    error: str | None = None
    done: bool = False
    tokens_per_event_exact: bool = True
    _cumulative: int = 0

    @property
    def text(self) -> str:
        return "".join(self.text_parts)

    @property
    def text_sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def steps(self) -> int | None:
        """Every decode step after the first token, from the server's counts; None without them."""
        if self.verify_steps is not None:
            return self.verify_steps
        if not self.spec_reported or self.committed_tokens is None:
            return None
        steps = ledger.every_step_count(self.committed_tokens, self.draft_n_accepted or 0, 1)
        return max(steps, self.drafted_steps or 0, 0)

    def add_tokens(self, t_s: float, cumulative: int | None, text: str, step_key: float | None) -> None:
        """Record an event from a cumulative token count when the server gives one, else one per text."""
        if cumulative is not None and self.tokens_per_event_exact:
            n_tokens = max(0, cumulative - self._cumulative)
            self._cumulative = max(self._cumulative, cumulative)
        elif cumulative is not None:
            n_tokens = 0  # a final usage count after uncounted chunks is not an event of its own
        else:
            n_tokens = 1 if text else 0
            if text:
                self.tokens_per_event_exact = False
        if text:
            self.text_parts.append(text)
        if n_tokens:
            self.events.append(ChunkEvent(t_s, n_tokens, step_key))

    def fail(self, error: Any) -> None:
        """The server streamed an error object (or text): the stream ends with it."""
        self.error = str(error.get("message") or error) if isinstance(error, dict) else str(error)
        self.done = True
