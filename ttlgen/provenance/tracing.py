"""Render templates while noting, for every printed piece, its template line and model object.

The tracing environment is the emit environment plus two hooks. Every attribute or item a
template reads goes through ``Environment.getattr``/``getitem``: the object read is noted
when it is a model object (a frozen dataclass with a spec ``mark``), stands for one (an
emitter record with an ``origin``, a lowered kernel) or is a name record of one. Every
printed expression goes through ``finalize``: it becomes an event holding the printed
text, the template line it is on (from the calling frame and the template's line map) and
the model object read last before it, the one the printed value is an attribute of. The
root render function is driven chunk by chunk, so each literal chunk gets the template
line it starts on, and the events of a macro or a ``set`` block are found inside the text
of the expression that printed them.
"""

from __future__ import annotations

import bisect
import dataclasses
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import jinja2
import jinja2.runtime
from jinja2 import nodes

from ttlgen.emit import _filters
from ttlgen.emit._base import SETTINGS, EmitContext, Templates, bytecode_cache, template_errors
from ttlgen.emit._cpp_layout import Fact, SourcedLines
from ttlgen.emit._kernel_printer import PrintedProgram
from ttlgen.errors import KeyPath, Mark
from ttlgen.model.targets import Target
from ttlgen.plan.kernels import LoweredKernel
from ttlgen.provenance.kernel_lines import (
    Headers,
    LineSources,
    PerLine,
    PrinterMismatch,
    json_sources,
    text_sources,
)
from ttlgen.provenance.origins import (
    LineOrigin,
    Locator,
    OriginKind,
    SpecSource,
    TemplateLine,
    describe,
    node_mark,
)
from ttlgen.spec.files import display_path


