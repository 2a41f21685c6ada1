"""The regenerated reference tables (docs/komorebi-abi.md) agree with every offset and code
of the hand-written runtime reference, which the ABI spec was written from.

Both sides are parsed: the reference's copy-pasted tables with patterns for the ways it
writes a fact ("1 (kGaveStop)", "| 0x410 | KM_CONTROL_STOP |", "38 kStRuns, 41 ..."), the
generated page as the Markdown tables it is.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from abi_support import REPO

REFERENCE = REPO.parent / "shared" / "reference" / "tensix-runtime-reference.md"

Table = list[dict[str, str]]


@pytest.fixture(scope="module")
def reference() -> str:
    if not REFERENCE.is_file():
        pytest.skip(f"the runtime reference is not at {REFERENCE} (shared/ is not beside the repository)")
    return REFERENCE.read_text(encoding="utf-8")


def _section(text: str, start: str, end: str) -> str:
    begin = text.index(start)
    return text[begin : text.index(end, begin + len(start))]


def _cells(row: str) -> list[str]:
    parts = re.split(r"(?<!\\)\|", row.strip())[1:-1]
    return [p.strip().replace("\\|", "|").replace("`", "") for p in parts]


@pytest.fixture(scope="module")
def docs(abi_out: Path) -> dict[str, Table]:
    """Every table of the generated page, keyed by the heading above it."""
    tables: dict[str, Table] = {}
    heading = ""
    header: list[str] | None = None
    for line in (abi_out / "docs" / "komorebi-abi.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            heading, header = line.lstrip("#").strip().replace("`", ""), None
        elif line.startswith("|---"):
            continue
        elif line.startswith("|"):
            if header is None:
                header = _cells(line)
                tables[heading] = []
            else:
                tables[heading].append(dict(zip(header, _cells(line), strict=True)))
    return tables


def _table(docs: dict[str, Table], prefix: str) -> Table:
    """The table under the heading that is ``prefix`` or starts with ``prefix`` and a space."""
    (name,) = [n for n in docs if n == prefix or n.startswith(prefix + " ")]
    return docs[name]


def _codes(docs: dict[str, Table], prefix: str) -> dict[int, dict[str, str]]:
    return {int(row["Code"]): row for row in _table(docs, prefix) if row["Code"].isdigit()}


def _words(docs: dict[str, Table], prefix: str) -> dict[str, int]:
    """C++ name -> first word index."""
    return {row["C++"]: int(row["Word"].split()[0]) for row in _table(docs, prefix) if row["C++"]}


def test_control_block_offsets(reference: str, docs: dict[str, Table]) -> None:
    block = _section(reference, "Control block¶", "Runtime buffers")
    expected = {name: int(offset, 16) for offset, name in re.findall(r"^\| (0x[0-9A-F]+) \| (KM_CONTROL_\w+) \|", block, re.M)}
    assert len(expected) == 15  # KM_CONTROL_RING .. KM_CONTROL_X280, then KM_CONTROL_BYTES
    generated = {row["Name"]: int(row["Offset"], 16) for row in _table(docs, "Block control") if row["Name"] != "-"}
    assert generated == expected


def test_gave_up_codes(reference: str, docs: dict[str, Table]) -> None:
    section = _section(reference, "| Code | Name | Meaning |", "| Where | Name |")
    expected = {int(code): (cpp, name) for code, cpp, name in re.findall(r"^(\d+) \((kGave\w+)\) \|\n(\w+) \|", section, re.M)}
    assert len(expected) == 4
    expected[0] = ("", "-")  # "| 0 | - | did not give up |"
    assert re.search(r"^\| 0 \| - \| did not give up \|", section, re.M)
    generated = _codes(docs, "gave")
    assert {code: (row["C++"], row["Name"]) for code, row in generated.items() if code} == {
        code: v for code, v in expected.items() if code
    }
    assert generated[0]["Name"] == "-"


def test_where_codes(reference: str, docs: dict[str, Table]) -> None:
    section = _section(reference, "| Where | Name | Kernel: waiting for |", "How each kernel left")
    expected = {int(code): name for code, name in re.findall(r"^\| (\d+) \| (\w+|-) \|", section, re.M)}
    assert len(expected) == 18
    generated = {code: row["Name"] for code, row in _codes(docs, "where").items()}
    assert generated == expected
    # The two the reference names in C++ for programs' own waits.
    assert {_codes(docs, "where")[7]["C++"], _codes(docs, "where")[4]["C++"]} == {"kWhereData", "kWhereStall"}


def test_end_codes(reference: str, docs: dict[str, Table]) -> None:
    expected = {cpp: int(n) for n, cpp in re.findall(r"^(\d)\. (kEnd\w+):", reference, re.M)}
    assert len(expected) == 3
    assert {row["C++"]: code for code, row in _codes(docs, "end").items()} == expected


def test_state_words(reference: str, docs: dict[str, Table]) -> None:
    section = _section(reference, "State words¶", "Control block¶")
    expected = {cpp: int(index) for index, cpp in re.findall(r"(\d+)(?: to \d+)? \(?(kSt[A-Za-z]+)", section)}
    assert len(expected) == 12
    pairs = re.search(r"^\| (\d+), \d+ / (\d+), \d+ / (\d+), \d+ \| gave-up word and its sequence: reader / writer / compute", section, re.M)
    assert pairs is not None
    expected |= {"kStReader": int(pairs[1]), "kStWriter": int(pairs[2]), "kStCompute": int(pairs[3])}
    assert "48 words from KM_CONTROL_STATE" in section
    assert _words(docs, "state") == expected
    assert "state (48 words, kStWords)" in docs


def test_state_words_fill_the_state_region(docs: dict[str, Table]) -> None:
    rows = {row["Name"]: row for row in _table(docs, "Block control")}
    assert rows["KM_CONTROL_STATE"]["Size"] == "0xC0"  # 48 words of 4 bytes


def test_flags_and_handlers(reference: str, docs: dict[str, Table]) -> None:
    flags = {name: int(value) for name, value in re.findall(r"(KM_FLAG_\w+) \((\d+)\)", reference)}
    assert {row["C"]: code for code, row in _codes(docs, "flag").items()} == flags
    handlers = {name: int(value) for value, name in re.findall(r"^(\d+) \((KM_HANDLER_(?:NOP|EXIT))\)", reference, re.M)}
    user = re.search(r"^(\d+) to (\d+) \((KM_HANDLER_USER_MAX)\)", reference, re.M)
    dispatcher = re.search(r"^\| (\d+) to (\d+) \| commands to the dispatcher", reference, re.M)
    assert user is not None and dispatcher is not None and len(handlers) == 2
    table = _table(docs, "handler")
    generated = {row["C"]: int(row["Code"]) for row in table if row["Code"].isdigit()}
    assert generated == handlers
    ranges = {row["Name"]: (row["Code"], row["C"]) for row in table if " to " in row["Code"]}
    assert ranges["user"] == (f"{user[1]} to {user[2]}", f"KM_HANDLER_USER_MIN to {user[3]}")
    assert ranges["dispatcher"][0] == f"{dispatcher[1]} to {dispatcher[2]}"


def test_start_up_arguments(reference: str, docs: dict[str, Table]) -> None:
    section = _section(reference, "Start-up arguments¶", "Timed waits¶")
    reader = _section(section, "| Word | Meaning |", "Compute:")
    names = [n.strip() for row in re.findall(r"^([a-z_, ]+) \|$", reader, re.M) for n in row.split(",")]
    count = re.search(r"runtime arguments 0 to kArgs - 1 \((\d+) words", section)
    assert count is not None and len(names) == int(count[1]) == 19
    args = _table(docs, "args")
    assert [row["Name"] for row in args] == names
    assert [int(row["Word"]) for row in args] == list(range(len(names)))
    assert "args (19 words, kArgs)" in docs
    compute = re.search(r"Compute: ((?:kCArg\w+, )+kCArg\w+) \((\d+) words\)", section)
    assert compute is not None
    expected = {name: i for i, name in enumerate(compute[1].split(", "))}
    assert _words(docs, "compute_args") == expected
    assert f"compute_args ({compute[2]} words, kComputeArgs)" in docs


def test_runtime_circular_buffers(reference: str, docs: dict[str, Table]) -> None:
    found = re.search(r"circular buffers (\d+) and (\d+) carry the tokens \((kCb\w+),\s+(kCb\w+),.*?Buffer (\d+) \((kCb\w+)\)", reference, re.S)
    assert found is not None
    expected = {found[3]: int(found[1]), found[4]: int(found[2]), found[6]: int(found[5])}
    assert {row["C++"]: code for code, row in _codes(docs, "cb").items()} == expected
    program = {row["Name"]: row["Code"] for row in _table(docs, "cb") if " to " in row["Code"]}
    assert program == {"program": f"0 to {min(expected.values()) - 1}"}  # "any circular buffer except 29 to 31"


def test_trace_and_done_words(reference: str, docs: dict[str, Table]) -> None:
    trace = re.findall(r"^- (kTrace\w+):", reference, re.M)
    assert _words(docs, "trace") == {name: i for i, name in enumerate(trace)} and len(trace) == 4
    done = {cpp: int(word) for word, cpp in re.findall(r"word (\d) \((kDone\w+)\)", reference)}
    assert {k: v for k, v in _words(docs, "done").items() if k in done} == done and len(done) == 2
    slots = re.search(r"(\d+) slots of (\d+) bytes: word 0 counts completion reports", reference)
    assert slots is not None
    rows = {row["Name"]: row for row in _table(docs, "Block control")}
    assert rows["KM_CONTROL_DONE"]["Size"].endswith(f"({slots[1]} x {slots[2]})")


def _terms(formula: str) -> set[str]:
    return {t.strip() for t in formula.replace("\\|", "|").split("|")}


def test_command_and_bit_field_words(reference: str, docs: dict[str, Table]) -> None:
    command = {row["Field"]: row for row in _table(docs, "Struct km_command_t (64 bytes)")}
    assert [int(command[f"land{i}"]["Offset"]) for i in (1, 2, 3)] == [16, 32, 48]
    assert int(command["sequence"]["Offset"]) == 0
    assert {f"a{i}" for i in range(10)} <= set(command)
    hdr = re.search(r"^(handler \\\| flags << 8 \\\| slot << 16) \|", reference, re.M)
    group = re.search(r"^(first \\\| count << 16):", reference, re.M)
    gave = re.search(r"A gave-up word is (code \| where << 8 \| slot << 16)", reference)
    magic = re.search(r"(0x4B000000 \\\| tag << 8 \\\| me):", reference)
    assert hdr and group and gave and magic
    words = {name.split(" = ")[0]: _terms(name.split(" = ")[1]) for name in docs if " = " in name}
    assert words["hdr"] == _terms(hdr[1])
    assert words["group"] == _terms(group[1])
    assert _terms(gave[1]) <= words["gave_up"]  # plus the port in the top byte
    assert words["magic"] == _terms(magic[1].replace("0x4B000000", "0x4B000000"))


def test_limit_units(reference: str, docs: dict[str, Table]) -> None:
    assert "1024-cycle units" in reference
    constants = {row["Name"]: row for row in _table(docs, "Constants")}
    assert constants["limit_cycles"]["Value"] == "1024"
