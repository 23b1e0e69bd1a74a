"""Settings for the whole suite."""

import pytest
from hypothesis import settings

# Hypothesis fails an example that takes over 200 ms by default: a wall-clock assertion, which a
# loaded machine breaks and the code does not (a clean-clone CI run beside three suites timed a
# 0.1 ms example at 303 ms). Hangs are caught by pytest-timeout; speed is measured in tests/bench.
settings.register_profile("spectop", deadline=None)
settings.load_profile("spectop")


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects
def pytest_collection_modifyitems(items):
    """Every real-server test (`llama`) is also `slow`: `pytest -m "not slow"` is the quick loop."""
    for item in items:
        if item.get_closest_marker("llama") is not None:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _user_data_in_tmp(tmp_path_factory, monkeypatch):
    """spectop keeps its energy ledger under the user's data folder (XDG_DATA_HOME on Linux): a test's
    goes to a folder of its own, never into the home of whoever runs the suite."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("data")))
