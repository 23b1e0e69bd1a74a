"""One request's detail (Enter on a row of the Requests tab): its figures (energy, tokens per joule
and energy-delay product among them), accepted tokens per verify step as text bars, its gap
histogram and its tokens per verify step; Escape closes it.

Pitfalls handled: a request's id, model and error are the server's text, shown as plain Text and
never read as markup; a request from the server's log has no stream events (only the log's counts),
so its plots say that instead of drawing an empty or made-up histogram.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Static
from textual_plotext import PlotextPlot

from collectors.energy.attribution import Attribution
from collectors.fmt import num, pct
from collectors.requests.latency import chunk_gaps_ms
from collectors.requests.per_request import accepted_per_step_from_bursts, request_energy
from collectors.requests.record import RequestRecord
from collectors.requests.router import parse_tag
from tui.widgets.figures import count_bars

HISTOGRAM_BINS = 20


def detail_lines(r: RequestRecord, share: Attribution | None) -> list[tuple[str, str]]:
    lat = r.latency
    mj = num(share.mj_per_token if share else None, ".0f")
    if share and share.shared and share.mj_per_token is not None:
        mj += " (shared with traffic spectop did not see)"
    elif share and share.unseen_tokens and share.mj_per_token is not None:
        mj += f" (other traffic's {share.unseen_tokens:,.0f} tokens meanwhile took their share)"
    return [
        ("source", source_line(r)),
        ("model", r.model or "—"),
        ("route", r.route),
        ("tokens", f"{num(r.committed_tokens, 'd')} committed, {num(r.prompt_tokens, 'd')} prompt"),
        (
            "drafted",
            f"{num(r.draft_n, 'd')}, accepted {num(r.draft_n_accepted, 'd')} ({pct(r.acceptance, 1)})",
        ),
        ("G / width", f"{num(r.mean_advance, '.2f')} / {num(r.verified_width, '.2f')} over {r.steps} steps"),
        ("tok/s", f"{num(r.tok_s, '.1f')} (decode {num(r.decode_tok_s, '.1f')})"),
        ("mJ/token", mj),
        *energy_lines(r, share),
        ("batch", f"{num(r.concurrency_mean, '.1f')} mean, {num(r.concurrency_max, 'd')} max"),
        ("TTFT", num(lat.ttft_ms, ".0f", " ms")),
        (
            "gaps ms",
            f"p50 {num(lat.chunk_gaps.p50_ms, '.1f')}  p95 {num(lat.chunk_gaps.p95_ms, '.1f')}  "
            f"p99 {num(lat.chunk_gaps.p99_ms, '.1f')}  max {num(lat.chunk_gaps.max_ms, '.1f')}",
        ),
        ("step gaps ms", f"p95 {num(lat.step_gaps.p95_ms, '.1f')}  p99 {num(lat.step_gaps.p99_ms, '.1f')}"),
        ("error", r.error or "—"),
    ]


def energy_lines(r: RequestRecord, share: Attribution | None) -> list[tuple[str, str]]:
    """Its joules, tokens per joule and energy-delay product, once the meter covers the request."""
    figures = request_energy(
        share.energy_j if share and share.covered else None, r.committed_tokens, r.duration_s
    )
    if figures is None:
        return [("energy", "—"), ("EDP", "—")]
    mark = " (shared with traffic spectop did not see)" if share and share.shared else ""
    return [
        ("energy", f"{figures.energy_j:.2f} J, {num(figures.tokens_per_j, '.2f')} tokens/J{mark}"),
        ("EDP", f"{figures.edp_js:.2f} J·s ({figures.energy_j:.2f} J × {r.duration_s:.2f} s e2e)"),
    ]


def accepted_per_step_lines(r: RequestRecord) -> Text:
    """Verify steps by draft tokens accepted (0..K), from the stream's bursts; why not, without them."""
    out = Text()
    out.append("verify steps by tokens accepted\n", style="bold")
    if not r.latency.events:
        out.append("no stream events: the server's log\ngives this request's totals only", style="dim")
        return out
    if r.steps_exact and not r.drafted:
        out.append("nothing drafted", style="dim")
        return out
    counts = accepted_per_step_from_bursts(r.latency.burst_sizes)
    if not counts:
        out.append("no verify step yet", style="dim")
        return out
    for bar_line in count_bars([f"{j} acc" for j in range(len(counts))], counts, 16):
        out.append_text(bar_line)
        out.append("\n")
    out.append("(from stream bursts)", style="dim")
    return out


