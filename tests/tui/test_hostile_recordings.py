"""A recording is untrusted text, like a server's answer: one edited to carry terminal escapes or
wrongly typed fields replays and reports without a traceback, shows no escape raw, and says which
lines it skipped."""

from __future__ import annotations

import json
import resource

import pytest

from collectors.recording.reader import MAX_ENTRY_BYTES, read_recording
from tests.support.cli_runs import one_line, spectop
from tests.support.manual_clock import ManualClock
from tests.support.recordings import DEMO_RECORDING
from tui.replay import ReplayApp

TITLE = "\x1b]0;PWNED-TITLE\x07"


def hostile(tmp_path, edit) -> tuple:
    """The demo recording with `edit(number, entry)` applied to each entry; its path and the lines edited."""
    lines = DEMO_RECORDING.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header["server_url"] += TITLE
    header["meter"]["detail"] += TITLE
    out, edited = [json.dumps(header)], []
    for number, line in enumerate(lines[1:], start=2):
        entry = json.loads(line)
        if edit(number, entry):
            edited.append(number)
        out.append(json.dumps(entry))
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path, edited


def wrong_types(number: int, entry: dict) -> bool:
    if entry["kind"] == "meter":
        entry["error"] = f"meter broke {TITLE}"  # a text field: kept, made printable
        return False
    if entry["kind"] == "poll" and number % 3 == 0:
        entry["slots_busy"] = "abc"
        return True
    if entry["kind"] == "poll" and number % 3 == 1:
        entry["slots_total"] = 3.5  # a whole number that is not: "Unknown format code 'd'"
        return True
    if entry["kind"] == "requests":
        entry["records"][0]["committed_tokens"] = "yes"
        return True
    return False


@pytest.mark.slow
def test_report_on_a_hostile_recording_is_whole_and_names_what_it_skipped(tmp_path):
    path, edited = hostile(tmp_path, wrong_types)
    assert len(edited) >= 3
    run = spectop("report", str(path))
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    assert "\x1b" not in run.stdout + run.stderr
    assert f"skipped line {edited[0]}: " in run.stderr and f"and {len(edited) - 1} more" in run.stderr
    assert "source" in run.stdout  # what is whole is reported


def test_the_demo_recording_is_read_whole():
    recording = read_recording(DEMO_RECORDING)
    assert recording.skipped == ()


def test_the_wrong_field_is_named(tmp_path):
    path, edited = hostile(tmp_path, wrong_types)
    skipped = read_recording(path).skipped
    assert len(skipped) == len(edited)
    assert any("slots_busy is not what a ServerSnapshot holds" in s for s in skipped)
    assert any("slots_total is not what a ServerSnapshot holds" in s for s in skipped)
    assert any("records.0.committed_tokens is not what a RequestsEntry holds" in s for s in skipped)


async def test_a_hostile_recording_replays_with_no_escape_on_screen(tmp_path):
    path, _ = hostile(tmp_path, wrong_types)
    app = ReplayApp(read_recording(path), clock=ManualClock())
    async with app.run_test(size=(160, 45)) as pilot:
        app.play_to(app.recording.duration_s)
        await pilot.pause(0.3)
        screen = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        assert "PWNED-TITLE" in screen  # shown, as text
        assert "\x1b" not in screen and "\x07" not in screen and "\x1b" not in app.title


def memory_cap(limit_bytes: int):
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))

    return limit


@pytest.mark.parametrize(
    ("command", "says"), [("replay", "is not a spectop recording"), ("report", "no sweep results at")]
)
@pytest.mark.slow
def test_a_file_that_never_ends_is_one_line(command, says):
    run = spectop(command, "/dev/zero", preexec=memory_cap(1 << 30))
    assert run.returncode == 2
    assert says in one_line(run.stderr)


def test_an_entry_longer_than_its_bound_is_skipped_and_the_rest_read(tmp_path):
    lines = DEMO_RECORDING.read_text(encoding="utf-8").splitlines()
    huge = '{"t": 1.0, "kind": "meter", "readings": [], "error": "' + "x" * (MAX_ENTRY_BYTES + 10) + '"}'
    path = tmp_path / "huge.jsonl"
    path.write_text("\n".join([lines[0], huge, *lines[1:]]) + "\n", encoding="utf-8")
    recording = read_recording(path)
    assert recording.skipped == (f"line 2: longer than {MAX_ENTRY_BYTES >> 20} MB",)
    assert len(recording.entries) == len(lines) - 1
