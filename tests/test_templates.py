"""Templates are presentation only: no Python source lives there, `build --templates DIR`
renders from that tree alone, and planning reads no template at all."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import GENERATED, REPO, SPECS, TEMPLATES, run_cli


def test_templates_hold_no_python_source() -> None:
    found = sorted(p.relative_to(TEMPLATES).as_posix() for p in TEMPLATES.rglob("*.py"))
    assert not found, f"Python source under templates/ (move it into the ttlgen package): {found}"


def test_build_renders_the_resolver_tables_from_the_given_templates(tmp_path: Path) -> None:
    templates = tmp_path / "templates"
    shutil.copytree(TEMPLATES, templates)
    table = templates / "python" / "ttl_kernel_config" / "targets.py.j2"
    text = table.read_text(encoding="utf-8")
    anchor = "RUNTIME_APIS: Mapping[str, RuntimeApi]"
    assert anchor in text
    table.write_text(text.replace(anchor, "# rendered from the edited template tree\n" + anchor), encoding="utf-8")
    out = tmp_path / "generated"
    result = run_cli("build", "--specs", SPECS, "--out", out, "--templates", templates)
    assert result.exit_code == 0, result.stderr
    rendered = (out / "python" / "ttl_kernel_config" / "targets.py").read_text(encoding="utf-8")
    assert "# rendered from the edited template tree\n" in rendered
    assert "edited template tree" not in (GENERATED / "python" / "ttl_kernel_config" / "targets.py").read_text(encoding="utf-8")
    # Everything but the edited table (and the manifest of template hashes) is as committed.
    for path in out.rglob("*"):
        relative = path.relative_to(out)
        if path.is_file() and relative.as_posix() not in ("python/ttl_kernel_config/targets.py", "MANIFEST"):
            assert path.read_bytes() == (GENERATED / relative).read_bytes(), relative


# Loads, validates, models and plans every kernel of the specs in a fresh interpreter,
# then reports whether anything that renders was imported.
PLAN_ONLY = """\
import sys
from pathlib import Path
from ttlgen.model.project import build_project
from ttlgen.plan.project import plan_project
from ttlgen.spec.load import load_specs
from ttlgen.validate.documents import validate_documents
documents = load_specs(Path(sys.argv[1]))
assert not validate_documents(documents)
plan = plan_project(build_project(documents))
assert plan.kernels and plan.tables is not None
rendering = sorted(m for m in sys.modules if m == "jinja2" or m.startswith(("jinja2.", "ttlgen.emit")))
print(",".join(rendering) or "none")
"""


def test_planning_renders_nothing_and_reads_no_template() -> None:
    result = subprocess.run(
        [sys.executable, "-c", PLAN_ONLY, str(SPECS)], capture_output=True, text=True, cwd=REPO, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "none"


# `ttlgen validate` in a fresh interpreter, reporting whether anything that renders was imported.
VALIDATE_ONLY = """\
import sys
from ttlgen.cli import app
sys.argv = ["ttlgen", "validate", "--specs", sys.argv[1]]
try:
    app()  # what the console entry point runs (main() then ends the process at once)
except SystemExit as stop:
    assert stop.code in (0, None), stop.code
rendering = sorted(m for m in sys.modules if m == "jinja2" or m.startswith(("jinja2.", "ttlgen.emit")))
print(",".join(rendering) or "none", file=sys.stderr)
"""


def test_validate_imports_no_renderer() -> None:
    result = subprocess.run(
        [sys.executable, "-c", VALIDATE_ONLY, str(SPECS)], capture_output=True, text=True, cwd=REPO, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip().splitlines()[-1] == "none"


# Templates are input (README's workflow edits them): a template that cannot be rendered is
# bad input, exit 2 with one line at the template's file and line, never a traceback.
TABLE = "python/ttl_kernel_config/targets.py.j2"


def edited_templates(tail: bytes) -> tuple[Path, int]:
    """templates/, a copy of the shipped tree whose resolver table ends with ``tail``; the
    line ``tail`` is on."""
    shutil.copytree(TEMPLATES, "templates")
    table = Path("templates") / TABLE
    text = table.read_bytes()
    table.write_bytes(text + tail)
    return Path("templates"), text.count(b"\n") + 1


def build_with(templates: Path) -> tuple[int, str, bool]:
    """build's exit code, its stderr, and whether it created its output tree."""
    result = run_cli("build", "--specs", SPECS, "--out", "out", "--templates", templates)
    return result.exit_code, result.stderr, Path("out").exists()


def test_a_template_syntax_error_is_bad_input_at_its_line_and_writes_nothing() -> None:
    templates, line = edited_templates(b"{% if %}\n")
    assert build_with(templates) == (
        2, f"ttlgen: templates/{TABLE}:{line}: template syntax error: Expected an expression, got 'end of statement block'\n", False
    )  # fmt: skip


def test_an_undefined_name_in_a_template_is_bad_input_at_its_line() -> None:
    templates, line = edited_templates(b"{{ nosuchvar.attr }}\n")
    assert build_with(templates) == (2, f"ttlgen: templates/{TABLE}:{line}: 'nosuchvar' is undefined\n", False)


def test_a_template_that_is_not_utf8_is_bad_input_at_its_line() -> None:
    templates, line = edited_templates(b"\xff\n")
    assert build_with(templates) == (2, f"ttlgen: templates/{TABLE}:{line}: not UTF-8 text (byte 0xff); templates are UTF-8\n", False)


def test_a_missing_template_is_bad_input_naming_it() -> None:
    Path("empty").mkdir()
    code, stderr, written = build_with(Path("empty"))
    assert (code, written) == (2, False)
    assert stderr.startswith("ttlgen: empty: no template '") and stderr.count("\n") == 1, stderr


def test_explain_reports_a_template_error_as_build_does() -> None:
    templates, line = edited_templates(b"{{ nosuchvar.attr }}\n")
    target = f"{GENERATED / TABLE.removesuffix('.j2')}:1"
    result = run_cli("explain", target, "--specs", SPECS, "--out", GENERATED, "--templates", templates)
    assert (result.exit_code, result.stderr) == (2, f"ttlgen: templates/{TABLE}:{line}: 'nosuchvar' is undefined\n")
