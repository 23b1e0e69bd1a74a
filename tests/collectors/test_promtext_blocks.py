"""A server's /metrics page parsed family by family, a family parsed again only when its lines changed
(promtext.PageBlocks): the samples are always those of parsing the whole page, and what stood still
since the last page, or only counted on (new values, the same names and labels), is not handed to
prometheus_client's parser again."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors import promtext
from tests.support.answer_strategies import METRIC_NAMES, samples
from tests.support.captures import read_text
from tests.support.fake_servers import VllmEngine, vllm_page

LLAMA_PAGES = [
    read_text(f"{arm}.metrics.{when}.txt")
    for arm in ("draft-simple", "plain")
    for when in ("before", "busy", "after")
]
ENGINE = VllmEngine(
    generated=1200, prompt=300, drafts=100, draft_tokens=400, accepted=310, per_pos=(90, 80, 70, 70)
)
VLLM_PAGES = [
    vllm_page([ENGINE]),
    vllm_page(
        [
            ENGINE.plus(
                VllmEngine(
                    generated=40,
                    drafts=10,
                    draft_tokens=40,
                    accepted=31,
                    per_pos=(9, 8, 7, 7),
                    running=2,
                    itl=40,
                )
            )
        ]
    ),
]


@pytest.fixture
def parses(monkeypatch) -> list[str]:
    """The texts handed to prometheus_client's parser."""
    seen: list[str] = []
    real = promtext.text_string_to_metric_families
    monkeypatch.setattr(
        promtext, "text_string_to_metric_families", lambda text: (seen.append(text), real(text))[1]
    )
    return seen


def test_pages_in_any_order_give_the_whole_pages_samples():
    blocks = promtext.PageBlocks()
    for text in [*LLAMA_PAGES, *VLLM_PAGES, *reversed(LLAMA_PAGES), VLLM_PAGES[0], VLLM_PAGES[0]]:
        assert promtext.parse(text, blocks) == promtext.parse(text)


def test_only_the_families_whose_lines_changed_beyond_their_values_are_parsed_again(parses):
    blocks = promtext.PageBlocks()
    before, after = VLLM_PAGES
    promtext.parse(before, blocks)
    families = len(parses)
    assert families >= 20  # a family per piece: the page's HELP/TYPE runs
    parses.clear()
    promtext.parse(before, blocks)
    assert parses == []  # the same page: nothing parsed
    moved = promtext.parse(after, blocks)
    assert parses == []  # counters moved, histograms filled: only values changed
    assert moved == promtext.parse(after)
    assert moved["vllm:generation_tokens_total"] != promtext.parse(before)["vllm:generation_tokens_total"]
    parses.clear()
    second_model = after.replace('model_name="', 'model_name="second-', 1)
    assert promtext.parse(second_model, blocks) == promtext.parse(second_model)
    # that family, once more with other values (a shape not seen before), then the whole page
    assert len(parses) == 3 and all('model_name="second-' in text for text in parses[:2])
    assert len(parses[0]) < len(second_model) / 4


def test_a_llama_server_page_that_moved_is_read_without_the_parser(parses):
    blocks = promtext.PageBlocks()
    before, busy, _after = LLAMA_PAGES[:3]
    promtext.parse(before, blocks)
    parses.clear()
    assert promtext.parse(busy, blocks) == promtext.parse(busy)
    assert len(parses) == 1  # the whole-page parse above; the blocks parsed nothing


def test_junk_raises_and_the_next_page_still_parses():
    blocks = promtext.PageBlocks()
    good = LLAMA_PAGES[1]
    promtext.parse(good, blocks)
    with pytest.raises(promtext.NotAMetricsPage):
        promtext.parse(good + "<html>not a page</html>\n", blocks)
    assert promtext.parse(good, blocks) == promtext.parse(good)


def same(a: dict[str, list[promtext.Sample]], b: dict[str, list[promtext.Sample]]) -> bool:
    """Equal samples, a NaN equal to a NaN."""
    return {k: [(s.name, s.labels, repr(s.value)) for s in v] for k, v in a.items()} == {
        k: [(s.name, s.labels, repr(s.value)) for s in v] for k, v in b.items()
    }


