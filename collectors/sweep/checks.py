"""Every point is checked and flagged, never silently dropped or silently trusted.

Which flags keep a point out of the verdict is one table, `EXCLUDING`, with the reason for each;
a flag about a pass at a batch (`plain-drift`) excludes that pass's points there, not only the
point that carries it. The idle baseline is checked too (`idle_flag`): an idle window the meter
did not cover, one shorter than its update periods allow, or one the meter got wrong gives no
baseline. A broken meter never passes as a measurement: a window it covered is still checked for
a stuck value, a counter that ran back and a power its devices cannot draw
(collectors/meters/plausible.py); without a meter a point is `no-meter`, never `meter-gap`. A void
point's message fits its arm: a draft model that drafted nothing is a setup fault (`-md` without
`--spec-type`), n-gram copying that drafted nothing found nothing to copy, which is no fault.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from collectors.meters.window import WindowEnergy
from collectors.servers import registry
from collectors.sweep.open_loop import late_sends_flag
from collectors.sweep.point import Flag, SweepPoint
from collectors.sweep.schedule_check import K0, SCHEDULED

Row = SweepPoint


def flag(code: str, message: str) -> Flag:
    return Flag(code, message)


def point_flags(
    row: Row, max_tokens: int, meter_method: str, energy: WindowEnergy | None = None
) -> list[Flag]:
    """Flags a point earns on its own: void or unknown drafting, low concurrency, early stops,
    meter trouble (`energy`: the window the meter measured; `meter_method` "none" without a
    meter), other traffic."""
    batch = row.batch or len(row.window.requests)  # an open-loop point: the requests it sent
    flags = drafting_flags(row)
    flags += concurrency_flags(row)
    errors = [r for r in row.window.requests if r.error]
    if errors:
        flags.append(flag("request-errors", f"{len(errors)} of {batch} requests failed: {errors[0].error}"))
    short = [r for r in row.window.requests if not r.error and (r.committed_tokens or 0) < max_tokens]
    if short:
        flags.append(
            flag("early-stop", f"{len(short)} of {batch} requests stopped before {max_tokens} tokens")
        )
    if meter_method == "none":
        flags.append(flag("no-meter", "no power meter: energy not measured"))
    elif not row.energy.energy_covered:
        flags.append(flag("meter-gap", "the meter's samples do not cover the whole window"))
    if energy is not None:
        flags += [flag(p.code, p.message) for p in energy.problems(work_ran=row.window.committed_tokens > 0)]
    if row.energy.short_window:
        flags.append(
            flag(
                "short-window",
                f"the {row.window.window_s:.2f} s window is shorter than 10 meter "
                f"update periods ({row.energy.meter_update_period_s:g} s each): "
                "use longer answers (--tokens)",
            )
        )
    if meter_method == "estimate":
        flags.append(flag("estimate", ESTIMATE_MESSAGE))
    traffic = other_traffic_flag(row)
    return flags + ([traffic] if traffic else []) + late_sends_flag(row)


ESTIMATE_MESSAGE = (
    "energy is a CPU-load estimate, not a measurement: measure it with --meter rapl (this machine's "
    "CPU package, as root) or a remote exporter's page, --meter dcgm=URL or --meter node=URL"
)
# Flags every point of a run carries alike (the meter's): a display says them once, not per point.
RUN_WIDE = frozenset({"estimate", "no-meter"})


def concurrency_flags(row: Row) -> list[Flag]:
    """Too few requests at once, by the server's requests per decode, else by its busy slots' peak.

    A peak below the mean is no figure (a peak is never below its mean: the slots were polled
    between decodes, or not at all): the concurrency is unknown then, and no advice is given. The
    slot advice is given only when the server's slot count does not already cover the batch. An
    open-loop point sets no concurrency: it has what its arrivals gave (`in_flight`)."""
    if row.load is not None:
        return []
    batch = row.batch
    server_mean = row.window.server_busy_per_decode
    busy_max = row.window.concurrency_max
    # 0.05: the mean is printed to one decimal; 2.0 beside a peak of 2 is no contradiction
    if server_mean is not None and busy_max is not None and busy_max + 0.05 < server_mean:
        return [
            flag(
                "concurrency-unknown",
                f"the server's counts disagree: {server_mean:.1f} requests per decode on average, "
                f"yet at most {busy_max} busy at once when polled; how many ran at once is unknown",
            )
        ]
    if server_mean is not None:
        if server_mean < 0.75 * batch:
            return [
                flag(
                    "concurrency",
                    f"the server ran {server_mean:.1f} requests per decode on average, not {batch}"
                    + _slots_advice(row),
                )
            ]
        return []
    if busy_max is None:
        return [flag("concurrency-unknown", "the server did not say how many requests it ran at once")]
    if busy_max < batch:
        return [
            flag(
                "concurrency",
                f"the server ran at most {busy_max} requests at once, not {batch}" + _slots_advice(row),
            )
        ]
    return []


def _slots_advice(row: Row) -> str:
    slots = row.server.slots_total if row.server else None
    if slots is not None and slots >= row.batch:
        return f" (it has {slots} slots: something else held requests back, e.g. other traffic)"
    return " (too few slots? start it with -np >= the batch)"


def copies_ngrams(row: Row) -> bool:
    """Whether the point's arm drafts by n-gram copying: its name or its server's command says so
    (each server's n-gram setting names it: collectors/servers/<name>/advice.py)."""
    command = (row.server.command if row.server else None) or ""
    return "ngram" in row.arm.lower() or "ngram" in command.lower()


def void_message(row: Row) -> str:
    """Why a drafting point drafted nothing, and what to do. A draft model that never drafts is a
    setup fault (a dialect's `void_draft_hint` says how it is fixed); n-gram copying drafts only where
    the text repeats, so on prompts with nothing to copy drafting nothing is what it does."""
    if copies_ngrams(row):
        return (
            f"the {row.arm} arm drafted nothing: n-gram copying found no repeated text to copy in "
            "these prompts (it drafts where the answer repeats the prompt, as in edits); the point "
            "measures plain decoding, and counts as measured if the arm drafts on another class"
        )
    return f"the {row.arm} arm drafted nothing: a void point ({registry.hints('void_draft_hint')})"


def drafting_flags(row: Row) -> list[Flag]:
    """A drafting point (any arm but plain, k0 and scheduled) that drafted nothing is void; one whose
    server gave no counts is unknown."""
    if row.arm == "plain":
        return []
    if row.window.drafted == 0 and row.arm in (K0, SCHEDULED):
        return []  # speculation configured, nothing drafted: what K = 0 is, and a schedule's "off"
    if row.window.drafted == 0:
        return [flag("void", void_message(row))]
    flags = []
    if row.window.drafted is None:
        flags.append(
            flag(
                "drafting-unknown",
                "the server reported no drafted or accepted counts, per request or on /metrics "
                f"({registry.hints('no_counts_hint')}): acceptance and width are unknown",
            )
        )
    if not row.window.steps_exact and row.window.mean_advance is not None:
        flags.append(
            flag(
                "steps-inferred",
                "G is read from stream bursts, not the server's step counts: under load bursts "
                "split and merge, so G may be off",
            )
        )
    return flags


def other_traffic_flag(row: Row) -> Flag | None:
    """The server generated more (or fewer) tokens than spectop's requests, beyond its rounding."""
    server_tokens = row.window.server_tokens
    tolerance = row.window.server_tokens_tolerance or 0
    if server_tokens is None or abs(server_tokens - row.window.committed_tokens) <= tolerance:
        return None
    rounded = f" (± {tolerance}: its counters are printed rounded)" if tolerance else ""
    return flag(
        "other-traffic",
        f"the server generated {server_tokens} tokens in the window{rounded}, "
        f"spectop's requests {row.window.committed_tokens}: other traffic was running",
    )


def mismatch_flag(row: Row, reference: Row | None) -> Flag | None:
    """Plain and draft must produce the same text at temperature 0, request by request."""
    if reference is None:
        return None
    mine = [r.text_sha256 for r in row.window.requests]
    theirs = [r.text_sha256 for r in reference.window.requests]
    differing = sum(1 for a, b in zip(mine, theirs) if a != b)
    if differing == 0:
        return None
    return flag(
        "output-mismatch", f"{differing} of {len(mine)} outputs differ from the plain arm's at temperature 0"
    )


def drift_flag(after: Row, before: Row | None, limit: float) -> Flag | None:
    """Plain measured after draft should agree with plain before it (note 25, collectors/docs/note25.md:
    within 1 %): in mJ/token, and in tok/s where a side has no energy (no meter)."""
    if before is None:
        return None
    if before.energy.mj_per_token and after.energy.mj_per_token:
        drift, figure = after.energy.mj_per_token / before.energy.mj_per_token - 1.0, "mJ/token"
    elif before.tok_s and after.tok_s:
        drift, figure = after.tok_s / before.tok_s - 1.0, "tok/s"
    else:
        return None
    if abs(drift) <= limit:
        return None
    return flag(
        "plain-drift",
        f"plain after draft reads {100 * drift:+.1f} % {figure} against plain before "
        f"(limit {100 * limit:.0f} %): the machine was not steady",
    )


# Which flags keep a point out of the summary's ratios, crossover and recommendation, and why
# (collectors/docs/sweep.md, "Which points count"). Such a point stays in points.jsonl and in the table,
# marked. Flags not named here are warnings: the point counts and the flag is shown beside it.
EXCLUDING: Mapping[str, str] = MappingProxyType(
    {
        "void": "the draft arm drafted nothing: the point measures plain decoding, not drafting",
        "concurrency": "the server ran fewer requests at once than B: the point belongs to a lower batch",
        "request-errors": "some requests failed, so fewer than B ran: a different concurrency point",
        "early-stop": "requests stopped before the fixed length: the batch thinned inside the window",
        "meter-gap": "the meter did not cover the window: its energy is a lower bound, not a value",
        "other-traffic": "the server did other work in the window: the joules are not these tokens' alone",
        "output-mismatch": "draft and plain outputs differ at temperature 0: the arms did different work "
        "(the reviewed paper's Algorithm 2 drops such pairs)",
        "plain-drift": "plain before and after the draft point disagree: the machine was not steady, so "
        "that pass at that batch has no baseline",
        "estimate": "the energy is a CPU-load model, not a measurement",
        "no-meter": "no energy was measured",
        "meter-stale": "the meter's value stood still while the server worked (a stuck sensor, a cached "
        "page): its joules are not this window's",
        "meter-backwards": "the meter's counter ran back inside the window: the energy of that stretch is missing",
        "meter-implausible": "the meter reads more power than its devices can draw: a counter glitch, not a measurement",
    }
)
# Kept as warnings: `short-window` (the meter's lag is at most about a tenth of such a window, and
# it lags both arms at a batch alike: rough, not wrong) and `concurrency-unknown` (the server
# cannot say; excluding it would leave such servers with no verdict at all).
PASS_WIDE = frozenset({"plain-drift"})  # excludes every point of its pass at its batch
# Flags that only say a point has no energy: its speed still counts (a speed-only verdict).
ENERGY_ONLY = frozenset({"no-meter"})


def for_speed(codes: tuple[str, ...]) -> tuple[str, ...]:
    """The excluding codes that keep a point's speed out too."""
    return tuple(c for c in codes if c not in ENERGY_ONLY)


def exclusions(rows: Sequence[Row]) -> list[tuple[str, ...]]:
    """For each row, the excluding flag codes that keep it out of the verdict (empty: it counts)."""
    own = [tuple(sorted(r.codes.intersection(EXCLUDING))) for r in rows]
    pass_wide: dict[tuple[int | None, int, float | None, str | None], set[str]] = {}
    for r, codes in zip(rows, own):
        # a multi-arm sweep brackets each prompt class apart: its drift stays in its class
        block = (r.pass_index, r.batch, r.rate_rps, r.prompt_class)
        pass_wide.setdefault(block, set()).update(PASS_WIDE.intersection(codes))
    return [
        tuple(sorted(set(codes) | pass_wide[(r.pass_index, r.batch, r.rate_rps, r.prompt_class)]))
        for r, codes in zip(rows, own)
    ]


def idle_flag(window: WindowEnergy) -> Flag | None:
    """An idle window the meter did not cover, one too short for its update period, or one the meter
    got wrong (stuck, ran back, impossible power: `idle-` before the point flag's code) is no baseline."""
    if not window.covered:
        return flag(
            "idle-meter-gap",
            "the meter's samples do not cover the idle window: no idle baseline, net figures left out "
            "(check the meter: spectop doctor)",
        )
    problems = window.problems(work_ran=False)
    if problems:
        return flag(
            f"idle-{problems[0].code}",
            f"{problems[0].message} (idle window): no idle baseline, net figures left out "
            "(check the meter: spectop doctor)",
        )
    if window.short_window:
        return flag(
            "idle-short",
            f"the {window.t1_s - window.t0_s:.2f} s idle window is shorter than 10 meter update periods "
            f"({window.update_period_s:g} s each): no idle baseline, net figures left out (use a longer --idle)",
        )
    return None