class ModelIndex:
    """Which model object stands behind a value a template reads."""

    def __init__(self, roots: tuple[object, ...], locator: Locator) -> None:
        self.locator = locator
        self.owners: dict[int, object] = {}  # id of a name record -> the model object it names
        self.identifiers: dict[str, object | None] = {}  # a generated identifier -> its thing (None: several)
        self._sources: dict[int, SpecSource] = {}
        # Values of a table record's mapping that stand for one stated value of its model
        # object (a target's full_fp32[kind]): id -> (the model object, the attribute).
        self._facts: dict[int, tuple[object, KeyPath]] = {}
        self._key_sources: dict[tuple[int, str], SpecSource | None] = {}
        # Model objects by name: the resolver tables (named tuples the plan stage builds from
        # the model, and the kernel-config emitter prints) stand for the model object of
        # their name.
        self.by_name: dict[str, list[object]] = {}
        self._tables: list[tuple[object, ...]] = []  # every named tuple, outer ones first
        seen: set[int] = set()
        for root in roots:
            self._index(root, seen)
        for record in self._tables:  # outer records first: their pairing is the more exact
            if id(record) not in self.owners:
                owner = self._namesake(record)
                if owner is not None:
                    self._pair(record, owner)

    def _index(self, value: object, seen: set[int]) -> None:
        if id(value) in seen:
            return
        seen.add(id(value))
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            name = getattr(value, "name", None)
            if not isinstance(name, str):  # a relation table is named by where it comes from
                name = getattr(value, "origin", None)
            if isinstance(name, str) and _has_mark(value):
                self.by_name.setdefault(name, []).append(value)
            names = getattr(value, "names", None) if _has_mark(value) else None
            if names is not None:
                for record in _records(names):
                    self.owners.setdefault(id(record), value)
                    for text in record:
                        if isinstance(text, str):
                            known = self.identifiers.get(text, value)
                            self.identifiers[text] = value if known is value else None
            for f in dataclasses.fields(value):
                self._index(getattr(value, f.name), seen)
        elif isinstance(value, tuple):
            if hasattr(value, "_fields"):
                self._tables.append(value)
            for item in value:
                self._index(item, seen)

    def _pair(self, record: tuple[object, ...], model: object) -> None:
        """A table record stands for ``model``; each of its fields for the model's field of
        the same name when that is a located object (a relation table, a rule), else for
        ``model`` too."""
        if id(record) in self.owners:
            return
        self.owners[id(record)] = model
        for name in getattr(record, "_fields", ()):
            part = getattr(record, name)
            if isinstance(model, Target) and isinstance(part, Mapping):
                for key, value in part.items():
                    attribute = (name, str(getattr(key, "value", key)))
                    if model.stated_at(attribute) is not None:
                        self._facts[id(value)] = (model, attribute)
            counterpart = getattr(model, name, None) if name in getattr(type(model), "__dataclass_fields__", {}) else None
            self._pair_part(part, counterpart, model)

    def _pair_part(self, part: object, counterpart: object, owner: object) -> None:
        if not isinstance(part, tuple):
            return
        if hasattr(part, "_fields"):
            self._pair(part, counterpart if _has_mark(counterpart) else owner)
            return
        self.owners.setdefault(id(part), owner)
        aligned = isinstance(counterpart, tuple) and len(counterpart) == len(part)
        for i, item in enumerate(part):
            self._pair_part(item, counterpart[i] if aligned and isinstance(counterpart, tuple) else None, owner)

    def model(self, obj: object) -> object | None:
        fields = getattr(type(obj), "__dataclass_fields__", None)
        if fields is not None:
            if _has_mark(obj):
                return obj
            for name in ("origin", "kernel"):  # an emitter record or a lowered kernel
                inner: object = getattr(obj, name, None) if name in fields else None
                if inner is not None and _has_mark(inner):
                    return inner
            return None
        if not isinstance(obj, tuple):
            return None
        # A record naming the model object it stands for (an enumerator, its element type)
        # is that object's, whichever record around it was paired with another.
        origin = getattr(obj, "origin", None) if "origin" in getattr(obj, "_fields", ()) else None
        if _has_mark(origin):
            return origin
        owner = self.owners.get(id(obj))
        if owner is not None or not hasattr(obj, "_fields"):
            return owner
        return self._namesake(obj)

    def _namesake(self, record: tuple[object, ...]) -> object | None:
        """The model object a table record of the same name stands for: the only one of
        that name, or the only one of that name and class name."""
        name = getattr(record, "name", getattr(record, "origin", None))
        candidates = self.by_name.get(name, []) if isinstance(name, str) else []
        if len({getattr(c, "mark", None) for c in candidates}) > 1:
            candidates = [c for c in candidates if type(c).__name__ == type(record).__name__]
        return candidates[0] if len({getattr(c, "mark", None) for c in candidates}) == 1 else None

    def named(self, text: str) -> SpecSource | None:
        """The thing a printed identifier (``KOMOREBI_ABI_KM_ABI_H``) is the name of, if one."""
        owner = self.identifiers.get(text.strip())
        return self.source(owner) if owner is not None else None

    def source(self, obj: object, attribute: str | None = None) -> SpecSource | None:
        """The spec node behind ``obj``; with ``attribute`` (read of ``obj`` itself, a model
        object), the node's key of that name when the spec writes one (a layout's ``doc``)."""
        fact = self._facts.get(id(obj))
        if fact is not None:
            return self.stated(*fact)
        model = self.model(obj)
        if model is None:
            return None
        if attribute is not None:
            stated = self.stated(model, (attribute,))
            if stated is None and model is obj:
                stated = self._key_source(model, attribute)
            if stated is not None:
                return stated
        found = self._sources.get(id(model))
        if found is None:
            mark = getattr(model, "mark")  # noqa: B009 - checked by _has_mark
            found = SpecSource(self.locator.node(mark), describe(model))
            self._sources[id(model)] = found
        return found

    def stated(self, obj: object, attribute: KeyPath) -> SpecSource | None:
        """Where a value of ``obj`` (a model object or a record of one) is written, when the
        model records it apart from the object's own node: a target's DFB capacity is its
        architecture's ``dfb_capacity``, not the target spec's."""
        model = self.model(obj)
        at = model.stated_at(attribute) if isinstance(model, Target) else None
        return SpecSource(self.locator.node(at.mark), at.what) if at is not None else None

    def origin(self, origin: object) -> SpecSource | None:
        """The spec node behind an emitter record's ``origin`` (a :class:`Fact` or a record)."""
        if isinstance(origin, Fact):
            return self.stated(origin.owner, origin.attribute) or self.source(origin.owner)
        return self.source(origin)

    def _key_source(self, model: object, attribute: str) -> SpecSource | None:
        cached = (id(model), attribute)
        if cached in self._key_sources:
            return self._key_sources[cached]
        node = self.locator.node(getattr(model, "mark"))  # noqa: B009 - a model object has one
        document = self.locator.by_file.get(node.file)
        path = (*node.path, attribute)
        found = None
        if document is not None and path in document.positions.values:
            found = SpecSource(node_mark(document, path), f"the {attribute} of {describe(model)}")
        self._key_sources[cached] = found
        return found


