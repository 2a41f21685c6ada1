"""The `run` fixture of the emulator tests (helpers live in device_helpers.py)."""

from __future__ import annotations

import pytest
from device_helpers import Runner, make_runner


@pytest.fixture
def run() -> Runner:
    """run(fixture_name, inputs, program=None, numerics=None, timeout_s=10.0) -> RunResult."""
    return make_runner()
