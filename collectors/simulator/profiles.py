"""Calibration profiles for the simulator: the measured tables it reproduces, as data.

`note25` is the default: note 25's draft-model-versus-batch table (collectors/docs/note25.md; Apple M5 Pro, Qwen2.5 7B
Instruct Q4_0 target, Qwen2.5 0.5B Instruct Q4_0 draft, drafts of up to 4 at a 0.5 confidence
threshold, llama-server). Each arm's aggregate tok/s and chip W are interpolated between the
measured batches (see `curves.Curve`); mJ/token = W / tok/s x 1000 follows from them exactly.

`classes` adds per-prompt-class acceptance from the speculative-decoding note (seed 001,
collectors/docs/draft-strategies.md: code, prose, edit, drafts of 4). That note measured one request at a time; its batch shape is assumed
to be note 25's, scaled to the single-request figures of each class.

`note001` serves seed 001's whole strategy table (profiles_note001.py): besides plain, one named arm
per strategy (draft-2, draft-4, draft-8, draft-16, ngram) with its own acceptance, draft lengths
and single-request tok/s and chip W per class; its two-arm view drafts 4.

Idle power: 3.0 W. An M-series Pro SoC with nothing running reads a few watts in macmon's SoC
figure; the note's chip W figures are gross (idle included), so the idle value only matters
between and around requests.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from collectors.simulator import profiles_note001 as note001
from collectors.simulator.curves import Curve

BATCHES: tuple[float, ...] = (1, 2, 4, 8, 16)


@dataclass(frozen=True, slots=True)
class TableRow:
    """One row of note 25's table, exactly as published."""

    requests: int
    plain_tok_s: float
    draft_tok_s: float
    plain_mj_per_token: float
    draft_mj_per_token: float
    plain_power_w: float
    draft_power_w: float


NOTE25_TABLE: tuple[TableRow, ...] = (
    TableRow(1, 61.9, 78.3, 370, 381, 22.9, 29.8),
    TableRow(2, 100.2, 125.5, 391, 279, 39.1, 35.0),
    TableRow(4, 192.3, 163.4, 203, 227, 39.0, 37.1),
    TableRow(8, 339.2, 229.8, 109, 163, 36.9, 37.6),
    TableRow(16, 377.0, 329.1, 95, 114, 35.9, 37.5),
)
NOTE25_ACCEPTANCE_RANGE: tuple[float, float] = (0.67, 0.74)


@dataclass(frozen=True, slots=True)
class ArmCurves:
    """Aggregate throughput and chip power of one arm as functions of concurrent requests."""

    tok_s: Curve
    power_w: Curve

    def scaled(self, tok_s_factor: float, power_factor: float) -> ArmCurves:
        return ArmCurves(self.tok_s.scaled(tok_s_factor), self.power_w.scaled(power_factor))


@dataclass(frozen=True, slots=True)
class DraftShape:
    """How long the drafts of one verify step are: P(draft length = 0, 1, ..., n_max)."""

    n_max: int
    p_min: float
    length_probs: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class ArmBehaviour:
    """A named drafting arm beyond plain and draft (a draft length, n-gram copying) on one class."""

    curves: ArmCurves
    acceptance: float
    draft: DraftShape


@dataclass(frozen=True, slots=True)
class PromptClass:
    """A kind of text with its own draft acceptance and calibrated curves."""

    name: str
    keywords: tuple[str, ...]  # lower-case words that route a prompt to this class
    plain: ArmCurves
    draft: ArmCurves
    acceptance: float  # target accepted / drafted tokens on the draft arm
    arms: tuple[tuple[str, ArmBehaviour], ...] = ()  # named arms of a multi-arm profile
    min_chars: int = 0  # shorter prompts are not of this class, whatever their words

    def curves(self, kind: str) -> ArmCurves:
        """The curves of arm `kind`: "plain", "draft" or one of the named arms; "k0" (a step with
        speculation configured and nothing drafted) runs on plain's, stretched (k0_overhead.py)."""
        if kind in ("plain", "k0"):
            return self.plain
        return self.draft if kind == "draft" else dict(self.arms)[kind].curves


