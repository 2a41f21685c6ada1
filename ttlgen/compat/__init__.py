"""Spec evolution: what a change of the specs does to the people who depend on them.

``ttlgen compat --against REF`` loads the specs at a git ref (:mod:`ttlgen.compat.git_specs`)
and in the working tree (:mod:`ttlgen.compat.sides`), builds both models and plans, and
compares them object by object, never the generated text:

- :mod:`ttlgen.compat.layout_diff`: layouts, matched by name within their parent; a thing
  that disappears while a new one appears at the same place (same value, bits, offset or
  index) is a rename, not a removal plus an addition.
- :mod:`ttlgen.compat.signatures`: the parameters of the generated C pack functions and the
  keywords of the Python command builders, derived from the model's name records.
- :mod:`ttlgen.compat.programs_diff`: programs, their handlers and arguments.
- :mod:`ttlgen.compat.capabilities`: ops, targets, relations and every shipped kernel's
  resolved plan; a kernel whose plan changes is re-resolved with one changed input at a
  time to name the change that caused it. :mod:`ttlgen.compat.spec_nodes` finds the key
  that was edited, so a capability change is located there on both sides.

:mod:`ttlgen.compat.verdict` holds each breaking change against the layout's ABI version
bump; :mod:`ttlgen.compat.render` prints the report and :mod:`ttlgen.compat.review` the
pull-request summary, with the changed spec entries (:mod:`ttlgen.compat.spec_entries`)
and the generated lines each accounts for (:mod:`ttlgen.compat.line_charges`), and the
generated files changed by the other causes, templates and ttlgen's own code and version
(:mod:`ttlgen.compat.causes`). This package is a command: it reads every stage and none
reads it.
"""
