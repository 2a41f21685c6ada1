"""Provenance: which spec location (or template line) produced each line of a generated file.

Nothing is recorded at build time, so ``generated/`` holds no map that could go stale and
``ttlgen build`` pays nothing for it. ``ttlgen explain`` and ``ttlgen review`` run the
emitters again with a context that traces every render (:mod:`ttlgen.provenance.tracing`):
every attribute a template reads of a model object is noted, every printed expression
records the template line it is on, and each printed value is attributed to the model
object whose attribute produced it, whose mark is a spec location. Kernel code is printed
from the kernel IR in Python rather than by a template; its lines are attributed from the
IR (:mod:`ttlgen.provenance.kernel_lines`): a call to where the spelling spec spells it, a
CB constant to its dataflow buffer, a loop to the kernel spec's loop. Whatever no spec
value reaches is attributed to its template line. :mod:`ttlgen.provenance.files` runs the
emitters this way, only those whose files are to be explained;
:mod:`ttlgen.provenance.explain` prints it.
"""
