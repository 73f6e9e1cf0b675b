"""Reading LIBSVM/svmlight text and converting it (or arrays, matrices and chunks of them) into a block store.

The public names are imported on first use: a command that only reads text (``stream``, ``predict``) does not pay
for the store's writer and HDF5.
"""

from __future__ import annotations

import importlib

# name -> the module that defines it
_LAZY = {
    "ConvertSummary": "blocksvm.io.conversion",
    "convert": "blocksvm.io.conversion",
    "write_store": "blocksvm.io.conversion",
    "iter_parsed": "blocksvm.io.libsvm",
    "load_libsvm": "blocksvm.io.libsvm",
    "parse_chunk": "blocksvm.io.libsvm",
    "write_columns": "blocksvm.store.columns",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'blocksvm.io' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