def _line_map(template: jinja2.Template) -> Callable[[int], int]:
    """``template.get_corresponding_lineno``, which parses the template's whole line map on
    every call (a render of a thousand constants asks it a hundred thousand times), with
    the map parsed once and searched by bisection."""
    pairs = template.debug_info  # (template line, code line), in code order
    code_lines = [code for _, code in pairs]

    def lineno(code_line: int) -> int:
        at = bisect.bisect_right(code_lines, code_line)
        return pairs[at - 1][0] if at else 1

    return lineno


def _literal_line(candidates: Sequence[int], approximate: int) -> int:
    """The line a piece of template text starts on: of the places it is in the template, the
    first at or after the statement Jinja's line map names (which is at or before it)."""
    after = [line for line in candidates if line >= approximate]
    if after:
        return min(after)
    return max(candidates) if candidates else approximate


def _has_mark(obj: object) -> bool:
    fields = getattr(type(obj), "__dataclass_fields__", None)
    return fields is not None and "mark" in fields and isinstance(getattr(obj, "mark", None), Mark)


def _records(record: object) -> Iterator[tuple[object, ...]]:
    """A name record and the records in it (named tuples of strings)."""
    if isinstance(record, tuple) and hasattr(record, "_fields"):
        yield record
        for value in record:
            yield from _records(value)


@dataclass
class _Event:
    """One printed expression."""

    text: str
    code_line: int
    touched: tuple[SpecSource, ...]
    decided: tuple[SpecSource, ...] = ()  # what decided the values it printed, beside their owner
    template_line: int = 0


@dataclass
class _Chunk:
    """One piece the root render function yielded."""

    text: str
    line: int  # the template line it starts on
    own: _Event | None  # the expression that printed it (None: template text)
    inner: list[_Event]  # expressions of macros and set blocks printed inside it


@dataclass(frozen=True)
class _Piece:
    start: int
    end: int
    line: int
    literal: bool  # template text: its lines follow the template's
    event: _Event | None
    specific: bool  # printed by an expression of its own line (not a whole macro's output)


def _each(sources: LineSources) -> PerLine:
    return tuple((source,) for source in sources)


