"""The "generated, do not edit" header, chosen by file extension in one place."""

from __future__ import annotations

from pathlib import PurePosixPath

from ttlgen.emit._base import GeneratedFile
from ttlgen.emit._notice import NOTICE
from ttlgen.emit._text import c_comment_end, c_comment_text, json_text, visible
from ttlgen.emit._text import lines as text_lines

_LINE_COMMENT = {".py": "#", ".h": "//", ".hpp": "//", ".c": "//", ".cpp": "//", ".cc": "//", ".inc": "//"}


def header_lines(sources: tuple[str, ...]) -> list[str]:
    lines = [NOTICE]
    if sources:
        lines.append("Sources:")
        lines.extend(f"  {source}" for source in sources)
    return lines


def _commented(lines: list[str], mark: str) -> list[str]:
    """The header's lines as comment text: a source's name is a file name, which the loader
    keeps to valid UTF-8 without control characters but may still end a comment (``*/``)."""
    if mark == "//":
        return [c_comment_end(piece) for line in lines for piece in c_comment_text(line)]
    return [visible(piece) for line in lines for piece in text_lines(line)]


def _normalise(body: str) -> str:
    # LF only, and exactly one trailing newline, whatever the template produced.
    text = body.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n")
    return text + "\n"


def finalize(file: GeneratedFile) -> bytes:
    """The bytes written to disk: header plus normalised body."""
    suffix = PurePosixPath(file.path).suffix
    body = _normalise(file.body)
    lines = header_lines(file.sources)
    if suffix in _LINE_COMMENT:
        mark = _LINE_COMMENT[suffix]
        head = "".join(f"{mark} {line}".rstrip() + "\n" for line in _commented(lines, mark))
        return (head + "\n" + body).encode("utf-8")
    if suffix == ".md":
        # An HTML comment ends at the first "-->".
        shown = (visible(piece).replace("-->", "--\\>") for line in lines for piece in text_lines(line))
        head = "<!--\n" + "".join(f"{line}\n" for line in shown) + "-->\n"
        return (head + "\n" + body).encode("utf-8")
    if suffix == ".json":
        # JSON has no comments: the notice is the object's first key.
        if not body.startswith("{\n"):
            raise ValueError(f"{file.path}: a generated JSON file must be an object rendered with indent")
        comment = NOTICE + (" Sources: " + ", ".join(file.sources) if file.sources else "")
        return ("{\n  \"$comment\": " + json_text(comment) + ",\n" + body[2:]).encode("utf-8")
    raise ValueError(f"{file.path}: no header style for files ending in {suffix!r}")
