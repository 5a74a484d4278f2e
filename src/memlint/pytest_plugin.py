"""pytest plugin for memlint verify (placeholder until the verify work lands)."""
