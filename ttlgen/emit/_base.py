"""What every emitter shares: the generated-file record and the template context."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import jinja2
import jinja2.bccache

from ttlgen import cache
from ttlgen.emit import _filters
from ttlgen.errors import Diagnostic, Mark, UsageError
from ttlgen.spec.load import name_problem, shown_name


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
    """Every file of a template tree, read once: the bytes Jinja compiles and the bytes
    MANIFEST hashes are the same bytes, whatever happens to the files while a build
    runs. Hidden paths and ``__pycache__`` are not templates."""

    def __init__(self, root: Path) -> None:
        if not root.is_dir():
            raise UsageError(f"template directory {str(root)!r} does not exist; pass --templates DIR")
        self.root = root
        files: dict[str, bytes] = {}
        for path in sorted(root.rglob("*")):
            parts = path.relative_to(root).parts
            if any(p.startswith(".") or p == "__pycache__" for p in parts) or not path.is_file():
                continue
            name = "/".join(parts)
            problem = name_problem(name)
            if problem is not None:
                raise TemplateError(
                    shown_name(_shown(str(path))), 0,
                    f"the file's path {problem}; rename it: template names are written into MANIFEST",
                )  # fmt: skip
            files[name] = path.read_bytes()
        self.files: Mapping[str, bytes] = dict(sorted(files.items()))
        self.digest = hashlib.sha256(b"".join(f"{n}\0{len(b)}\0".encode() + b for n, b in self.files.items())).hexdigest()

    def path(self, name: str) -> str:
        """The file of template ``name``, as Jinja names it in its errors and frames."""
        return f"{self.root}/{name}"

    def text(self, name: str) -> str:
        try:
            data = self.files[name]
        except KeyError:
            raise jinja2.TemplateNotFound(name) from None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            raise TemplateError(
                _shown(self.path(name)), line, f"not UTF-8 text (byte 0x{data[exc.start]:02x}); templates are UTF-8"
            ) from None

    def loader(self) -> jinja2.BaseLoader:
        def load(name: str) -> tuple[str, str, Callable[[], bool]]:
            return self.text(name), self.path(name), lambda: True

        return jinja2.FunctionLoader(load)


class TemplateError(UsageError):
    """A template that cannot be rendered: a syntax error, a name it reads that is not
    there, a template it names that does not exist, bytes that are not UTF-8. Templates
    are input (README's workflow edits them), so this is bad input, not a bug: one located
    line, exit 2, nothing written."""

    def __init__(self, file: str, line: int, message: str) -> None:
        self.mark = Mark(file, line)
        self.message = message
        super().__init__(f"{file}:{line}: {message}" if line > 0 else f"{file}: {message}")

    def diagnostic(self) -> Diagnostic:
        return Diagnostic(self.mark, self.message)


def _shown(path: str) -> str:
    """A template's path as errors show it: relative to the current directory when it is
    below it (so it opens from where ttlgen ran), else as it is."""
    try:
        return os.fspath(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return path


def _template_frame(trace: TracebackType | None, templates: Templates) -> tuple[str, int] | None:
    """The innermost template line a traceback passes through: Jinja's rendered frames
    carry the template's file and line (see jinja2.debug)."""
    files = {templates.path(name) for name in templates.files}
    found = None
    while trace is not None:
        if trace.tb_frame.f_code.co_filename in files:
            found = (trace.tb_frame.f_code.co_filename, trace.tb_lineno)
        trace = trace.tb_next
    return found


@contextlib.contextmanager
def template_errors(templates: Templates, name: str) -> Iterator[None]:
    """Jinja's errors while rendering template ``name`` as one TemplateError,
    at the template line they come from (an included template's, when it is there)."""
    try:
        yield
    except jinja2.TemplateSyntaxError as exc:  # an assertion error too (a bad filter name)
        file = exc.filename or templates.path(exc.name or name)
        raise TemplateError(_shown(file), exc.lineno, f"template syntax error: {exc.message}") from None
    except jinja2.TemplateNotFound as exc:
        frame = _template_frame(exc.__traceback__, templates)
        file, line = frame if frame is not None else (str(templates.root), 0)
        inside = f" in {_shown(str(templates.root))}" if frame is not None else ""
        raise TemplateError(
            _shown(file), line, f"no template {exc.name!r}{inside}; "
            "a template directory needs every template ttlgen renders (start from a copy of the shipped templates/)"
        ) from None  # fmt: skip
    except jinja2.TemplateError as exc:  # raised while rendering: an undefined name, a failed filter
        file, line = _template_frame(exc.__traceback__, templates) or (templates.path(name), 0)
        raise TemplateError(_shown(file), line, exc.message or type(exc).__name__) from None


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
        with template_errors(self.templates, template):
            return self.environment.get_template(template).render(**variables)

    @functools.cached_property
    def environment(self) -> jinja2.Environment:
        # Looked up once per context, not per template rendered (a build renders hundreds):
        # where the records are depends on the environment variables, read here.
        return _environment(self.templates, self.cached and cache.enabled())

    def laid_out(self, lines: Sequence[tuple[str, object]], sources: tuple[str, ...]) -> str:
        """A body an emitter lays out in code, line by line with the record each line
        prints (None: the emitter's own text, from ``sources`` as a whole); ``ttlgen
        explain`` reads the records as it reads a template's."""
        del sources  # what a traced emit names the unrecorded lines after
        return lines_text(lines)


def lines_text(lines: Sequence[tuple[str, object]]) -> str:
    """The text of lines laid out in code (:meth:`EmitContext.laid_out`), each ended by a newline."""
    return "".join(f"{line}\n" for line, _ in lines)
