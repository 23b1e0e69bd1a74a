"""The input file of the built-in `edit` prompt class: a Python module to rewrite with type hints.

Seed 001's edit class (collectors/docs/draft-strategies.md) rewrote an 831-token Python file with type hints,
so most of the answer repeats the prompt and n-gram copying finds long matches. This file is our
own, of about that size (some 3,700 characters: roughly 800 to 900 tokens under the BPE tokenizers
of the models the notes measured), untyped, so the edit has something on every function to change.
Pitfall handled: a short input would give copying little to match and end the answer early, so the
class would measure a short answer's start-up, not an edit.
"""

EDIT_INPUT = """\
import csv
import math
import statistics
from collections import deque
from dataclasses import dataclass


@dataclass
class Reading:
    t_s: float
    power_w: float
    source: str


class ReadingError(ValueError):
    pass


def parse_reading(line, source="meter"):
    parts = [part.strip() for part in line.split(",")]
    if len(parts) < 2:
        raise ReadingError(f"expected 't_s,power_w', got {line!r}")
    t_s, power_w = float(parts[0]), float(parts[1])
    if power_w < 0 or math.isnan(power_w):
        raise ReadingError(f"impossible power {power_w} at {t_s}")
    return Reading(t_s, power_w, parts[2] if len(parts) > 2 else source)


def read_log(path, source="meter", skip_bad=False):
    readings = []
    with open(path, newline="") as handle:
        for number, row in enumerate(csv.reader(handle), start=1):
            if not row or row[0].startswith("#"):
                continue
            try:
                readings.append(parse_reading(",".join(row), source))
            except (ReadingError, ValueError) as exc:
                if not skip_bad:
                    raise ReadingError(f"{path} line {number}: {exc}") from exc
    readings.sort(key=lambda reading: reading.t_s)
    return readings


def energy_between(readings, start_s, end_s):
    inside = [r for r in readings if start_s <= r.t_s <= end_s]
    if len(inside) < 2:
        return None
    total_j = 0.0
    for left, right in zip(inside, inside[1:]):
        total_j += (left.power_w + right.power_w) / 2 * (right.t_s - left.t_s)
    return total_j


def mean_power(readings, start_s, end_s):
    energy_j = energy_between(readings, start_s, end_s)
    if energy_j is None or end_s <= start_s:
        return None
    return energy_j / (end_s - start_s)


def largest_gap(readings):
    gaps = [right.t_s - left.t_s for left, right in zip(readings, readings[1:])]
    return max(gaps) if gaps else 0.0


class RollingWindow:
    def __init__(self, span_s):
        self.span_s = span_s
        self.items = deque()

    def add(self, reading):
        self.items.append(reading)
        while self.items and reading.t_s - self.items[0].t_s > self.span_s:
            self.items.popleft()

    def median_power(self):
        if not self.items:
            return None
        return statistics.median(r.power_w for r in self.items)

    def covers(self, start_s, end_s):
        if not self.items:
            return False
        return self.items[0].t_s <= start_s and self.items[-1].t_s >= end_s


def split_by_source(readings):
    groups = {}
    for reading in readings:
        groups.setdefault(reading.source, []).append(reading)
    return groups


def energy_per_token(energy_j, tokens):
    if not tokens:
        return None
    return 1000.0 * energy_j / tokens


def summary_lines(readings, windows):
    lines = []
    for name, (start_s, end_s, tokens) in sorted(windows.items()):
        energy_j = energy_between(readings, start_s, end_s)
        if energy_j is None:
            lines.append(f"{name}: too few readings")
            continue
        mj = energy_per_token(energy_j, tokens)
        watts = mean_power(readings, start_s, end_s)
        lines.append(f"{name}: {energy_j:.1f} J, {watts:.1f} W, {mj:.1f} mJ/token")
    return lines


def main(argv):
    if len(argv) < 2:
        print("usage: energy LOG [NAME START END TOKENS]...")
        return 2
    readings = read_log(argv[1], skip_bad=True)
    windows = {}
    rest = argv[2:]
    for i in range(0, len(rest) - 3, 4):
        windows[rest[i]] = (float(rest[i + 1]), float(rest[i + 2]), int(rest[i + 3]))
    for line in summary_lines(readings, windows):
        print(line)
    print(f"largest gap {largest_gap(readings):.2f} s")
    return 0
"""
