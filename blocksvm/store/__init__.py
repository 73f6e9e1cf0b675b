"""The block store: a directory of compressed HDF5 blocks and a manifest, and its column layout (docs/FORMAT.md)."""

from blocksvm.store.columns import ColumnBlock, ColumnLayout, ensure_columns, write_columns
from blocksvm.store.reader import Block, BlockStore, ReadStats, ShardView, SpaceView, reading, same_space
from blocksvm.store.writer import StoreBuilder, write_block

__all__ = [
    "Block",
    "BlockStore",
    "ColumnBlock",
    "ColumnLayout",
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
