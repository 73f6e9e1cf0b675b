"""The block store: a directory of compressed HDF5 blocks and a manifest (docs/FORMAT.md)."""

from blocksvm.store.reader import Block, BlockStore, ReadStats, ShardView, SpaceView, reading, same_space
from blocksvm.store.writer import StoreBuilder, write_block

__all__ = [
    "Block",
    "BlockStore",
    "ReadStats",
    "ShardView",
    "SpaceView",
    "StoreBuilder",
    "reading",
    "same_space",
    "write_block",
]
