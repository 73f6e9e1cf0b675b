"""The block store: a directory of compressed HDF5 blocks and a manifest, and its column layout (docs/FORMAT.md);
the doors the learners read them through (blocks read ahead, kept in memory, shards of them; the columns in
pieces).

Its names are imported on first use: a conversion writes blocks (:mod:`.writer`) without the reader and the column
layout (scipy and the column kernels, 30-60 ms a run).
"""

import importlib

# name -> the module of this package that defines it
_LAZY = {
    "BiasColumn": "column_pieces",
    "ColumnPiece": "column_pieces",
    "ColumnPieces": "column_pieces",
    "ColumnBlock": "columns",
    "ColumnLayout": "columns",
    "ensure_columns": "columns",
    "write_columns": "columns",
    "KeptBlocks": "kept",
    "Block": "reader",
    "BlockStore": "reader",
    "ReadStats": "reader",
    "ShardView": "reader",
    "SpaceView": "reader",
    "reading": "reader",
    "same_space": "reader",
    "StoreBuilder": "writer",
    "write_block": "writer",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    """The public names, imported on first use."""
    if name in _LAZY:
        return getattr(importlib.import_module(f"blocksvm.store.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'blocksvm.store' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
