"""python -m memlint: the same as the memlint command."""

from memlint.launcher import main

if __name__ == "__main__":
    main()
