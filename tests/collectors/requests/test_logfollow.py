"""The `tail -F` follower on temporary files and a pipe: rotation, truncation, cut lines, late files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from collectors.errors import SpectopError
from collectors.requests.logfollow import LogFollower


def append(path: Path, text: str) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text)


def test_follows_from_the_end_and_joins_a_line_written_in_two_parts(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("old line, before spectop watched\n")
    follower = LogFollower(str(log))
    assert follower.poll() == []
    append(log, "first\nsec")
    assert follower.poll() == ["first"]
    append(log, "ond\n")
    assert follower.poll() == ["second"]


def test_rotation_reads_the_old_files_rest_then_the_new_file(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("")
    follower = LogFollower(str(log))
    append(log, "a\n")
    assert follower.poll() == ["a"]
    append(log, "b\n")  # written after the last poll, just before logrotate moves the file
    os.rename(log, tmp_path / "server.log.1")
    assert follower.poll() == ["b"]  # moved away, nothing new yet: still the old file
    log.write_text("c\nd\n")
    assert follower.poll() == ["c", "d"]
    append(log, "e\n")
    assert follower.poll() == ["e"]


def test_a_line_cut_by_rotation_is_dropped(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("")
    follower = LogFollower(str(log))
    append(log, "whole\ncut in ha")
    assert follower.poll() == ["whole"]
    log.unlink()
    log.write_text("new\n")
    assert follower.poll() == ["new"]


def test_truncation_starts_again_from_the_top(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("")
    follower = LogFollower(str(log))
    append(log, "a long first line\nanother\n")
    assert follower.poll() == ["a long first line", "another"]
    log.write_text("x\n")  # `> server.log`, then the server writes on
    assert follower.poll() == ["x"]


def test_a_file_not_there_yet_is_waited_for_and_read_whole(tmp_path: Path) -> None:
    log = tmp_path / "later.log"
    follower = LogFollower(str(log))
    assert follower.poll() == []
    log.write_text("first\n")
    assert follower.poll() == ["first"]


def test_a_pipe_is_read_with_a_timeout_and_its_last_line_kept() -> None:
    read_fd, write_fd = os.pipe()
    try:
        follower = LogFollower("-", stdin_fd=read_fd)
        assert follower.poll(timeout_s=0.01) == []  # a quiet writer: back, not blocked
        os.write(write_fd, b"one\ntw")
        assert follower.poll(timeout_s=1) == ["one"]
        os.write(write_fd, b"o")
        os.close(write_fd)
        write_fd = -1
        lines = follower.poll(timeout_s=1) + follower.poll(timeout_s=1)
        assert lines == ["two"] and follower.ended
    finally:
        os.close(read_fd)
        if write_fd >= 0:
            os.close(write_fd)


def test_a_directory_is_refused_with_the_fix(tmp_path: Path) -> None:
    with pytest.raises(SpectopError, match="is a directory"):
        LogFollower(str(tmp_path))


def test_a_line_with_no_end_is_dropped_whole_and_counted_and_memory_stays_bounded(tmp_path: Path) -> None:
    from collectors.requests.logfollow import MAX_LINE_BYTES, READ_PER_POLL

    log = tmp_path / "server.log"
    log.write_text("")
    follower = LogFollower(str(log))
    with open(log, "ab") as fh:
        fh.write(b"x" * (3 * READ_PER_POLL))  # 12 MB and no newline yet
    seen = []
    for _ in range(4):
        seen += follower.poll()
        assert len(follower._partial) <= MAX_LINE_BYTES  # never holds more than one line's bound
    append(log, "tail of the long line\nslot a: after it\n" + "y" * (MAX_LINE_BYTES + 1) + "\nlast\n")
    seen += follower.poll()
    assert seen == ["slot a: after it", "last"]
    assert follower.long_lines == 2


def test_a_named_pipe_nobody_writes_neither_blocks_nor_hangs_close(tmp_path: Path) -> None:
    fifo = tmp_path / "server.fifo"
    os.mkfifo(fifo)
    follower = LogFollower(str(fifo))  # a plain open() would wait here for a writer, for good
    assert follower.poll(timeout_s=0.05) == []
    writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    os.write(writer, b"first\nsecond\n")
    os.close(writer)
    lines: list[str] = []
    for _ in range(20):
        lines += follower.poll(timeout_s=0.05)
    assert lines == ["first", "second"] and not follower.ended  # a later writer is still read
    writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    os.write(writer, b"third\n")
    os.close(writer)
    for _ in range(20):
        lines += follower.poll(timeout_s=0.05)
    assert lines == ["first", "second", "third"]
    follower.close()


def test_a_device_is_refused_at_start_and_when_a_rotation_swaps_one_in(tmp_path: Path) -> None:
    with pytest.raises(SpectopError, match="is not a file"):
        LogFollower("/dev/zero")
    link = tmp_path / "server.log"
    real = tmp_path / "real.log"
    real.write_text("")
    link.symlink_to(real)
    follower = LogFollower(str(link))
    append(real, "one\n")
    assert follower.poll() == ["one"]
    link.unlink()
    link.symlink_to("/dev/zero")
    with pytest.raises(SpectopError, match="is not a file"):
        follower.poll()
