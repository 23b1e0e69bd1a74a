"""Malformed, endless, silent and broken server answers give a snapshot that says so, never an
exception out of `poll`, for every dialect; "cannot reach" is said only when nothing connected."""

from __future__ import annotations

import gzip
import json

import pytest

from collectors.errors import ServerUnreachable, SpectopError
from collectors.http import STREAM_TIMEOUT, get_page, make_client
from collectors.servers import base, detect, open_collector
from collectors.servers.auto import AutoCollector
from tests.support.captures import read_json
from tests.support.fake_servers import FakeVllm, VllmEngine
from tests.support.fake_sglang import FakeSglang, SglangRank
from tests.support.fault_server import Drop, FaultServer, Hang, Reply, Script, Stream

PROPS = read_json("draft-simple.props.json")


async def poll_once(server: FaultServer, backend: str = "llama.cpp"):
    async with make_client() as client:
        return await open_collector(server.url, backend, client=client).poll()


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("total_slots", "four", "/props answered a `total_slots` that is not a whole number"),
        ("total_slots", True, "/props answered a `total_slots` that is not a whole number"),
        ("total_slots", 2.5, "/props answered a `total_slots` that is not a whole number"),
        ("model_alias", ["x"], "/props answered a `model_alias` that is not text"),
        ("build_info", {"n": 1}, "/props answered a `build_info` that is not text"),
        ("default_generation_settings", {"n_ctx": "big"}, "`default_generation_settings.n_ctx`"),
    ],
)
async def test_a_wrongly_typed_props_field_is_a_poll_that_says_which(field, value, says):
    with FaultServer({"/props": Reply({**PROPS, field: value})}) as server:
        snap = await poll_once(server)
    assert snap.status == "error" and says in snap.error
    assert "--server" in snap.fix


@pytest.mark.parametrize(
    ("slots", "says"),
    [
        ({"id": 0}, "/slots answered something that is not a list"),
        (["slot"], "/slots answered a `[0]` that is not an object"),
        ([{"n_ctx": 1024}], "/slots answered a `[0]` without `id`"),
        ([{"id": "zero"}], "/slots answered a `[0].id` that is not a whole number"),
        ([{"id": 0, "next_token": [7]}], "`[0].next_token`"),
        ([{"id": 0, "params": "x"}], "/slots answered a `[0].params` that is not an object"),
    ],
)
async def test_slots_of_the_wrong_shape_are_a_poll_that_says_so(slots, says):
    with FaultServer({"/slots": Reply(slots)}) as server:
        snap = await poll_once(server)
        async with make_client() as client:
            busy = await open_collector(server.url, "llama.cpp", client=client).busy_slots()
    assert snap.status == "error" and says in snap.error
    assert busy is None  # the sweep's concurrency sampling skips it; the poll says why


@pytest.mark.parametrize(
    ("reply", "says"),
    [
        (Reply(b"<html>not json</html>"), "/props answered something that is not JSON"),
        (
            Reply(b'{"total_slots": 4, "model_alias": "\xff\xfe"}'),
            "/props answered something that is not JSON",
        ),
        (Reply(b"[" * 100_000 + b"]" * 100_000), "/props answered something that is not JSON"),
        (Reply(b"\x1f\x8b junk", headers={"Content-Encoding": "gzip"}), "a body that cannot be decoded"),
        (
            Reply(json.dumps(PROPS).encode(), length=4096),
            "closed the connection before its answer was complete",
        ),
    ],
    ids=["html", "not-utf8", "deep-nesting", "bad-gzip", "cut-short"],
)
async def test_undecodable_props_are_a_poll_that_says_so(reply, says):
    with FaultServer({"/props": reply}) as server:
        snap = await poll_once(server)
    assert snap.status == "error" and says in snap.error
    assert "cannot reach" not in snap.error


async def test_a_gzipped_answer_is_read():
    good = Reply(gzip.compress(json.dumps(PROPS).encode()), headers={"Content-Encoding": "gzip"})
    with FaultServer({"/props": good}) as server:
        snap = await poll_once(server)
    assert snap.ok and snap.model == "tiny-target.gguf"


@pytest.mark.parametrize(
    "page",
    ["<html>", "llamacpp:tokens_predicted_total{ 3\n", "llamacpp:tokens_predicted_total abc\n"],
)
async def test_junk_metrics_leave_metrics_unknown_and_the_poll_ok(page):
    with FaultServer({"/metrics": Reply(page, content_type="text/plain")}) as server:
        snap = await poll_once(server)
    assert snap.ok and snap.metrics_status.startswith("unreadable: ")
    assert snap.tokens_predicted_total is None and snap.model == "tiny-target.gguf"