def source_line(r: RequestRecord) -> str:
    """Who sent it; routed by batch, which server served it, at what batch, and why when not the
    batch's own choice."""
    routed = parse_tag(r.tag)
    if routed is None:
        return r.tag or "client"
    note = f"; {routed.note}" if routed.note else ""
    return f"proxy, served by {routed.name} ({r.server_url}) joining batch {routed.batch}{note}"


class GapHistogram(PlotextPlot):
    def __init__(self, record: RequestRecord, **kw) -> None:
        super().__init__(**kw)
        self.record = record

    def on_mount(self) -> None:
        plt = self.plt
        plt.title("gaps between stream events (ms)")
        gaps = chunk_gaps_ms(self.record.events) if self.record.latency.events else []
        if gaps:
            plt.hist(gaps, bins=HISTOGRAM_BINS, color="cyan")
        else:
            plt.text("no stream events: the server's log gives counts only", 0, 0)
        self.refresh()


class StepTokens(PlotextPlot):
    def __init__(self, record: RequestRecord, **kw) -> None:
        super().__init__(**kw)
        self.record = record

    def on_mount(self) -> None:
        plt = self.plt
        plt.title("tokens per verify step (step 0: prefill)")
        sizes = self.record.latency.burst_sizes if self.record.latency.events else ()
        if sizes:
            steps = [float(i) for i in range(len(sizes))]
            plt.plot(steps, [float(n) for n in sizes], color="green", marker="hd")
            every = max(1, len(steps) // 8)  # a fixed few ticks: plotext's own move with the width
            plt.xticks(steps[::every], [f"{x:.0f}" for x in steps[::every]])
            plt.yticks([float(n) for n in sorted(set(sizes))], [str(n) for n in sorted(set(sizes))])
        else:
            plt.text("no stream events: the server's log gives counts only", 0, 0)
        self.refresh()


class RequestDetail(ModalScreen[None]):
    DEFAULT_CSS = """
    RequestDetail { align: center middle; }
    #request-detail {
        width: 110; max-width: 100%; height: 90%;
        border: thick $primary; background: $surface; padding: 0 1;
    }
    #request-top { height: auto; }
    #request-figures { width: 1fr; height: auto; }
    #request-steps { width: 34; height: auto; }
    #request-plots { height: 1fr; min-height: 8; }
    #request-plots > PlotextPlot { width: 1fr; }
    RequestDetail.-narrow #request-steps { display: none; }
    """
    BINDINGS = [("escape", "app.pop_screen", "Close")]
    # under 110 columns the steps' bars would squeeze the figures into wrapping: the figures keep the width
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]

    def __init__(self, record: RequestRecord, share: Attribution | None) -> None:
        super().__init__()
        self.record, self.share = record, share

    def compose(self) -> ComposeResult:
        figures = Text()
        figures.append(f"request {self.record.request_id}\n", style="bold")
        for name, value in detail_lines(self.record, self.share):
            figures.append(f"{name:>13}  ", style="dim")
            figures.append(value + "\n")
        figures.append("escape closes", style="dim")
        with Vertical(id="request-detail"):
            with Horizontal(id="request-top"):
                yield Static(figures, id="request-figures")
                yield Static(accepted_per_step_lines(self.record), id="request-steps")
            with Horizontal(id="request-plots"):
                yield GapHistogram(self.record, id="gap-histogram")
                yield StepTokens(self.record, id="step-tokens")
