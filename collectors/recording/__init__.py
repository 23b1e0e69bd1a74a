"""Recordings: writing a session to JSON lines, reading it back, and `spectop report` on one."""