@dataclass(frozen=True, slots=True)
class Profile:
    """Everything the simulator needs to behave like one measured machine and model pair."""

    name: str
    description: str
    chip: str
    idle_w: float
    model_alias: str
    model_ftype: str
    model_n_params: int
    model_size_bytes: int
    n_vocab: int
    n_embd: int
    n_ctx_train: int
    draft: DraftShape
    classes: tuple[PromptClass, ...]
    default_class: str
    route_by_keyword: bool = True

    @property
    def arm_names(self) -> tuple[str, ...]:
        """The named drafting arms a multi-arm profile serves besides plain (none for two-arm ones)."""
        return tuple(name for name, _ in self.classes[0].arms)

    def drafting(self, kind: str, cls: PromptClass) -> tuple[DraftShape, float]:
        """(draft lengths, acceptance) of arm `kind` on class `cls`."""
        if kind == "draft":
            return self.draft, cls.acceptance
        arm = dict(cls.arms)[kind]
        return arm.draft, arm.acceptance

    def prompt_class(self, prompt: str) -> PromptClass:
        """The class a prompt belongs to: the first class whose keyword it contains and whose
        least length it reaches (an edit carries the text it edits: a short request to write code
        "with type hints" is code, not an edit). The simulator reads prompts as a server would,
        by their text alone: it knows none of the measurer's prompt sets."""
        if self.route_by_keyword:
            lowered = prompt.lower()
            for cls in self.classes:
                if len(prompt) >= cls.min_chars and any(word in lowered for word in cls.keywords):
                    return cls
        return self.class_named(self.default_class)

    def class_named(self, name: str) -> PromptClass:
        for cls in self.classes:
            if cls.name == name:
                return cls
        raise KeyError(name)

    def forced(self, class_name: str) -> Profile:
        """This profile with every prompt in one class, whatever its words."""
        self.class_named(class_name)
        return replace(
            self, name=f"{self.name}:{class_name}", default_class=class_name, route_by_keyword=False
        )


def _curves(tok_s: tuple[float, ...], power_w: tuple[float, ...]) -> ArmCurves:
    return ArmCurves(Curve(BATCHES, tok_s), Curve(BATCHES, power_w))


NOTE25_PLAIN = _curves(
    tuple(r.plain_tok_s for r in NOTE25_TABLE), tuple(r.plain_power_w for r in NOTE25_TABLE)
)
NOTE25_DRAFT = _curves(
    tuple(r.draft_tok_s for r in NOTE25_TABLE), tuple(r.draft_power_w for r in NOTE25_TABLE)
)

_QWEN7B: dict[str, Any] = dict(
    chip="Apple M5 Pro",
    idle_w=3.0,
    model_alias="qwen2.5-7b-instruct-q4_0.gguf",
    model_ftype="Q4_0",
    model_n_params=7_615_616_512,
    model_size_bytes=4_431_390_720,
    n_vocab=152_064,
    n_embd=3_584,
    n_ctx_train=32_768,
)

NOTE25 = Profile(
    name="note25",
    description="note 25: Qwen2.5 7B Q4_0 + 0.5B draft on an Apple M5 Pro, 1-16 requests",
    # A 0.5 confidence threshold ends some drafts early and skips a few altogether.
    draft=DraftShape(n_max=4, p_min=0.5, length_probs=(0.08, 0.08, 0.10, 0.12, 0.62)),
    classes=(PromptClass("power", (), NOTE25_PLAIN, NOTE25_DRAFT, acceptance=0.705),),
    default_class="power",
    **_QWEN7B,
)


