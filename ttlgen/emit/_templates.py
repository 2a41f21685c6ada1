"""Where the shipped templates are (kept apart from the renderer, so finding them costs no
Jinja import: a cached `check` needs the location only to fingerprint the templates)."""

from __future__ import annotations

from pathlib import Path


def default_templates_dir() -> Path:
    """The templates shipped with ttlgen: in the wheel, or beside the package in a checkout."""
    package = Path(__file__).resolve().parent.parent
    installed = package / "_templates"  # wheel layout (see pyproject force-include)
    return installed if installed.is_dir() else package.parent / "templates"
