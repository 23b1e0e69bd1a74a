"""Prometheus exposition text → plain samples, through prometheus_client's own parser.

One parser and one `Sample` type for every page spectop reads: server /metrics pages and power
exporters alike. Pitfalls handled: the parser appends `_total` to counter samples (a name is kept
as the parser gives it, so callers compare full names); junk text raises ValueError, never a
half-read page, whatever the parser tripped on (`NotAMetricsPage`, a SpectopError too, since the
text comes from a server or an exporter).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

from collectors.errors import SpectopError


class NotAMetricsPage(SpectopError, ValueError):
    """Text that is not a Prometheus metrics page; its message is what the parser found wrong."""


@dataclass(frozen=True, slots=True)
class Sample:
    """One line of a metrics page: full sample name (`..._total`, `..._count` kept), labels, value."""

    name: str
    labels: Mapping[str, str]
    value: float


def samples(text: str, families: Sequence[str] | None = None) -> Iterator[Sample]:
    """Every sample of a page, in page order; with `families` (name prefixes), only theirs, and only
    their lines are parsed: a 340-line DCGM page of which two families are read costs what those
    lines cost. Raises NotAMetricsPage (a ValueError) when the text is not such a page."""
    if families is not None:
        text = only_families(text, tuple(families))
    try:
        for family in text_string_to_metric_families(text):
            for s in family.samples:
                yield Sample(s.name, dict(s.labels), float(s.value))
    except NotAMetricsPage:
        raise
    except Exception as exc:  # the parser's own errors are not all ValueErrors: junk is junk
        raise NotAMetricsPage(str(exc) or type(exc).__name__) from exc


def only_families(text: str, prefixes: tuple[str, ...]) -> str:
    """The lines of `text` (samples, and their # HELP and # TYPE) whose metric name starts with one
    of `prefixes`."""
    kept = []
    for line in text.split("\n"):  # the format's only line end (a label value may hold a \r)
        if line.startswith("#"):
            words = line.split(maxsplit=3)
            name = words[2] if len(words) > 2 and words[1] in ("HELP", "TYPE") else ""
        else:
            name = line
        if name.startswith(prefixes):
            kept.append(line)
    return "\n".join(kept) + "\n" if kept else ""


def without_buckets(text: str, keep: tuple[str, ...] = ()) -> str:
    """`text` without the `_bucket` lines of histograms other than `keep` (family names). They are
    most of a serving engine's page (a vLLM page: 250 of 393 lines) and a dialect reads few of them;
    the histograms' `_count` and `_sum` stay."""
    if "_bucket" not in text:  # no histogram at all (llama-server's page): nothing to walk
        return text
    kept = [
        line
        for line in text.split("\n")  # the format's only line end (a label value may hold a \r)
        if not _bucket_of(line) or _bucket_of(line) in keep
    ]
    return "\n".join(kept)


def _bucket_of(line: str) -> str:
    """The histogram whose bucket `line` is, or ""."""
    name = line.split("{", 1)[0].split(" ", 1)[0]
    return name[: -len("_bucket")] if name.endswith("_bucket") and not line.startswith("#") else ""


def parse(text: str, blocks: PageBlocks | None = None) -> dict[str, list[Sample]]:
    """Samples grouped by their full name; with `blocks`, the families unchanged since its last page
    are not parsed again. Raises ValueError on junk."""
    by_name: dict[str, list[Sample]] = defaultdict(list)
    for sample in samples(text) if blocks is None else blocks.samples(text):
        by_name[sample.name].append(sample)
    return dict(by_name)


class PageBlocks:
    """One server's page, family by family, kept from one read to the next. A family whose lines
    (its # HELP and # TYPE and its samples) read the same as in the last page is not parsed again;
    one whose lines differ only in their values (a counter that moved) is not handed to the parser
    either: its names and labels are the last parse's, and each new value is read by `float` when
    it is a plain number, NaN or ±Inf (anything else goes to the parser). Most of a serving engine's
    page stands still between two polls a second apart (the simulated vLLM's under two streams: 43
    of its 51 families), the rest only counts, and parsing was most of a poll's cost."""

    def __init__(self) -> None:
        self._parsed: dict[str, list[Sample]] = {}
        self._shapes: dict[tuple[str, ...], list[Sample]] = {}

    def samples(self, text: str) -> list[Sample]:
        """Every sample of `text`, as `samples(text)` gives them. Raises NotAMetricsPage on junk."""
        kept: dict[str, list[Sample]] = {}
        shapes: dict[tuple[str, ...], list[Sample]] = {}
        out: list[Sample] = []
        for block in family_blocks(text):
            rows = kept.get(block)
            if rows is None:
                rows = self._parsed.get(block)
            shape, values = value_free(block)
            known = self._shapes.get(shape) if shape is not None else None
            if rows is None and known is not None:
                rows = revalued(known, values)
            if rows is None:
                rows = list(samples(block))
            kept[block] = rows
            if shape is not None and shape not in shapes:
                if known is not None or values_are_read_alone(shape, values, rows):
                    shapes[shape] = rows
            out += rows
        self._parsed, self._shapes = kept, shapes  # the last page's only, not every value ever seen
        return out


# A sample's value as the exposition format writes it (no "_", no spaces, no timestamp after it).
PLAIN_VALUE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|NaN|[+-]?Inf")


def value_free(block: str) -> tuple[tuple[str, ...] | None, list[str]]:
    """A family block's lines with each sample's value cut off (its shape), and the values cut off;
    None for a shape when a sample line has no single space before a plain value."""
    shape: list[str] = []
    values: list[str] = []
    for line in block.split("\n"):
        if not line or line.startswith("#"):
            shape.append(line)
            continue
        head, space, value = line.rpartition(" ")
        if not space or not head or PLAIN_VALUE.fullmatch(value) is None:
            return None, []
        shape.append(head)
        values.append(value)
    return tuple(shape), values


def values_are_read_alone(shape: tuple[str, ...], values: list[str], rows: list[Sample]) -> bool:
    """The parser read one sample per line, each one's value from the text `value_free` cut off, and
    nothing else from it: the same lines with other values read as those values (a timestamp or an
    exemplar's value equal to the sample's would pass the first look, not this). Asked once per
    shape a page brings, not once per poll."""
    if len(rows) != len(values) or not all(
        plain_value(text) == row.value or (math.isnan(row.value) and text == "NaN")
        for row, text in zip(rows, values)
    ):
        return False
    others = ["1" if row.value == 0 else "0" for row in rows]
    lines = iter(others)
    probe = "\n".join(line if not line or line.startswith("#") else f"{line} {next(lines)}" for line in shape)
    try:
        return [row.value for row in samples(probe)] == [float(text) for text in others]
    except NotAMetricsPage:
        return False


def revalued(rows: list[Sample] | None, values: list[str]) -> list[Sample] | None:
    """`rows` (a parsed block of the same shape) with `values`; None when there is no such block."""
    if rows is None:
        return None
    return [Sample(row.name, row.labels, plain_value(text)) for row, text in zip(rows, values)]


def plain_value(text: str) -> float:
    """A PLAIN_VALUE as the parser reads it: an integer first (so "-0" is 0.0), else a float."""
    try:
        return float(int(text))
    except ValueError:
        return float(text)


def family_blocks(text: str) -> Iterator[str]:
    """`text` cut before each run of comment lines (a family's # HELP and # TYPE): each piece is a
    family's header and samples, which the parser reads the same alone as within the page."""
    lines = text.split("\n")  # the format's only line end (a label value may hold a \r)
    start = 0
    for i in range(1, len(lines)):
        if lines[i].startswith("#") and not lines[i - 1].startswith("#"):
            yield "\n".join(lines[start:i]) + "\n"
            start = i
    yield "\n".join(lines[start:])


def scalar(by_name: Mapping[str, list[Sample]], name: str) -> float | None:
    """The value of an unlabelled metric, or None when absent."""
    rows = by_name.get(name)
    return rows[0].value if rows else None
