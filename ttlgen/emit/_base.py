"""What every emitter shares: the generated-file record and the template context."""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import jinja2
import jinja2.bccache

from ttlgen import cache
from ttlgen.emit import _filters


@dataclass(frozen=True)
class GeneratedFile:
    """One output: a POSIX path relative to the output tree, its body, and its sources.

    ``sources`` are display paths of the spec files the body was derived from; the
    framework writes them into the file's "generated" header.
    """

    path: str
    body: str
    sources: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        pure = PurePosixPath(self.path)
        if pure.is_absolute() or ".." in pure.parts or not self.path:
            raise ValueError(f"generated path must be relative and inside the tree: {self.path!r}")


class _BytecodeCache(jinja2.FileSystemBytecodeCache):
    """Jinja's file cache of compiled templates, except that a compiled form the disk
    refuses (full, read-only) is not kept: the cache only costs or saves time."""

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)  # removes its temporary file when the write fails


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    # Compiling templates costs more than rendering them; the compiled form is keyed by
    # template source and Jinja version, so it never changes what is rendered.
    if not cache.enabled():
        return None
    directory = cache.cache_root() / "jinja"
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return _BytecodeCache(str(directory))


@functools.cache
def _environment(templates_dir: str) -> jinja2.Environment:
    env = jinja2.Environment(
        bytecode_cache=_bytecode_cache(),
        loader=jinja2.FileSystemLoader(templates_dir),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        auto_reload=False,
    )
    env.filters.update(_filters.FILTERS)
    return env


@dataclass(frozen=True)
class EmitContext:
    """What an emitter renders with: the template tree."""

    templates_dir: Path

    def render(self, template: str, **variables: Any) -> str:
        return _environment(str(self.templates_dir)).get_template(template).render(**variables)

    def copy(self, template_path: str) -> str:
        """A static file under templates/, copied verbatim (logic shared by every spec)."""
        return (self.templates_dir / template_path).read_text(encoding="utf-8")
