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
