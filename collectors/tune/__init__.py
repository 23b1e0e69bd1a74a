"""An energy-derived drafting schedule: from a finished sweep, the draft length that gives the
lowest energy per token at each batch (schedule.py, derive.py), in each engine's own form (the
dialects' schedule.py) and the saving it predicts over a load profile."""
