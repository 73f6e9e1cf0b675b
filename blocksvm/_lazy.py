"""A package whose public names are imported on first use (PEP 562): a command pays only for the modules it uses."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable


def lazy_names(package: str, names: dict[str, str]) -> tuple[Callable, Callable]:
    """The package's ``__getattr__`` and ``__dir__``: ``names`` maps each public name to the module that defines it.
    (A module of the package is never named as one of its functions: once imported, it would stand in its place.)"""

    def __getattr__(name: str):
        if name in names:
            return getattr(importlib.import_module(names[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *names})

    return __getattr__, __dir__
