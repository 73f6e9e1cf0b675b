"""Constants of the on-disk block format (see docs/FORMAT.md) and its compression filters."""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np

from blocksvm.errors import ParameterError

FORMAT_NAME = "blocksvm-store"
FORMAT_VERSION = 3
"""The newest version this blocksvm reads and writes: 3 for a store with instance weights, else 2 for a store with a
feature map, else 1."""
DENSE_VERSION = 1
"""A store without a feature map or weights is written as version 1, so older blocksvm versions still read it."""
MAPPED_VERSION = 2
"""A store with a feature map (and no weights)."""
WEIGHTED_VERSION = 3
"""A store with instance weights: a blocksvm that would train on its rows without them refuses it."""
MANIFEST = "manifest.json"
BLOCK_FILE = "block-{:05d}.h5"
FEATURES_FILE = "features.h5"
"""A compact store's feature map: dataset ``features``, the original zero-based column of each stored one."""
PARTIAL_SUFFIX = ".partial"

# Per-block datasets: name -> dtype (None: the store's value dtype).
BLOCK_DATASETS = {
    "indptr": np.dtype(np.int64),
    "indices": np.dtype(np.int32),
    "data": None,
    "labels": np.dtype(np.float64),
    "lines": np.dtype(np.int64),
}
WEIGHTS = "weights"
"""The optional per-block dataset of instance weights (float64, one a row), in a weighted store only."""
VALUE_DTYPES = ("float32", "float64")
# HDF5 1.10's chunk indexes, not B-trees: a block of one row takes 6 kB on disk, not 18 kB
BLOCK_LIBVER = ("v110", "latest")
CHUNK_ELEMENTS = 1 << 20

COMPRESSIONS = ("blosc-lz4", "lzf", "gzip", "zstd", "none")
DEFAULT_COMPRESSION = "blosc-lz4"


def store_version(mapped: bool, weighted: bool) -> int:
    """The oldest format version that describes a store: one with weights, else one with a feature map, else 1."""
    return WEIGHTED_VERSION if weighted else MAPPED_VERSION if mapped else DENSE_VERSION


def compression_filters(name: str) -> dict:
    """h5py ``create_dataset`` keyword arguments for a compression name.

    ``gzip`` and ``zstd`` take an optional level: ``gzip-6``, ``zstd-3``. Every choice adds
    HDF5's fletcher32 checksum, so corruption is detected when a block is read.
    """
    kind, _, level = name.partition("-")
    if name == "blosc-lz4":
        import hdf5plugin

        filters = dict(hdf5plugin.Blosc(cname="lz4", clevel=5, shuffle=hdf5plugin.Blosc.SHUFFLE))
    elif kind == "lzf" and not level:
        filters = {"compression": "lzf", "shuffle": True}
    elif kind == "gzip":
        filters = {"compression": "gzip", "compression_opts": _level(name, level, 4, 9), "shuffle": True}
    elif kind == "zstd":
        import hdf5plugin

        filters = dict(hdf5plugin.Zstd(clevel=_level(name, level, 3, 22)))
    elif name == "none":
        filters = {}
    else:
        raise ParameterError(
            f"unknown compression {name!r}; choose one of {', '.join(COMPRESSIONS)} (gzip-N and zstd-N set a level)"
        )
    filters["fletcher32"] = True
    return filters


def _level(name: str, level: str, default: int, largest: int) -> int:
    if not level:
        return default
    if not level.isdigit() or not 1 <= int(level) <= largest:
        raise ParameterError(f"compression {name!r}: the level must be an integer in 1..{largest}")
    return int(level)


def ensure_filters_available(name: str) -> None:
    """Register the HDF5 plugin filters a store compressed with ``name`` needs for reading."""
    if name.startswith(("blosc", "zstd")):
        import hdf5plugin  # noqa: F401 - registers the filters with HDF5


def file_crc32(path: Path) -> int:
    """CRC-32 of a file's bytes, as the manifest records it for each block file."""
    crc = 0
    with open(path, "rb") as f:
        while piece := f.read(8 << 20):
            crc = zlib.crc32(piece, crc)
    return crc
