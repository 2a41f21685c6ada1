"""Runtime modules of the generated ABI codecs: stdlib-only Python that every layout's
package ships verbatim (``words`` becomes ``<package>/_words.py``), kept here so the lint
and type gates check it and tests import it where it lives."""
