"""Reading LIBSVM/svmlight text and converting it (or arrays, matrices and chunks of them) into a block store.

The public names are imported on first use: a command that only reads text (``stream``, ``predict``) does not pay
for the store's writer and HDF5.
"""

from __future__ import annotations

from blocksvm._lazy import lazy_names

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


__getattr__, __dir__ = lazy_names(__name__, _LAZY)
