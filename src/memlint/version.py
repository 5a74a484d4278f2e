"""memlint's version, and the repository it is released from (SARIF's informationUri; the
README's pre-commit and GitHub Action snippets name its tag v<version>). pyproject.toml holds
the same two; tests/test_release.py keeps them together, and scripts/release.py changes them."""

__version__ = "0.1.0"
REPOSITORY = "https://github.com/torch-memlint/memlint"
