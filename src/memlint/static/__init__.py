"""memlint check: the static half, which reads training code and never runs it.

Bottom to top (``lint-imports`` holds each module to the layers in pyproject.toml):

- ``triggers``, ``source``, ``positions``, ``text_edits``, ``suppress``, ``discovery``,
  ``cache``, ``facts``: which rules could match a text, reading and parsing files, positions,
  text edits, ``# noqa`` comments, which files to check, the result cache, and the scope
  facts of a module (loops, grad mode, graph-carrying values...);
- ``rule`` (the base class of a rule) and ``fixes`` (what a rule proposes as a fix);
- ``engine``: one walk of a parsed module for every rule, keeping the facts;
- ``rules/``: one module per rule code of :mod:`memlint.catalogue`;
- ``module_check`` (one text through libcst and the rules), ``source_check`` (one text:
  libcst only if a rule could match), ``notebook`` (a notebook's cells as one module);
- ``runner`` (files, the cache, worker processes) and ``fixing`` (``--fix`` / ``--diff``).
"""
