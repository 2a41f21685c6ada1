"""Fixtures of the C++ table tests: the committed tree's programs, each compiled and run
once per test process for the tests that only read what they print (a test must not change
the records it gets)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import GENERATED, SPECS
from tests.cpp_tables.support import DEFAULT_STANDARD, cpp_adapter_answers, cpp_table_answers


@pytest.fixture(scope="session")
def committed_answers(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """The answers of the committed tree's table dump program (DEFAULT_STANDARD, cpp_table_answers)."""
    return cpp_table_answers(GENERATED, tmp_path_factory.mktemp("tables-dump"))


@pytest.fixture(scope="session")
def committed_adapter_answers(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., list[dict[str, Any]]]:
    """``answers(std)``: the answers of the adapter driver compiled in C++ standard ``std``
    (default DEFAULT_STANDARD) against the committed tree (cpp_adapter_answers), made the
    first time a test asks."""
    made: dict[str, list[dict[str, Any]]] = {}

    def answers(std: str = DEFAULT_STANDARD) -> list[dict[str, Any]]:
        if std not in made:
            made[std] = cpp_adapter_answers(GENERATED, SPECS, tmp_path_factory.mktemp("adapter"), std)
        return made[std]

    return answers