def reads_as_whole(blocks: promtext.PageBlocks, text: str) -> None:
    """`text` read through `blocks` gives what parsing it whole gives, or is refused as that is."""
    try:
        whole = promtext.parse(text)
    except promtext.NotAMetricsPage:
        with pytest.raises(promtext.NotAMetricsPage):
            promtext.parse(text, blocks)
        return
    assert same(promtext.parse(text, blocks), whole)


def families_page(families: list[tuple[str, str, list]], values: Iterator[str] | None = None) -> str:
    """A page of families, each with its # HELP and # TYPE lines, then its samples; with `values`,
    each sample's value text is the next of them instead of its own value."""
    out = []
    for name, kind, rows in families:
        out += [f"# HELP {name} a family", f"# TYPE {name} {kind}"]
        for head, (_, _, value) in zip(sample_heads(name, rows), rows):
            out.append(f"{head} {next(values) if values is not None else repr(value)}")
    return "\n".join(out) + "\n"


family = st.tuples(
    st.sampled_from([n.removesuffix("_total") for n in METRIC_NAMES]),
    st.sampled_from(["gauge", "untyped", "counter"]),
    st.lists(samples, min_size=1, max_size=3),
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.lists(family, max_size=5, unique_by=lambda f: f[0]).map(families_page), min_size=1, max_size=4
    )
)
def test_any_run_of_pages_gives_each_pages_own_samples_or_its_own_error(pages):
    """Pages of well-formed families (a name once per page, as every exporter writes them) with any
    values; a page the whole-page parser refuses is refused here too."""
    blocks = promtext.PageBlocks()
    for text in pages:
        reads_as_whole(blocks, text)


# value texts as exporters write them, and near misses the parser refuses or reads its own way
VALUE_TEXTS = (
    st.sampled_from(
        [
            "0",
            "-0",
            "+0",
            "7",
            "1e3",
            "1E-3",
            "2.",
            ".5",
            "-1.25e+2",
            "NaN",
            "+Inf",
            "-Inf",
            "Inf",
            "nan",
            "inf",
            "1_000",
            "0x10",
            "١٢",
            "",
            "5 1700000000",
            "1.0.0",
            "+",
            "e3",
        ]
    )
    | st.floats(allow_nan=True, allow_infinity=True).map(repr)
    | st.integers(-(10**20), 10**20).map(str)
    | st.integers(0, 10**13).map(lambda ms: f"5 {ms}")  # a value, then a timestamp in ms
    | st.integers(0, 2).map(lambda n: f"{n} {n}")  # a timestamp equal to the value
    | st.integers(0, 2).map(lambda n: f'1 # {{trace_id="a"}} {n}')  # an exemplar after the value
)


@pytest.mark.parametrize(
    "runs",
    [["5 5", "5 6"], ['1 # {trace_id="a"} 1', '1 # {trace_id="a"} 2'], ["7", "8", "NaN", "-0", "+Inf"]],
)
def test_a_timestamp_or_an_exemplar_is_not_read_as_the_value(runs):
    blocks = promtext.PageBlocks()
    for value in runs:
        text = f"# TYPE x gauge\nx {value}\n"
        assert same(promtext.parse(text, blocks), promtext.parse(text))


@pytest.mark.slow  # the quick loop keeps the timestamp and exemplar cases above
@settings(max_examples=200, deadline=None)
@given(
    st.lists(family, min_size=1, max_size=4, unique_by=lambda f: f[0]),
    st.lists(st.lists(VALUE_TEXTS, min_size=12, max_size=12), min_size=2, max_size=4),
)
def test_the_same_families_with_new_value_texts_read_as_the_whole_page(families, value_runs):
    """One page's names and labels, polled again and again with other values written in any way:
    each page reads as parsing it whole does, or is refused as that refuses it."""
    blocks = promtext.PageBlocks()
    for texts in value_runs:
        reads_as_whole(blocks, families_page(families, iter(texts)))


def sample_heads(name: str, rows: list) -> list[str]:
    """Each row's name and labels, as a sample line starts."""
    heads = []
    for _, labels, _ in rows:
        inner = ",".join(f'{k}="{v}"' for k, v in labels.items())
        heads.append(f"{name}{{{inner}}}" if inner else name)
    return heads
