"""Programs (``ttlgen.program/v1``): a program's own handlers on a layout's command.

Every limit comes from the layout the program names, never from a constant here: a
handler id must lie in the layout's range for program handlers (``user``, 1..239 in the
Komorebi layout), and a handler has at most as many arguments as the command struct's
argument array has words. Ids and names are unique within a program.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ttlgen.errors import DiagnosticSink, Mark
from ttlgen.model.layout import (
    RESERVED_VALUE,
    BitField,
    Enum,
    EnumRange,
    Layout,
    LayoutModel,
    Struct,
    StructArray,
    StructField,
    Word,
)
from ttlgen.model.names import ArgumentNames, HandlerNames, ProgramNamer, ProgramNames
from ttlgen.spec.document import SpecDocument

KIND = "ttlgen.program"


@dataclass(frozen=True)
class Argument:
    """One argument of a handler, carried in a field of the command struct."""

    name: str
    doc: str
    index: int  # position in the command's argument array
    field: str  # the struct field that holds it, e.g. a2
    names: ArgumentNames
    mark: Mark


@dataclass(frozen=True)
class Handler:
    """A numbered command handler of a program, with its flags and arguments."""

    name: str
    id: int
    doc: str
    flags: tuple[str, ...]  # names of values of the flags enum
    flag_value: int  # the flags or-ed together
    flag_names: tuple[str, ...]  # the flags' C macros
    args: tuple[Argument, ...]
    names: HandlerNames
    mark: Mark
    name_mark: Mark


@dataclass(frozen=True)
class CommandShape:
    """Where a program's handler id, flags and arguments live in the layout."""

    struct: Struct
    handler_field: BitField
    handler_enum: Enum
    user_range: EnumRange
    flags_field: BitField
    flags_enum: Enum
    args: StructArray
    # The command's fields a handler's builder takes from its caller: all but the handler
    # id, the flags (defaulted per handler) and the argument words (named per handler); a
    # word's free bit fields stand for the struct field holding the word.
    caller_fields: tuple[StructField | BitField, ...]

    @property
    def max_args(self) -> int:
        return len(self.args.fields)

    @property
    def caller_default(self) -> int:
        """What a builder sends in a caller field it is not given: the value the field's bits
        held while they were reserved, so adding a field to the command breaks no caller."""
        return RESERVED_VALUE


@dataclass(frozen=True)
class Program:
    """One program spec: the handlers a runtime dispatches over a layout's command struct."""

    name: str
    file: str  # the source name generated headers print (SpecDocument.source)
    doc: str
    layout: Layout
    command: CommandShape
    handlers: tuple[Handler, ...]  # sorted by id
    names: ProgramNames
    mark: Mark


@dataclass(frozen=True)
class ProgramModel:
    """Every program of the spec tree."""

    programs: tuple[Program, ...]  # sorted by name

    def for_layout(self, name: str) -> tuple[Program, ...]:
        return tuple(p for p in self.programs if p.layout.name == name)


def _held_words(layout: Layout, struct: Struct) -> Iterator[Word]:
    """The words the struct's word fields hold, in field order (the layout's own error
    names an unknown word)."""
    words = {w.name: w for w in layout.words}
    return (words[field.word] for field in struct.word_fields if field.word in words)


def _word_field(layout: Layout, struct: Struct, name: str) -> BitField | None:
    return next((bits for word in _held_words(layout, struct) for bits in word.fields if bits.name == name), None)


def _shape(doc: SpecDocument, layout: Layout, sink: DiagnosticSink) -> CommandShape | None:
    raw = doc.data["command"]

    def error(key: str, message: str) -> None:
        sink.error(doc.mark(("command", key)), message)

    struct = next((s for s in layout.structs if s.name == raw["struct"]), None)
    if struct is None:
        error("struct", f"layout {layout.name!r} has no struct {raw['struct']!r}")
        return None
    handler_field = _word_field(layout, struct, raw["handler"])
    flags_field = _word_field(layout, struct, raw["flags"])
    args = next((a for a in struct.arrays if a.name == raw["args"]), None)
    ok = True
    if handler_field is None or handler_field.enum is None:
        error("handler", f"struct {struct.name!r} has no bit field {raw['handler']!r} holding an enum")
        ok = False
    if flags_field is None or flags_field.enum is None:
        error("flags", f"struct {struct.name!r} has no bit field {raw['flags']!r} holding an enum")
        ok = False
    if args is None:
        error("args", f"struct {struct.name!r} has no array {raw['args']!r}")
        ok = False
    if not ok:
        return None
    assert handler_field is not None and handler_field.enum is not None
    assert flags_field is not None and flags_field.enum is not None and args is not None
    enums = {e.name: e for e in layout.enums}
    handler_enum = enums.get(handler_field.enum)
    flags_enum = enums.get(flags_field.enum)
    if handler_enum is None or flags_enum is None:
        return None  # the layout's own error names the unknown enum
    user_range = next((r for r in handler_enum.ranges if r.name == raw["range"]), None)
    if user_range is None:
        known = ", ".join(r.name for r in handler_enum.ranges) or "none"
        error("range", f"enum {handler_enum.name!r} has no range {raw['range']!r}; its ranges: {known}")
        return None
    return CommandShape(
        struct, handler_field, handler_enum, user_range, flags_field, flags_enum, args,
        _caller_fields(layout, struct, (handler_field.name, flags_field.name)),
    )