async def test_nan_and_infinite_counters_read_as_absent():
    page = "llamacpp:tokens_predicted_total NaN\nllamacpp:spec_decode_num_draft_tokens_total +Inf\n"
    with FaultServer({"/metrics": Reply(page, content_type="text/plain")}) as server:
        async with make_client() as client:
            collector = open_collector(server.url, "llama.cpp", client=client)
            first, second = await collector.poll(), await collector.poll()
    assert first.ok and second.ok and second.window_s is not None
    assert second.tokens_predicted_total is None and second.drafted_total is None


async def test_an_endless_page_is_cut_off():
    chunk = b"llamacpp:tokens_predicted_total 1\n" * 1000
    with FaultServer(
        {"/metrics": Stream(lambda: iter(lambda: chunk, None), content_type="text/plain")}
    ) as server:
        async with make_client() as client:
            with pytest.raises(SpectopError, match="sent a page longer than 1 MB"):
                await get_page(client, server.url + "/metrics", max_bytes=1 << 20)
        snap = await poll_once(server)  # the whole poll, with the default bound
    assert snap.status == "error" and "/metrics sent a page longer than 8 MB" in snap.error


async def test_a_trickling_page_is_cut_off():
    with FaultServer({"/props": Stream(lambda: iter(lambda: b" ", None), delay_s=0.05)}) as server:
        async with make_client() as client:
            with pytest.raises(SpectopError, match=r"/props was still sending its page after 0.5 s"):
                await get_page(client, server.url + "/props", max_s=0.5)


@pytest.mark.slow
async def test_a_server_that_never_answers_is_a_timeout_not_unreachable():
    with FaultServer({"/slots": Hang()}) as server:
        snap = await poll_once(server)
    assert snap.status == "error"
    assert "/slots accepted the connection but did not answer within 3 s" in snap.error
    assert "cannot reach" not in snap.error


@pytest.mark.slow
async def test_detection_of_a_hanging_server_is_a_timeout_not_unreachable():
    with FaultServer({"/props": Hang()}) as server:
        async with make_client() as client:
            with pytest.raises(SpectopError, match="did not answer within 3 s") as caught:
                await detect(server.url, client)
    assert not isinstance(caught.value, ServerUnreachable)


@pytest.mark.slow
async def test_a_hanging_server_is_a_poll_timeout_also_on_a_client_made_for_streams():
    # the sweep and the dashboard's probe poll with the client they stream with, whose read
    # timeout is the 300 s a long prefill may need: a poll must still give up after 3 s
    with FaultServer({"/slots": Hang()}) as server:
        async with make_client(None, STREAM_TIMEOUT) as client:
            snap = await open_collector(server.url, "llama.cpp", client=client).poll()
    assert snap.status == "error"
    assert "/slots accepted the connection but did not answer within 3 s" in snap.error
    with FaultServer({"/props": Hang()}) as server:
        async with make_client(None, STREAM_TIMEOUT) as client:
            with pytest.raises(
                SpectopError, match="/props accepted the connection but did not answer within 3 s"
            ):
                await detect(server.url, client)


async def test_a_refused_connection_is_unreachable():
    server = FaultServer()
    server.stop()  # the port is closed: nothing listens
    snap = await AutoCollector(server.url).poll()
    assert snap.status == "unreachable" and snap.error.startswith(f"cannot reach {server.url} ")


async def test_a_dropped_answer_says_the_server_hung_up():
    with FaultServer({"/metrics": Drop()}) as server:
        snap = await poll_once(server)
    assert snap.status == "error" and "/metrics closed the connection before" in snap.error


async def test_a_kept_alive_connection_dropped_by_the_server_is_tried_again():
    slots = Reply(read_json("draft-simple.slots.idle.json"))
    with FaultServer({"/slots": Script(slots, Drop(), slots)}) as server:
        async with make_client() as client:
            collector = open_collector(server.url, "llama.cpp", client=client)
            first = await collector.poll()
            second = await collector.poll()  # the second /slots goes out on a kept-alive connection
        assert server.hits["/slots"] == 3
    assert first.ok and second.ok


