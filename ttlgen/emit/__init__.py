"""Emitters: one module per output kind, each a function ``emit(project, plan, ctx) ->
list[GeneratedFile]``, all listed in `ttlgen.emit.emitters.EMITTERS`.

This package's own module imports nothing, so a command that only needs the notice or the
template location (`_notice`, `_templates`) does not import the renderer.
"""
