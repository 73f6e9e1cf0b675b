"""The block store: a directory of compressed HDF5 blocks and a manifest, and its column layout (docs/FORMAT.md);
the doors the learners read them through (blocks read ahead, kept in memory, shards of them; the columns in
pieces)."""

from blocksvm.store.column_pieces import BiasColumn, ColumnPiece, ColumnPieces
from blocksvm.store.columns import ColumnBlock, ColumnLayout, ensure_columns, write_columns
from blocksvm.store.kept import KeptBlocks
from blocksvm.store.reader import Block, BlockStore, ReadStats, ShardView, SpaceView, reading, same_space
from blocksvm.store.writer import StoreBuilder, write_block

__all__ = [
    "BiasColumn",
    "Block",
    "BlockStore",
    "ColumnBlock",
    "ColumnLayout",
    "ColumnPiece",
    "ColumnPieces",
    "KeptBlocks",
    "ReadStats",
    "ShardView",
    "SpaceView",
    "StoreBuilder",
    "ensure_columns",
    "reading",
    "same_space",
    "write_block",
    "write_columns",
]
