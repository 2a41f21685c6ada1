"""What every emitter shares: the generated-file record and the template context."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import jinja2.bccache

from ttlgen import cache
from ttlgen.emit import _filters
from ttlgen.errors import UsageError


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
        # As PurePosixPath reads it: absolute when it starts with "/", its parts between "/".
        if self.path.startswith("/") or ".." in self.path.split("/") or not self.path:
            raise ValueError(f"generated path must be relative and inside the tree: {self.path!r}")


class Templates:
    """Every file of a template tree, read once: the bytes Jinja compiles, the bytes a
    static copy takes and the bytes MANIFEST hashes are the same bytes, whatever happens
    to the files while a build runs. Hidden paths and ``__pycache__`` are not templates."""

    def __init__(self, root: Path) -> None:
        if not root.is_dir():
            raise UsageError(f"template directory {str(root)!r} does not exist; pass --templates DIR")
        self.root = root
        files: dict[str, bytes] = {}
        for path in sorted(root.rglob("*")):
            parts = path.relative_to(root).parts
            if any(p.startswith(".") or p == "__pycache__" for p in parts) or not path.is_file():
                continue
            files["/".join(parts)] = path.read_bytes()
        self.files: Mapping[str, bytes] = dict(sorted(files.items()))
        self.digest = hashlib.sha256(b"".join(f"{n}\0{len(b)}\0".encode() + b for n, b in self.files.items())).hexdigest()

    def text(self, name: str) -> str:
        try:
            return self.files[name].decode("utf-8")
        except KeyError:
            raise jinja2.TemplateNotFound(name) from None

    def loader(self) -> jinja2.BaseLoader:
        def load(name: str) -> tuple[str, str, Callable[[], bool]]:
            return self.text(name), f"{self.root}/{name}", lambda: True

        return jinja2.FunctionLoader(load)


class _SealedBytecodeCache(jinja2.BytecodeCache):
    """Jinja's compiled templates as sealed records (ttlgen.cache), one per template source,
    environment flavour, Jinja version and bytecode format: a damaged record is compiled
    afresh, never run."""

    def __init__(self, directory: Path, flavour: str) -> None:
        self.directory = directory
        self.flavour = flavour

    def _path(self, bucket: jinja2.bccache.Bucket) -> Path:
        key = "\0".join(
            (self.flavour, bucket.key, bucket.checksum or "", jinja2.__version__, importlib.util.MAGIC_NUMBER.hex())
        )
        return self.directory / hashlib.sha256(key.encode()).hexdigest()

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        payload = cache.load(self._path(bucket))
        if payload is None:
            return
        try:
            bucket.bytecode_from_string(payload)  # a record of another source or format resets
        except Exception:  # a sealed record no Jinja wrote: compile afresh
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        cache.store(self._path(bucket), bucket.bytecode_to_string())


# Compiling templates costs more than rendering them (about 180 ms of a full render).
_ENVIRONMENTS: dict[tuple[str, str, str | None], jinja2.Environment] = {}

# How every template is read and printed, by the emit environment and by the tracing one
# (ttlgen.provenance.tracing), which must lay out the same text to map its lines.
SETTINGS: Mapping[str, Any] = {
    "undefined": jinja2.StrictUndefined,
    "autoescape": False,
    "trim_blocks": True,
    "lstrip_blocks": True,
    "keep_trailing_newline": True,
    "auto_reload": False,
}


def _records() -> Path:
    return cache.cache_root() / "jinja"


def bytecode_cache(flavour: str) -> jinja2.BytecodeCache | None:
    """The compiled-template records of environments of one flavour, or None when caching
    is off. Environments whose settings compile a template to different code (the tracing
    one calls ``finalize`` on every printed value) are different flavours."""
    return _SealedBytecodeCache(_records(), flavour) if cache.enabled() else None


def _environment(templates: Templates, cached: bool) -> jinja2.Environment:
    records = str(_records()) if cached else None
    key = (str(templates.root), templates.digest, records)
    if key not in _ENVIRONMENTS:
        env = jinja2.Environment(
            bytecode_cache=_SealedBytecodeCache(Path(records), "emit") if records is not None else None,
            loader=templates.loader(),
            **SETTINGS,
        )
        env.filters.update(_filters.FILTERS)
        _ENVIRONMENTS.clear()  # one template tree per process is the rule; keep no history
        _ENVIRONMENTS[key] = env
    return _ENVIRONMENTS[key]


@dataclass(frozen=True)
class EmitContext:
    """What an emitter renders with: the template tree and whether compiled templates may
    come from the cache."""

    templates: Templates
    cached: bool = True

    def render(self, template: str, **variables: Any) -> str:
        return self.environment.get_template(template).render(**variables)

    @functools.cached_property
    def environment(self) -> jinja2.Environment:
        # Looked up once per context, not per template rendered (a build renders hundreds):
        # where the records are depends on the environment variables, read here.
        return _environment(self.templates, self.cached and cache.enabled())

    def copy(self, template_path: str) -> str:
        """A static file under templates/, copied verbatim (logic shared by every spec)."""
        return self.templates.text(template_path)