def _caller_fields(layout: Layout, struct: Struct, set_per_handler: tuple[str, ...]) -> tuple[StructField | BitField, ...]:
    held = (f for word in _held_words(layout, struct) for f in word.free_fields if f.name not in set_per_handler)
    return (*struct.copied, *struct.plain_fields, *held)


def _handlers(doc: SpecDocument, shape: CommandShape, namer: ProgramNamer, sink: DiagnosticSink) -> tuple[Handler, ...]:
    handlers: list[Handler] = []
    names: dict[str, Mark] = {}
    ids: dict[int, str] = {}
    flag_values = {v.name: v for v in shape.flags_enum.named_values if v.name is not None}
    rng = shape.user_range
    for i, raw in enumerate(doc.data["handlers"]):
        base = ("handlers", i)
        name: str = raw["name"]
        name_mark = doc.mark((*base, "name"))
        if name in names:
            sink.error(name_mark, f"duplicate handler name {name!r} (first declared at {names[name]})")
        else:
            names[name] = name_mark
        hid: int = raw["id"]
        id_mark = doc.mark((*base, "id"))
        if not rng.first <= hid <= rng.last:
            sink.error(
                id_mark,
                f"handler {name!r} has id {hid}, outside the {rng.name} range {rng.first}..{rng.last} "
                f"of enum {shape.handler_enum.name!r} in {doc.data['layout']!r}",
            )
        if hid in ids:
            sink.error(id_mark, f"handler {name!r} has id {hid}, which handler {ids[hid]!r} already has")
        else:
            ids[hid] = name
        flags: list[str] = raw.get("flags", [])
        value = 0
        flag_names = []
        for j, flag in enumerate(flags):
            known = flag_values.get(flag)
            if known is None:
                sink.error(
                    doc.mark((*base, "flags", j)),
                    f"unknown flag {flag!r}; the {shape.flags_enum.name!r} flags are: {', '.join(sorted(flag_values))}",
                )
                continue
            assert known.names is not None
            value |= known.value
            flag_names.append(known.names.number.c)
        raw_args: list[dict[str, Any]] = raw["args"]
        if len(raw_args) > shape.max_args:
            sink.error(
                doc.mark((*base, "args")),
                f"handler {name!r} has {len(raw_args)} arguments, but a {shape.struct.name} has "
                f"{shape.max_args} argument words (array {shape.args.name!r})",
            )
        args: list[Argument] = []
        arg_names: dict[str, Mark] = {}
        for j, arg in enumerate(raw_args):
            amark = doc.mark((*base, "args", j, "name"))
            if arg["name"] in arg_names:
                sink.error(amark, f"duplicate argument name {arg['name']!r} of handler {name!r}")
            arg_names[arg["name"]] = amark
            if j < shape.max_args:
                args.append(Argument(arg["name"], arg.get("doc", ""), j, shape.args.fields[j], namer.argument(name, arg["name"]), amark))
        handlers.append(
            Handler(name, hid, raw.get("doc", ""), tuple(flags), value, tuple(flag_names), tuple(args), namer.handler(name), doc.mark(base), name_mark)
        )
    return tuple(sorted(handlers, key=lambda h: (h.id, h.name)))


def build(documents: Sequence[SpecDocument], sink: DiagnosticSink, layouts: LayoutModel) -> ProgramModel:
    """Build every ``ttlgen.program`` document against its layout; errors go to ``sink``."""
    programs: dict[str, Program] = {}
    for doc in documents:
        if doc.kind != KIND:
            continue
        name: str = doc.data["program"]
        layout = layouts.find(doc.data["layout"])
        if layout is None:
            known = ", ".join(layout.name for layout in layouts.layouts) or "none"
            sink.error(doc.mark(("layout",)), f"unknown layout {doc.data['layout']!r}; known layouts: {known}")
            continue
        shape = _shape(doc, layout, sink)
        if shape is None:
            continue
        namer = ProgramNamer(name, layout.name)
        handlers = _handlers(doc, shape, namer, sink)
        program = Program(name, doc.source, doc.data.get("doc", ""), layout, shape, handlers, namer.program_names(), doc.mark(("program",)))
        if name in programs:
            sink.error(doc.mark(("program",)), f"duplicate program name {name!r} (also in {programs[name].mark.file})")
            continue
        programs[name] = program
    return ProgramModel(tuple(programs[n] for n in sorted(programs)))
