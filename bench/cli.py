"""Command-line helpers shared by the benchmark scripts (no torch import)."""
from __future__ import annotations


def option(argv, name, default=None):
    """The value of `--name=v` or `--name v` in argv, else `default`."""
    for i, a in enumerate(argv):
        if a == name and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return default
