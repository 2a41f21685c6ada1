"""Compare the programs of two versions: handler ids and flags, argument positions and names.

A program's handlers are part of the ABI of the layout it runs on (its headers and Python
builders are generated into that layout's package), so the layout's version covers them.
A handler's id and flags are on the wire, and so is each argument's word in the command;
an argument's name is the C++ accessor and the builder keyword callers write.
"""

from __future__ import annotations

from ttlgen.compat.changes import Area, Change, Impact, Location
from ttlgen.compat.matching import by_name, match
from ttlgen.compat.sides import Side
from ttlgen.model.programs import Handler, Program


def _flags(h: Handler) -> str:
    return ", ".join(h.flags) if h.flags else "none"


class ProgramDiff:
    def __init__(self, old_side: Side, new_side: Side, old: Program, new: Program) -> None:
        self.old_side, self.new_side = old_side, new_side
        self.old, self.new = old, new
        self.changes: list[Change] = []

    def _add(self, impact: Impact, kind: str, subject: str, message: str, before: Location | None, after: Location | None) -> None:
        self.changes.append(Change(Area.PROGRAMS, impact, kind, subject, message, before, after, layout=self.new.layout.name))

    def run(self) -> list[Change]:
        o, n = self.old, self.new
        of = f"program {n.name!r}"
        if o.layout.name != n.layout.name:
            self._add(
                Impact.WIRE, "program-layout", of, f"runs on layout {o.layout.name!r} -> {n.layout.name!r}",
                self.old_side.locate(o.mark), self.new_side.locate(n.mark),
            )
        handlers = match(o.handlers, n.handlers, lambda h: h.name, lambda h: h.id)
        for oh, nh in handlers.common:
            self.handler(oh, nh)
        for oh, nh in handlers.renamed:
            self._add(
                Impact.SOURCE, "handler-renamed", f"handler {oh.name!r} of {of}",
                f"renamed to {nh.name!r} (id {oh.id} unchanged): {oh.names.cpp_handler} -> {nh.names.cpp_handler}, "
                f"{oh.names.py_builder} -> {nh.names.py_builder}",
                self.old_side.node(oh.name_mark), self.new_side.node(nh.name_mark),
            )
        for oh in handlers.removed:
            self._add(
                Impact.WIRE, "handler-removed", f"handler {oh.name!r} of {of}", f"removed (id {oh.id})",
                self.old_side.node(oh.name_mark), None,
            )
        for nh in handlers.added:
            self._add(
                Impact.COMPATIBLE, "handler-added", f"handler {nh.name!r} of {of}", f"new handler, id {nh.id}",
                None, self.new_side.node(nh.name_mark),
            )
        return self.changes

    def handler(self, oh: Handler, nh: Handler) -> None:
        subject = f"handler {nh.name!r} of program {self.new.name!r}"
        old_node = self.old_side.node(oh.name_mark)
        if oh.id != nh.id:
            self._add(
                Impact.WIRE, "handler-renumbered", subject, f"id {oh.id} -> {nh.id}",
                self.old_side.locate(oh.name_mark, "id"), self.new_side.locate(nh.name_mark, "id"),
            )
        if oh.flag_value != nh.flag_value:
            self._add(
                Impact.WIRE, "handler-flags", subject, f"flags {_flags(oh)} ({oh.flag_value}) -> {_flags(nh)} ({nh.flag_value})",
                self.old_side.locate(oh.name_mark, "flags"), self.new_side.locate(nh.name_mark, "flags"),
            )
        args = match(oh.args, nh.args, lambda a: a.name, lambda a: a.index)
        for oa, na in args.common:
            if oa.index != na.index:
                self._add(
                    Impact.WIRE, "argument-moved", f"argument {na.name!r} of {subject}",
                    f"word {oa.index} ({oa.field}) -> {na.index} ({na.field})",
                    self.old_side.node(oa.mark), self.new_side.node(na.mark),
                )
        for oa, na in args.renamed:
            self._add(
                Impact.SOURCE, "argument-renamed", f"argument {oa.name!r} of {subject}",
                f"renamed to {na.name!r} (word {oa.index}): accessor {oa.names.cpp_accessor} -> {na.names.cpp_accessor}, "
                f"builder keyword {oa.names.py_name} -> {na.names.py_name}",
                self.old_side.node(oa.mark), self.new_side.node(na.mark),
            )
        for oa in args.removed:
            self._add(
                Impact.SOURCE, "argument-removed", f"argument {oa.name!r} of {subject}",
                f"removed (word {oa.index}): accessor {oa.names.cpp_accessor} and builder keyword {oa.names.py_name} are gone",
                self.old_side.node(oa.mark), None,
            )
        for na in args.added:
            self._add(
                Impact.SOURCE, "argument-added", f"argument {na.name!r} of {subject}",
                f"new argument in word {na.index}: the builder {nh.names.py_builder} requires keyword {na.names.py_name}",
                old_node, self.new_side.node(na.mark),
            )


def compare_programs(old_side: Side, new_side: Side) -> list[Change]:
    changes: list[Change] = []
    for name, old, new in by_name(old_side.project.programs.programs, new_side.project.programs.programs, lambda p: p.name):
        if old is not None and new is not None:
            changes += ProgramDiff(old_side, new_side, old, new).run()
        elif old is not None:
            changes.append(
                Change(
                    Area.PROGRAMS, Impact.WIRE, "program-removed", f"program {name!r}",
                    f"removed with its {len(old.handlers)} handlers", old_side.node(old.mark), None, layout=old.layout.name,
                )
            )
        elif new is not None:
            changes.append(
                Change(
                    Area.PROGRAMS, Impact.COMPATIBLE, "program-added", f"program {name!r}",
                    f"new program of {len(new.handlers)} handlers", None, new_side.node(new.mark), layout=new.layout.name,
                )
            )
    return changes
