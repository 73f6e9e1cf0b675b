"""The block store: a directory of compressed HDF5 blocks and a manifest, and its column layout (docs/FORMAT.md);
the doors the learners read them through (blocks read ahead, kept in memory, shards of them; the columns in
pieces).

Its names are imported on first use: a conversion writes blocks (:mod:`.writer`) without the reader and the column
layout (scipy and the column kernels, 30-60 ms a run).
"""

from blocksvm._lazy import lazy_names

# name -> the module that defines it
_LAZY = {
    "BiasColumn": "blocksvm.store.column_pieces",
    "ColumnPiece": "blocksvm.store.column_pieces",
    "ColumnPieces": "blocksvm.store.column_pieces",
    "ColumnBlock": "blocksvm.store.columns",
    "ColumnLayout": "blocksvm.store.columns",
    "ensure_columns": "blocksvm.store.columns",
    "write_columns": "blocksvm.store.columns",
    "KeptBlocks": "blocksvm.store.kept",
    "Block": "blocksvm.store.reader",
    "BlockStore": "blocksvm.store.reader",
    "ReadStats": "blocksvm.store.reader",
    "ShardView": "blocksvm.store.reader",
    "SpaceView": "blocksvm.store.reader",
    "reading": "blocksvm.store.reader",
    "same_space": "blocksvm.store.reader",
    "StoreBuilder": "blocksvm.store.writer",
    "write_block": "blocksvm.store.writer",
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = lazy_names(__name__, _LAZY)