class Tracer:
    def __init__(
        self, index: ModelIndex, templates: Templates, kernels: Sequence[LoweredKernel], headers: Headers
    ) -> None:
        self.index = index
        self.touched: list[SpecSource] = []
        self.decided: list[SpecSource] = []
        self.events: list[_Event] = []
        self.texts: dict[str, PerLine] = {}  # printed texts with the sources of each line (kernel code, C++ tables)
        self._kernels = tuple(kernels)
        self._headers = headers
        self._kernel_texts: dict[int, list[tuple[PrintedProgram, dict[str, PerLine]]]] = {}
        self._json_texts: dict[str, PerLine] | None = None
        self._literal_cache: dict[str, dict[str, list[int]]] = {}
        # A template's name from the current directory, asked for on every line it renders.
        self._shown: dict[str, str] = {}
        self.rendered: list[tuple[str, tuple[LineOrigin, ...]]] = []
        self._templates_root = templates.root
        self.environment = _TracingEnvironment(self, templates)

    def touch(self, obj: object, attribute: str | None = None) -> None:
        found = self.index.source(obj, attribute)
        if found is not None:
            self.touched.append(found)
        if isinstance(obj, LoweredKernel) and attribute is not None:  # a plan's value, and what decided it
            for decider in obj.deciders(attribute):
                decided = self.index.source(decider)
                if decided is not None:
                    self.decided.append(decided)

    def finalize(self, value: Any) -> Any:
        if _has_mark(value):  # a model object printed whole (``{{ layout.version }}``) is its own source
            self.touch(value)
        frame = sys._getframe(1)
        self.events.append(_Event(str(value), frame.f_lineno, tuple(self.touched), tuple(dict.fromkeys(self.decided))))
        self.touched.clear()
        self.decided.clear()
        return value

    def _take(self) -> list[_Event]:
        events, self.events = self.events, []
        self.touched.clear()
        self.decided.clear()
        return events

    # -- rendering ----------------------------------------------------------------------
    def render(self, name: str, variables: dict[str, Any]) -> str:
        template = self.environment.get_template(name)
        self.texts = self._texts_for(variables)
        self._take()  # constant expressions are finalized when a template compiles
        generator = template.root_render_func(template.new_context(variables))
        lineno = _line_map(template)
        chunks: list[_Chunk] = []
        literals = self._literals(name)
        pending: list[_Event] = []  # printed into a set block, to be found in a later chunk
        try:
            for text in generator:
                frame: FrameType | None = getattr(generator, "gi_frame", None)  # where the generator stopped
                line = lineno(frame.f_lineno) if frame is not None else 0
                events = [*pending, *self._take()]
                own = events[-1] if events and events[-1].text == text else None
                if own is None:
                    pending = events
                    line = _literal_line(literals.get(text, ()), line)
                    chunks.append(_Chunk(text, line, None, []))
                else:
                    pending = []
                    chunks.append(_Chunk(text, line, own, events[:-1]))
        except Exception:
            # As Template.render does: the traceback's frames become the template's lines,
            # by which template_errors locates an error.
            self.environment.handle_exception()
        for chunk in chunks:  # macros are the template's own (imported ones would map wrongly)
            for event in (*chunk.inner, *([chunk.own] if chunk.own else [])):
                event.template_line = lineno(event.code_line)
        rendered = "".join(c.text for c in chunks)
        self.rendered.append((rendered, tuple(self._origins(rendered, chunks, name))))
        return rendered

    def _literals(self, name: str) -> dict[str, list[int]]:
        """Each piece of template text the template can yield, with the lines it starts on.

        Jinja's line map has an entry per statement, and consecutive pieces of template text
        are one statement with no entry of its own; the parsed template has their lines."""
        found = self._literal_cache.get(name)
        if found is None:
            source, _, _ = self.environment.loader.get_source(self.environment, name)  # type: ignore[union-attr]
            found = {}
            context = nodes.EvalContext(self.environment)
            for output in self.environment.parse(source).find_all(nodes.Output):
                group: list[str] = []
                line = 0
                for child in [*output.nodes, None]:
                    text = None
                    if isinstance(child, nodes.TemplateData):
                        text = child.data
                    elif child is not None:
                        try:
                            text = str(child.as_const(context))
                        except nodes.Impossible:
                            text = None
                    if text is not None and child is not None:
                        line = line if group else child.lineno
                        group.append(text)
                        continue
                    if group:
                        found.setdefault("".join(group), []).append(line)
                        group = []
            self._literal_cache[name] = found
        return found

    def template_line(self, name: str, line: int) -> TemplateLine:
        """Line ``line`` of template ``name``, named from the current directory."""
        shown = self._shown.get(name)
        if shown is None:
            shown = self._shown[name] = display_path(self._templates_root / name)
        return TemplateLine(f"templates/{name}", line, shown)

    def laid_out(self, text: str, lines: Sequence[tuple[str, object]], sources: tuple[str, ...]) -> None:
        """A body laid out in code: a line with a record is that record's, the others the
        emitter's own text from ``sources`` as a whole."""
        whole = LineOrigin(OriginKind.FILE, files=sources)
        origins = [LineOrigin(OriginKind.SPEC, found) if (found := self._own(origin)) else whole for _, origin in lines]
        self.rendered.append((text, (*origins, whole)))  # the empty line after the last newline

    def _texts_for(self, variables: dict[str, Any]) -> dict[str, PerLine]:
        """The texts this render prints whose lines have sources of their own: the program
        it prints of a lowered kernel (the one among its variables), the kernels'
        program.json, and blocks of C++ laid out with their records (SourcedLines)."""
        found: dict[str, PerLine] = dict(self._json())
        printing = [v for v in variables.values() if isinstance(v, PrintedProgram)]
        for value in variables.values():
            if isinstance(value, LoweredKernel):
                for printed, texts in self._programs(value):
                    if not printing or printed in printing:
                        found.update(texts)
            for block in value if isinstance(value, list) else ():
                if isinstance(block, SourcedLines):
                    found[block.text] = tuple(self._own(origin) for origin in block.origins)
        return found

    def _own(self, origin: object) -> tuple[SpecSource, ...]:
        source = self.index.origin(origin) if origin is not None else None
        return (source,) if source is not None else ()

    def _programs(self, lowered: LoweredKernel) -> list[tuple[PrintedProgram, dict[str, PerLine]]]:
        key = id(lowered)
        if key not in self._kernel_texts:
            try:
                per_program = text_sources(lowered, self.index.locator, self._headers)
            except PrinterMismatch:
                # A printer this walk does not know yet: the code's lines keep their
                # template line (tests/provenance catches the loss of precision).
                per_program = []
            self._kernel_texts[key] = [(printed, {text: _each(sources) for text, sources in texts.items()}) for printed, texts in per_program]
        return self._kernel_texts[key]

    def _json(self) -> dict[str, PerLine]:
        """Each kernel's program.json text (it names its kernel, so it is one kernel's)."""
        if self._json_texts is None:
            self._json_texts = dict(json_sources(k, self.index.locator) for k in self._kernels)
        return self._json_texts

    # -- lines --------------------------------------------------------------------------
    def _pieces(self, chunks: list[_Chunk]) -> list[_Piece]:
        pieces: list[_Piece] = []
        at = 0
        for chunk in chunks:
            end = at + len(chunk.text)
            if chunk.own is None:
                pieces.append(_Piece(at, end, chunk.line, True, None, True))
            else:
                cursor = 0
                for event in chunk.inner:
                    found = chunk.text.find(event.text, cursor) if event.text else -1
                    if found < 0:
                        continue
                    if found > cursor:
                        pieces.append(_Piece(at + cursor, at + found, chunk.own.template_line, False, chunk.own, False))
                    pieces.append(_Piece(at + found, at + found + len(event.text), event.template_line, False, event, True))
                    cursor = found + len(event.text)
                if cursor < len(chunk.text):
                    specific = not chunk.inner
                    pieces.append(_Piece(at + cursor, end, chunk.own.template_line, False, chunk.own, specific))
            at = end
        return pieces

    def _event_sources(self, event: _Event, text: str, start: int, piece_start: int) -> tuple[SpecSource, ...]:
        per_line = self.texts.get(event.text)
        if per_line is not None:
            index = text.count("\n", piece_start, start)
            return per_line[index] if index < len(per_line) else ()
        if event.touched:
            return (event.touched[-1], *event.decided)
        if "\n" not in event.text:
            found = self.index.named(event.text)
            return (found,) if found is not None else ()
        return ()

    def _origins(self, text: str, chunks: list[_Chunk], template: str) -> Iterator[LineOrigin]:
        pieces = self._pieces(chunks)
        first = 0
        start = 0
        for line in text.split("\n"):
            end = start + len(line)
            while first < len(pieces) and pieces[first].end <= start:
                first += 1
            here = []
            index = first
            while index < len(pieces) and pieces[index].start < end:
                piece = pieces[index]
                lo, hi = max(piece.start, start), min(piece.end, end)
                if hi > lo and text[lo:hi].strip():
                    here.append((piece, lo))
                index += 1
            yield self._origin(text, here, template)
            start = end + 1

    def _origin(self, text: str, here: list[tuple[_Piece, int]], template: str) -> LineOrigin:
        if not here:
            return LineOrigin(OriginKind.TEMPLATE)
        specific = [(p, lo) for p, lo in here if p.specific]
        lead, lead_at = (specific or here)[0]
        line = lead.line + text.count("\n", lead.start, lead_at) if lead.literal else lead.line
        sources: list[SpecSource] = []
        for piece, lo in [*specific, *((p, lo) for p, lo in here if not p.specific)]:
            if piece.event is None:
                continue
            for found in self._event_sources(piece.event, text, lo, piece.start):
                if found not in sources:
                    sources.append(found)
        kind = OriginKind.SPEC if sources else OriginKind.TEMPLATE
        printed = any(not piece.literal for piece, _ in here)
        return LineOrigin(kind, tuple(sources), self.template_line(template, line), printed=printed)