async def test_props_is_read_once_per_server_start_and_every_identity_polls():
    # /props (model, build, slot count) is fixed for a server's life: read on the first poll, after
    # a failed poll and every IDENTITY_POLLS polls, never on the polls between
    slots = Reply(read_json("draft-simple.slots.idle.json"))
    with FaultServer({"/slots": Script(*[slots] * 3, Reply(b"\xff\xfe["), slots)}) as server:
        async with make_client() as client:
            collector = open_collector(server.url, "llama.cpp", client=client)
            snaps = [await collector.poll() for _ in range(3)]
            assert server.hits["/props"] == 1 and all(
                s.ok and s.slots_total == PROPS["total_slots"] for s in snaps
            )
            failed = await collector.poll()  # /slots not JSON: the next poll reads /props again
            assert not failed.ok and server.hits["/props"] == 1
            snaps = [await collector.poll() for _ in range(base.IDENTITY_POLLS + 1)]
            assert server.hits["/props"] == 3  # after the failure, then IDENTITY_POLLS polls later
            assert all(s.ok and s.model == PROPS["model_alias"] for s in snaps)


async def test_one_bad_poll_does_not_end_the_window_or_the_collector():
    with FaultServer() as server:
        async with make_client() as client:
            collector = open_collector(server.url, "llama.cpp", client=client)
            assert (await collector.poll()).ok
            server.set("/slots", Reply([{"id": "zero", "is_processing": "no"}]))
            assert (await collector.poll()).status == "error"
            server.set("/slots", Reply(read_json("draft-simple.slots.idle.json")))
            back = await collector.poll()
    assert back.ok and back.window_s is not None  # against the last good poll


async def test_sglang_odd_fields_read_as_unknown():
    info = {
        "speculative_algorithm": "EAGLE",
        "internal_states": 7,
        "context_length": "long",
        "max_running_requests": True,
        "version": ["0.5"],
    }
    loads = {"loads": [{"num_running_reqs": "3", "speculative": "yes"}, 5]}

    def routes(path: str, query: dict[str, str]):
        if path in ("/server_info", "/get_server_info"):
            return 200, "application/json", json.dumps(info).encode()
        if path == "/v1/loads":
            return 200, "application/json", json.dumps(loads).encode()
        if path == "/v1/models":  # the context length is read here (or the metrics gauge), not in info
            return 200, "application/json", b'{"data": [{"id": "m", "max_model_len": "long"}]}'
        return FakeSglang([SglangRank()], enable_metrics=False)(path, query)

    with FaultServer(base=routes) as server:
        snap = await poll_once(server, "sglang")
    assert snap.ok and snap.build is None and snap.n_ctx_slot is None and snap.slots_total is None


async def test_sglang_nan_startup_time_is_no_restart_at_every_poll():
    info = json.dumps(
        {"startup_time": float("nan"), "context_length": 4096}
    ).encode()  # NaN, as Python writes it

    def routes(path: str, query: dict[str, str]):
        if path in ("/server_info", "/get_server_info"):
            return 200, "application/json", info
        return FakeSglang([SglangRank()])(path, query)

    with FaultServer(base=routes) as server:
        async with make_client() as client:
            collector = open_collector(server.url, "sglang", client=client)
            await collector.poll()
            snap = await collector.poll()
    assert snap.ok and not snap.restarted and snap.window_s is not None


async def test_sglang_loads_of_the_wrong_shape_say_so():
    with FaultServer({"/v1/loads": Reply({"loads": 5})}, base=FakeSglang([SglangRank()])) as server:
        snap = await poll_once(server, "sglang")
    assert snap.ok and snap.slots_status == "unreadable: not a list of `loads`"


async def test_vllm_identity_of_the_wrong_shape_reads_as_unknown():
    faults = {
        "/version": Reply(["0.33"]),
        "/v1/models": Reply({"data": {"id": 5}}),
        "/server_info": Reply(
            {"vllm_config": {"model_config": [], "scheduler_config": {"max_num_seqs": "x"}}}
        ),
    }
    with FaultServer(faults, base=FakeVllm([VllmEngine(running=1)])) as server:
        snap = await poll_once(server, "vllm")
    assert snap.ok and snap.build is None and snap.slots_total is None and snap.n_ctx_slot is None


async def test_vllm_position_labels_that_are_not_numbers_are_left_out():
    page = FakeVllm([VllmEngine(per_pos=(5, 3))])("/metrics", {})[2].decode()
    page = page.replace('position="1"', 'position="one"')
    with FaultServer(
        {"/metrics": Reply(page, content_type="text/plain")}, base=FakeVllm([VllmEngine()])
    ) as server:
        snap = await poll_once(server, "vllm")
    assert snap.ok and snap.per_position_total == (5,)
