"""Settings for the whole suite."""

from hypothesis import settings

# Hypothesis fails an example that takes over 200 ms by default: a wall-clock assertion, which a
# loaded machine breaks and the code does not (a clean-clone CI run beside three suites timed a
# 0.1 ms example at 303 ms). Hangs are caught by pytest-timeout; speed is measured in tests/bench.
settings.register_profile("spectop", deadline=None)
settings.load_profile("spectop")
