"""python -m memlint: the same as the memlint command."""

from memlint.cli import main

if __name__ == "__main__":
    main()
