"""The parsed-document cache only saves time: a hit gives exactly what a parse gives, and a
file that does not parse is parsed (and reported) every time."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import SPECS
from ttlgen.errors import SpecErrors
from ttlgen.spec import parse_cache
from ttlgen.spec.files import source_name, spec_files
from ttlgen.spec.load import load_file, load_specs


@pytest.fixture
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("TTLGEN_CACHE_DIR", str(root))
    monkeypatch.delenv("TTLGEN_NO_CACHE", raising=False)
    return root


def test_a_cached_document_equals_a_parsed_one(own_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parsed = load_specs(SPECS)  # parses, and records every file
    assert len(list((own_cache / "parsed").iterdir())) == len(spec_files(SPECS))
    cached = load_specs(SPECS)
    assert cached == parsed
    # Equal, and ordered alike: mapping order reaches the generated files.
    for hit, parse in zip(cached, parsed, strict=True):
        assert repr(hit.data) == repr(parse.data)
        assert list(hit.positions.values.items()) == list(parse.positions.values.items())
        assert list(hit.positions.keys.items()) == list(parse.positions.keys.items())
    monkeypatch.setenv("TTLGEN_NO_CACHE", "1")
    assert load_specs(SPECS) == parsed


def test_a_hit_names_the_file_it_was_read_from(own_cache: Path, tmp_path: Path) -> None:
    original = SPECS / "ops" / "matmul.yaml"
    load_file(original, source_name(SPECS, original))
    twin = tmp_path / "elsewhere" / "matmul.yaml"
    twin.parent.mkdir()
    twin.write_bytes(original.read_bytes())
    document = load_file(twin, "elsewhere/matmul.yaml")
    assert document.mark(("families",)).file == "elsewhere/matmul.yaml"


def test_a_damaged_record_is_parsed_again(own_cache: Path) -> None:
    path = SPECS / "ops" / "matmul.yaml"
    expected = load_file(path, "specs/ops/matmul.yaml")
    for record in (own_cache / "parsed").iterdir():
        record.write_bytes(b"\x00not marshal")
    assert load_file(path, "specs/ops/matmul.yaml") == expected


def test_a_file_that_does_not_parse_is_never_recorded(own_cache: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("spec: ttlgen.ops/v1\nfamilies: {a: 1, a: 2}\n", encoding="utf-8")
    for _ in range(2):
        with pytest.raises(SpecErrors, match="duplicate key"):
            load_file(bad, "bad.yaml")
    assert parse_cache.lookup(bad.read_text(encoding="utf-8"), ".yaml") is None


def test_an_unwritable_cache_only_costs_speed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory", encoding="utf-8")
    monkeypatch.setenv("TTLGEN_CACHE_DIR", str(blocker))
    monkeypatch.delenv("TTLGEN_NO_CACHE", raising=False)
    assert load_specs(SPECS)
