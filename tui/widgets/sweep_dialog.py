"""The dialog that sets up a sweep: a quick preset beside the full protocol, batches, length, passes, prompts, arms.

An arm's command is shown with its secrets replaced (`--api-key ***`, collectors/redact.py); what
runs is the command as given, with any edit the user made to the shown one. A finished run of
either kind (a multi-arm one from `spectop sweep --arm …`, or any `spectop report` folder) is shown
from its folder instead: "Show saved run" returns its summary, read from the files, not a plan
(what it returns, a SweepRequest or a SavedRun, is defined in collectors/sweep/request.py).
Draft lengths or the n-gram box make it a multi-arm sweep (collectors/sweep/runner.py), its
prompts then read as classes ("code,prose,edit"), as `spectop sweep --draft-max … --ngram` does.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Grid, Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Select, Static

from collectors.errors import SpectopError
from collectors.redact import redact_command, restore
from collectors.servers import registry
from collectors.sweep.arms import make_arms
from collectors.sweep.named_arms import make_named_arms
from collectors.sweep.open_loop import parse_arrivals
from collectors.sweep.plan import ArmsPlan, SweepPlan, parse_batches, parse_rates
from collectors.sweep.prompts import BUILT_IN, load_classes, load_prompts
from collectors.sweep.request import SavedRun, SweepRequest
from collectors.sweep.summary import summarize_saved

CLASSES = "code,prose,edit"  # seed 001's three classes, one multi-arm sweep

PLAIN_HINT = "http://…, a command, or blank to derive from the draft command"
DRAFT_HINT = f"http://… or {registry.example_draft_command()}"  # the dialects' own example


def arm_field(url: str | None, cmd: str | None) -> str:
    return url or cmd or ""


RATES_HINT = "e.g. 1,2,4 or 1,2,4 bursty:3: requests arriving at R/s"


def open_loop_field(text: str) -> tuple[tuple[float, ...], str]:
    """The rates field: "1,2,4" (Poisson arrivals) or "1,2,4 bursty:3"; empty, no open-loop points."""
    rates, _, arrivals = text.strip().partition(" ")
    if not rates:
        return (), "poisson"
    return parse_rates(rates), parse_arrivals(arrivals.strip() or "poisson").spec


def parse_arm(text: str) -> tuple[str | None, str | None]:
    """A URL for a running server, anything else is a command to launch."""
    text = text.strip()
    if not text:
        return None, None
    return (text, None) if text.startswith(("http://", "https://")) else (None, text)


class SweepDialog(ModalScreen[SweepRequest | SavedRun | None]):
    BINDINGS = [("escape", "dismiss_dialog", "Close")]

    def __init__(self, quick_plan: SweepPlan, full_plan: SweepPlan, plain: str, draft: str) -> None:
        super().__init__()
        self.quick_plan, self.full_plan = quick_plan, full_plan
        self.plain, self.draft = plain, draft

    def compose(self) -> ComposeResult:
        plan = self.quick_plan
        with Vertical(id="sweep-dialog"):
            yield Static(
                "Sweep: plain against draft at each batch (draft lengths, n-gram or classes: multi-arm)",
                id="dialog-title",
            )
            with Horizontal(id="dialog-presets"):
                yield Button("Quick (about a minute)", id="preset-quick", variant="primary", compact=True)
                yield Button("Full protocol", id="preset-full", compact=True)
            with Grid(id="dialog-grid"):
                yield Label("batches")
                yield Input(",".join(map(str, plan.batches)), id="batches", compact=True)
                yield Label("open-loop rates (per s)")
                yield Input(id="rates", compact=True, placeholder=RATES_HINT)
                yield Label("tokens per answer")
                yield Input(str(plan.max_tokens), id="tokens", type="integer", compact=True)
                yield Label("passes")
                yield Input(str(plan.passes), id="passes", type="integer", compact=True)
                yield Label("prompts")
                yield Select(
                    [(name, name) for name in sorted(BUILT_IN)] + [(f"{CLASSES} (classes)", CLASSES)],
                    value=plan.prompts.name if plan.prompts.name in BUILT_IN else "power",
                    id="prompts",
                    allow_blank=False,
                    compact=True,
                )
                for arm, value, placeholder in (
                    ("plain", self.plain, PLAIN_HINT),
                    ("draft", self.draft, DRAFT_HINT),
                ):
                    yield Label(f"{arm} arm (URL or command)")
                    yield Input(redact_command(value), id=arm, compact=True, placeholder=placeholder)
                yield Label("fresh server per point")
                yield Checkbox(value=plan.fresh_server, id="fresh", compact=True)
                yield Label("refine around the crossover")
                yield Checkbox(value=plan.refine, id="refine", compact=True)
                yield Label("draft lengths (more arms)")
                yield Input(
                    id="draft-lengths",
                    compact=True,
                    placeholder="e.g. 2,4,8: an arm each, from the draft command",
                )
                yield Label("n-gram arm")
                yield Checkbox(value=False, id="ngram", compact=True)
                yield Label("or show a saved run")
                yield Input(id="saved-run", compact=True, placeholder="a folder spectop sweep wrote")
            yield Static("", id="dialog-error")
            with Horizontal(id="dialog-buttons"):
                yield Button("Run", id="dialog-run", variant="success", compact=True)
                yield Button("Show saved run", id="dialog-show", compact=True)
                yield Button("Cancel", id="dialog-cancel", compact=True)

    def _fill(self, plan: SweepPlan) -> None:
        self.query_one("#batches", Input).value = ",".join(map(str, plan.batches))
        self.query_one("#tokens", Input).value = str(plan.max_tokens)
        self.query_one("#passes", Input).value = str(plan.passes)

    @on(Button.Pressed, "#preset-quick")
    def use_quick(self) -> None:
        self._fill(self.quick_plan)

    @on(Button.Pressed, "#preset-full")
    def use_full(self) -> None:
        self._fill(self.full_plan)

    @on(Button.Pressed, "#dialog-cancel")
    def action_dismiss_dialog(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#dialog-run")
    @on(Input.Submitted)
    def submit_request(self, event: Button.Pressed | Input.Submitted) -> None:
        saved = isinstance(event, Input.Submitted) and event.input.id == "saved-run"
        try:
            self.dismiss(self.saved_run() if saved else self.request())
        except (SpectopError, ValueError) as exc:
            self.query_one("#dialog-error", Static).update(Text(f"⚠ {exc}"))  # never read as markup

    @on(Button.Pressed, "#dialog-show")
    def show_saved_run(self) -> None:
        try:
            self.dismiss(self.saved_run())
        except SpectopError as exc:
            self.query_one("#dialog-error", Static).update(Text(f"⚠ {exc}"))

    def saved_run(self) -> SavedRun:
        """The run in the saved-run field, summarized from its files (a few small files: read here)."""
        folder = self.query_one("#saved-run", Input).value.strip()
        if not folder:
            raise SpectopError("no saved run given", "type the folder spectop sweep printed")
        run_dir = Path(folder).expanduser()
        return SavedRun(run_dir, summarize_saved(run_dir))

    def request(self) -> SweepRequest:
        """The sweep as set in the fields; a bad field raises with a message shown in the dialog."""
        value = lambda wid: self.query_one(wid, Input).value.strip()  # noqa: E731
        tokens, passes = value("#tokens"), value("#passes")
        rates, arrivals = open_loop_field(value("#rates"))
        batches = parse_batches(value("#batches")) if value("#batches") or not rates else ()
        base = self.quick_plan if self.quick_plan.batches == batches else self.full_plan
        prompts = str(self.query_one("#prompts", Select).value)
        lengths, ngram = value("#draft-lengths"), self.query_one("#ngram", Checkbox).value
        classes = load_classes(prompts) if lengths or ngram or prompts == CLASSES else None
        plan = replace(
            base,
            batches=batches,
            rates=rates,
            arrivals=arrivals,
            max_tokens=int(tokens) if tokens else base.max_tokens,
            passes=int(passes) if passes else base.passes,
            prompts=classes[0] if classes else load_prompts(prompts),
            fresh_server=self.query_one("#fresh", Checkbox).value,
            refine=self.query_one("#refine", Checkbox).value,
        )
        plain_url, plain_cmd = parse_arm(restore(value("#plain"), self.plain))
        draft_url, draft_cmd = parse_arm(restore(value("#draft"), self.draft))
        if classes is None:
            return SweepRequest(plan, make_arms(plain_url, draft_url, plain_cmd, draft_cmd))
        named = [f"draft={draft_url}"] if draft_url else []
        arms = make_named_arms(plain_url, plain_cmd, named, draft_cmd, lengths or None, ngram)
        return SweepRequest(plan, arms, ArmsPlan(plan, tuple(a.name for a in arms[1:]), classes))