class _TracingTemplateContext(jinja2.runtime.Context):
    """A value handed to a template function (``py(rule)``) is read as much as an
    attribute is: the function prints it."""

    def call(__self, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        tracer: Tracer = __self.environment.tracer  # type: ignore[attr-defined]
        for value in (*args, *kwargs.values()):
            tracer.touch(value)
        return super().call(__obj, *args, **kwargs)


class _TracingEnvironment(jinja2.Environment):
    """The emit environment's settings, with every read and every printed value traced.

    Its compiled templates are records of their own flavour: the code differs from the emit
    environment's (it calls ``finalize``). It calls the tracer's ``finalize`` through
    ``environment.finalize`` at render time, so one compiled template serves any tracer
    (a value finalized while compiling, a constant, is dropped by ``render``)."""

    def __init__(self, tracer: Tracer, templates: Templates) -> None:
        super().__init__(
            bytecode_cache=bytecode_cache("traced"),
            loader=templates.loader(),
            finalize=tracer.finalize,
            **SETTINGS,
        )
        self.filters.update(_filters.FILTERS)
        self.tracer = tracer
        self.context_class = _TracingTemplateContext

    def getattr(self, obj: Any, attribute: str) -> Any:
        self.tracer.touch(obj, attribute)
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        self.tracer.touch(obj, argument if isinstance(argument, str) else None)
        return super().getitem(obj, argument)


@dataclass(frozen=True)
class TracingContext(EmitContext):
    """An emit context whose renders leave their line origins with the tracer
    (:func:`ttlgen.provenance.files.trace_files` runs the emitters with it)."""

    tracer: Tracer = field(compare=False, kw_only=True)

    def render(self, template: str, **variables: Any) -> str:
        with template_errors(self.templates, template):
            return self.tracer.render(template, variables)

    def laid_out(self, lines: Sequence[tuple[str, object]], sources: tuple[str, ...]) -> str:
        text = super().laid_out(lines, sources)
        self.tracer.laid_out(text, lines, sources)
        return text
