"""The spec kinds ttlgen understands, one JSON Schema file per kind and version.

The registry is the set of schema files shipped in ``ttlgen/schemas``: a schema named
``ttlgen.ops.v1.schema.json`` defines kind ``ttlgen.ops`` version ``v1``. Adding a kind
or a version is adding its schema (and the model that reads it), nothing else here.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

_SUFFIX = ".schema.json"


@dataclass(frozen=True)
class SpecKind:
    """A spec kind and version, with the schema that validates it."""

    name: str
    version: str
    schema_file: str

    @property
    def kind_id(self) -> str:
        return f"{self.name}/{self.version}"

    def schema(self) -> dict[str, Any]:
        return load_schema(self.schema_file)


@functools.cache
def schema_text(schema_file: str) -> str:
    return resources.files("ttlgen.schemas").joinpath(schema_file).read_text(encoding="utf-8")


@functools.cache
def load_schema(schema_file: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(schema_text(schema_file))
    return schema


@functools.cache
def spec_kinds() -> tuple[SpecKind, ...]:
    kinds = []
    for entry in resources.files("ttlgen.schemas").iterdir():
        name = entry.name
        if not name.endswith(_SUFFIX):
            continue
        stem = name[: -len(_SUFFIX)]
        kind, _, version = stem.rpartition(".")
        kinds.append(SpecKind(kind, version, name))
    return tuple(sorted(kinds, key=lambda k: (k.name, k.version)))


def find_kind(name: str, version: str) -> SpecKind | None:
    return next((kind for kind in spec_kinds() if kind.name == name and kind.version == version), None)


def versions_of(name: str) -> list[str]:
    return [k.version for k in spec_kinds() if k.name == name]