def _seed001_class(
    name: str,
    keywords: tuple[str, ...],
    plain: tuple[float, float],
    draft: tuple[float, float],
    acceptance: float,
) -> PromptClass:
    """A class from seed 001's single-request (tok/s, mJ/token) pairs, batch shape from note 25."""
    base = NOTE25_TABLE[0]
    plain_w = plain[0] * plain[1] / 1000.0
    draft_w = draft[0] * draft[1] / 1000.0
    return PromptClass(
        name,
        keywords,
        NOTE25_PLAIN.scaled(plain[0] / base.plain_tok_s, plain_w / base.plain_power_w),
        NOTE25_DRAFT.scaled(draft[0] / base.draft_tok_s, draft_w / base.draft_power_w),
        acceptance,
    )


CLASSES = Profile(
    name="classes",
    description="seed 001: draft-4 acceptance by prompt class (code 68%, prose 45%, edit 99%)",
    draft=DraftShape(n_max=4, p_min=0.0, length_probs=(0.0, 0.0, 0.0, 0.0, 1.0)),
    classes=(
        _seed001_class(
            "edit", ("rewrite", "refactor", "edit", "type hints"), (61.0, 368.0), (137.8, 234.6), 0.99
        ),
        _seed001_class(
            "code",
            ("code", "def ", "function", "python", "implement", "class "),
            (62.0, 362.5),
            (107.0, 302.0),
            0.68,
        ),
        _seed001_class("prose", (), (62.1, 360.4), (81.4, 397.7), 0.45),
    ),
    default_class="prose",
    **_QWEN7B,
)


def _note001_class(name: str) -> PromptClass:
    """One class of seed 001's strategy table: every arm's single-request tok/s and chip W."""
    base = NOTE25_TABLE[0]

    def curves(arm: str) -> ArmCurves:
        tok_s, _, mj = note001.TABLE[(name, arm)]
        shape, (tok0, w0) = (
            (NOTE25_PLAIN, (base.plain_tok_s, base.plain_power_w))
            if arm == "plain"
            else (NOTE25_DRAFT, (base.draft_tok_s, base.draft_power_w))
        )
        return shape.scaled(tok_s / tok0, tok_s * mj / 1000.0 / w0)

    def behaviour(arm: str) -> ArmBehaviour:
        probs = note001.length_probs(name, arm)
        shape = DraftShape(n_max=len(probs) - 1, p_min=0.0, length_probs=probs)
        return ArmBehaviour(curves(arm), note001.TABLE[(name, arm)][1] or 0.0, shape)

    arms = tuple((arm, behaviour(arm)) for arm in note001.ARMS if arm != "plain")
    draft4 = dict(arms)["draft-4"]
    return PromptClass(
        name,
        note001.KEYWORDS[name],
        curves("plain"),
        draft4.curves,
        draft4.acceptance,
        arms,
        min_chars=note001.MIN_CHARS.get(name, 0),
    )


NOTE001 = Profile(
    name="note001",
    description="seed 001: plain, draft-2/4/8/16 and n-gram on code, prose and edit, one request at a time",
    # the two-arm view of this profile (plain, draft) drafts 4, the note's best length on code
    draft=DraftShape(n_max=4, p_min=0.0, length_probs=(0.0, 0.0, 0.0, 0.0, 1.0)),
    classes=tuple(_note001_class(name) for name in note001.CLASSES),
    default_class="prose",
    **_QWEN7B,
)

PROFILES: dict[str, Profile] = {p.name: p for p in (NOTE25, CLASSES, NOTE001)}


def get_profile(spec: str | Profile) -> Profile:
    """A profile by name; `classes:code` forces every prompt into one class."""
    if isinstance(spec, Profile):
        return spec
    name, _, forced = spec.partition(":")
    if name not in PROFILES:
        raise KeyError(f"unknown simulator profile {spec!r} (known: {', '.join(PROFILES)})")
    profile = PROFILES[name]
    return profile.forced(forced) if forced else profile
