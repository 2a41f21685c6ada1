"""Which entries of the spec files changed, each known by what it is rather than where.

An entry is a value one level under a top-level key: a mapping's entry (``enums.gave``),
a list's item (``constants``, ``handlers``) or the key itself when its value is a scalar
(``doc``). A list item is known by its ``name`` when every item of the list has a distinct
one, as the model matches things, so inserting a constant before another is one entry
added, not every later one changed; other lists are aligned by content. Each side keeps
the key paths of its own document for each changed entry, so a generated line traced to
``constants[2]`` on one side and ``constants[3]`` on the other is charged to the same
entry.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from ttlgen.compat.matching import by_name
from ttlgen.compat.sides import Side
from ttlgen.compat.spec_nodes import align, canonical
from ttlgen.errors import KeyPath, format_key_path


@dataclass(frozen=True)
class SpecEntry:
    file: str  # the source name
    key: str | None  # the top-level key; None: the whole file
    item: str | int | None = None  # the entry under it (a name, a mapping key, a list index); None: the key itself
    named: bool = False  # ``item`` is the name of a list item

    def label(self) -> str:
        """The entry as a reviewer finds it in the file: ``enums.gave``, ``constants: max_ports``."""
        if self.key is None:
            return ""
        if self.item is None:
            return format_key_path((self.key,))
        if self.named:
            return f"{format_key_path((self.key,))}: {self.item}"
        return format_key_path((self.key, self.item))


@dataclass
class EntryIndex:
    """The changed entries of one side, by the key path they have in that side's document."""

    by_path: dict[tuple[str, KeyPath], SpecEntry] = field(default_factory=dict)
    by_key: dict[tuple[str, str], list[SpecEntry]] = field(default_factory=dict)

    def add(self, entry: SpecEntry, path: KeyPath) -> None:
        self.by_path[(entry.file, path)] = entry
        if entry.key is not None:
            self.by_key.setdefault((entry.file, entry.key), []).append(entry)

    def of(self, file: str, path: KeyPath) -> list[SpecEntry]:
        """The changed entries a spec node is in or holds. A node at or below an entry is in
        it; a top-level key holds every changed entry under it; the document's root is no
        entry's (a line printed from the root is charged like template text)."""
        if not path:
            whole = self.by_path.get((file, ()))
            return [whole] if whole is not None else []
        for depth in (2, 1):
            found = self.by_path.get((file, path[:depth]))
            if found is not None:
                return [found]
        if len(path) == 1:
            return self.by_key.get((file, str(path[0])), [])
        whole = self.by_path.get((file, ()))
        return [whole] if whole is not None else []


@dataclass
class ChangedEntries:
    entries: list[tuple[SpecEntry, str]]  # each changed entry and how (added, removed, changed, new file, removed file)
    old: EntryIndex
    new: EntryIndex


def _names(items: Sequence[object]) -> list[str] | None:
    names = [item.get("name") for item in items if isinstance(item, dict)]
    if len(names) != len(items) or not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
        return None
    return [str(n) for n in names]


Pair = tuple[SpecEntry, str, KeyPath | None, KeyPath | None]  # entry, how, its path before, its path after


def _list_items(file: str, key: str, before: list[object], after: list[object]) -> Iterator[Pair]:
    old_names, new_names = _names(before), _names(after)
    if old_names is not None and new_names is not None:
        old_at = {n: i for i, n in enumerate(old_names)}
        new_at = {n: i for i, n in enumerate(new_names)}
        for name in [*old_names, *(n for n in new_names if n not in old_at)]:
            i, j = old_at.get(name), new_at.get(name)
            entry = SpecEntry(file, key, name, named=True)
            if j is None:
                yield entry, "removed", (key, i) if i is not None else None, None
            elif i is None:
                yield entry, "added", None, (key, j)
            elif before[i] != after[j]:
                yield entry, "changed", (key, i), (key, j)
        return
    for i, j in align([canonical(v) for v in before], [canonical(v) for v in after]):
        if i is not None and j is not None:
            yield SpecEntry(file, key, i), "changed", (key, i), (key, j)
        elif i is not None:
            yield SpecEntry(file, key, i), "removed", (key, i), None
        elif j is not None:
            yield SpecEntry(file, key, j), "added", None, (key, j)


def _file_entries(file: str, before: object, after: object) -> Iterator[Pair]:
    if not isinstance(before, dict) or not isinstance(after, dict):
        yield SpecEntry(file, None), "changed", (), ()
        return
    for key in [*before, *(k for k in after if k not in before)]:
        old, new = before.get(key), after.get(key)
        if key not in after:
            yield SpecEntry(file, key), "removed", (key,), None
        elif key not in before:
            yield SpecEntry(file, key), "added", None, (key,)
        elif old == new:
            continue
        elif isinstance(old, dict) and isinstance(new, dict):
            for sub in [*old, *(k for k in new if k not in old)]:
                entry = SpecEntry(file, key, sub)
                if sub not in new:
                    yield entry, "removed", (key, sub), None
                elif sub not in old:
                    yield entry, "added", None, (key, sub)
                elif old[sub] != new[sub]:
                    yield entry, "changed", (key, sub), (key, sub)
        elif isinstance(old, list) and isinstance(new, list):
            yield from _list_items(file, key, old, new)
        else:
            yield SpecEntry(file, key), "changed", (key,), (key,)


def changed_entries(old: Side, new: Side) -> ChangedEntries:
    """Each changed spec entry and how it changed; a new or removed file as a whole."""
    found = ChangedEntries([], EntryIndex(), EntryIndex())
    for file, old_doc, new_doc in by_name(old.documents, new.documents, lambda d: d.source):
        if old_doc is None:
            pairs: list[Pair] = [(SpecEntry(file, None), "new file", None, ())]
        elif new_doc is None:
            pairs = [(SpecEntry(file, None), "removed file", (), None)]
        else:
            pairs = list(_file_entries(file, old_doc.data, new_doc.data))
        for entry, how, before, after in pairs:
            found.entries.append((entry, how))
            if before is not None:
                found.old.add(entry, before)
            if after is not None:
                found.new.add(entry, after)
    return found
