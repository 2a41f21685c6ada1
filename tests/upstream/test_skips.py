"""Without the package index or Python 3.12 the upstream tests skip with the reason; where
they must run ($TTLGEN_REQUIRE_UPSTREAM, which CI sets), the same condition fails them."""

from __future__ import annotations

from pathlib import Path

import pytest
from upstream_helpers import REQUIRE_ENV, unavailable


def test_a_missing_prerequisite_skips_with_its_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REQUIRE_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"no Python 3\.12"):
        unavailable("no Python 3.12")


@pytest.mark.parametrize("value", ["1", "yes"])
def test_where_the_upstream_tests_must_run_a_missing_prerequisite_fails(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(REQUIRE_ENV, value)
    with pytest.raises(pytest.fail.Exception, match=rf"no Python 3\.12 \(\${REQUIRE_ENV} is set"):
        unavailable("no Python 3.12")


def test_ci_requires_the_upstream_tests() -> None:
    script = (Path(__file__).resolve().parents[2] / ".ci" / "run").read_text(encoding="utf-8")
    before_tests = script.split("pytest -p no:cacheprovider")[0]
    assert f"export {REQUIRE_ENV}=1" in before_tests
