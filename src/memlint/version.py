"""memlint's version: one place, read by the package, the cache keys, SARIF and the CLI."""

__version__ = "0.1.0"
