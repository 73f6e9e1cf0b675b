"""Constants of the on-disk block format (see docs/FORMAT.md) and its compression filters."""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np

from blocksvm.errors import ParameterError
from blocksvm.schema import Array, Arrays, Field, Schema

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


# ---- what a manifest may say (blocksvm.schema): checked when a store is opened -----------------------------------

MAX_FEATURES = 1 << 31
"""Indices are int32 (the largest index 2,147,483,647), so no space is wider."""
MAX_COMPRESSION = {"none": 1, "lzf": 100, "gzip": 1100, "blosc": 300, "zstd": 40000}
"""More than any file of each compression holds: bytes of arrays per byte of file (LZF's longest back reference is
264 bytes in 3, deflate's 258 in about 2 bits, LZ4's 255 bytes a byte, Zstandard's a 128 kB block in 4 bytes), so that
a manifest whose block claims more rows than its file can hold is refused before memory is allocated for them."""
_ROW_BYTES = 8 + 8 + 8  # indptr, labels, lines: int64, float64, int64


def most_rows(file_bytes: int, compression: str) -> int:
    """The most rows a block file of ``file_bytes`` bytes compressed by ``compression`` can hold."""
    return file_bytes * MAX_COMPRESSION.get(compression.partition("-")[0], max(MAX_COMPRESSION.values())) // _ROW_BYTES


def _plain_name(value: str) -> bool:
    return value not in ("", ".", "..") and "/" not in value and "\\" not in value and "\x00" not in value


def _blocks_add_up(m: dict) -> tuple[str, str] | None:
    for total in ("rows", "nnz"):
        found = sum(b[total] for b in m["blocks"])
        if found != m[total]:
            return total, f"is {m[total]:,}, but the blocks' {total} add up to {found:,}"
    return None


def _blocks_hold(m: dict) -> tuple[str, str] | None:
    """Every block's rows fit its file, its nonzeros its rows, and its file is a plain name of its own."""
    compression, width = m["params"]["compression"], m["features"]
    if isinstance(m.get("feature_map"), dict):
        width = m["feature_map"]["count"]
    seen = set()
    for i, b in enumerate(m["blocks"]):
        if not _plain_name(b["file"]) or b["file"] in seen or b["file"] in (MANIFEST, FEATURES_FILE):
            return f"blocks[{i}].file", f"is {b['file']!r}: a block's file is a name of its own inside the store"
        seen.add(b["file"])
        most = most_rows(b["bytes"], compression)
        if b["rows"] > most:
            return f"blocks[{i}].rows", (
                f"is {b['rows']:,}, more than a file of {b['bytes']:,} bytes compressed by {compression} can hold "
                f"({most:,} at most)"
            )
        if b["nnz"] > b["rows"] * width:
            return f"blocks[{i}].nnz", f"is {b['nnz']:,}, more than its {b['rows']:,} rows of {width:,} features hold"
    return None


def _classes_sorted(m: dict) -> tuple[str, str] | None:
    classes, counts = m["classes"], m["label_counts"]
    if any(a >= b for a, b in zip(classes, classes[1:])):
        return "classes", "is not sorted and distinct"
    if len(counts) != len(classes):
        return "label_counts", f"has {len(counts):,} counts for {len(classes):,} classes"
    if sum(counts) != m["rows"]:
        return "label_counts", f"add up to {sum(counts):,}, the store has {m['rows']:,} rows"
    return None


def _version_holds(m: dict) -> tuple[str, str] | None:
    needed = store_version("feature_map" in m, "weights" in m)
    if m["version"] < needed:
        return (
            "version",
            f"is {m['version']}, but a store with a {'weights' if 'weights' in m else 'feature_map'} "
            f"is version {needed} or newer",
        )
    return None


def _compression_known(m: dict) -> tuple[str, str] | None:
    try:
        compression_filters(m["params"]["compression"])
    except (ParameterError, ImportError) as exc:
        return "params.compression", f"is {m['params']['compression']!r}: {exc}"
    return None


def _feature_map_fits(m: dict) -> tuple[str, str] | None:
    entry = m.get("feature_map")
    if entry is not None and entry["count"] > m["features"]:
        return "feature_map.count", f"is {entry['count']:,}, more than the store's {m['features']:,} features"
    if entry is not None and not _plain_name(entry["file"]):
        return "feature_map.file", f"is {entry['file']!r}: the map's file is a name inside the store"
    return None


_COUNT = 1 << 62  # more rows or nonzeros than any disk holds: refused before any sum or allocation
_FILE = Schema(
    (
        Field("file", "str", low=1),
        Field("bytes", "int", low=0, high=_COUNT),
        Field("crc32", "int", low=0, high=0xFFFFFFFF),
    )
)
MANIFEST_SCHEMA = Schema(
    (
        Field("format", "str", choices=(FORMAT_NAME,)),
        Field("version", "int", low=1, high=FORMAT_VERSION),
        Field("complete", "bool", choices=(True,)),
        Field("store_id", "str", optional=True, null=True),
        Field("created", "str", optional=True),
        Field("rows", "int", low=0, high=_COUNT),
        Field("features", "int", low=0, high=MAX_FEATURES),
        Field("nnz", "int", low=0, high=_COUNT),
        Field("index_base", "int", choices=(0, 1)),
        Field("dtype", "str", choices=VALUE_DTYPES),
        Field("classes", "list", items=Field("", "number")),
        Field("label_counts", "list", items=Field("", "int", low=1, high=_COUNT)),
        Field(
            "blocks",
            "list",
            items=Field(
                "",
                "dict",
                fields=_FILE.extended(
                    Field("rows", "int", low=0, high=_COUNT), Field("nnz", "int", low=0, high=_COUNT)
                ),
            ),
        ),
        Field("feature_map", "dict", optional=True, fields=_FILE.extended(Field("count", "int", low=0))),
        Field(
            "weights",
            "dict",
            optional=True,
            fields=Schema(
                tuple(Field(k, "number", low=0) for k in ("sum", "min", "max")) + (Field("zero_rows", "int", low=0),)
            ),
        ),
        Field(
            "text",
            "dict",
            optional=True,
            fields=Schema(
                (
                    Field("format", "str"),
                    Field("hash", "str"),
                    Field("bits", "int", low=1, high=30),
                    Field("hash_all", "bool", optional=True),
                )
            ),
        ),
        Field("source", "dict", optional=True, null=True),
        Field(
            "params",
            "dict",
            fields=Schema(
                (
                    Field("compression", "str"),
                    Field("shuffle", "bool"),
                    Field("seed", "int", null=True),
                )
            ),
        ),
        Field("skipped_lines", "int", optional=True, low=0),
        Field("columns", "dict", optional=True),  # the column layout's entry (its own checks: store/column_layout.py)
    ),
    rules=(_version_holds, _blocks_add_up, _classes_sorted, _compression_known, _feature_map_fits, _blocks_hold),
)
"""What ``manifest.json`` may say (docs/FORMAT.md): the fields' types and ranges and the rules between them. Keys it
does not name pass (a newer blocksvm may add some: ``MANIFEST_SCHEMA.extended(Field(...))`` declares one)."""


def block_arrays(dtype: np.dtype, weighted: bool) -> Arrays:
    """The datasets a block file of a store of values ``dtype`` holds, checked against the block's manifest entry
    (``rows``, ``nnz``) from the file's metadata before they are read."""

    def says(key: str, offset: int = 0) -> dict:
        extra = " ({:,} row pointers)" if offset else ""
        return {
            "length": lambda e: e[key] + offset,
            "of": lambda e: f"the manifest says {e[key]:,} {key}" + extra.format(e[key] + offset),
        }

    declared = {**BLOCK_DATASETS, "data": np.dtype(dtype)}
    lengths = {
        "indptr": says("rows", 1),
        "indices": says("nnz"),
        "data": says("nnz"),
        "labels": says("rows"),
        "lines": says("rows"),
    }
    arrays = tuple(Array(name, dtype=declared[name], **lengths[name]) for name in BLOCK_DATASETS)
    weights = Array(WEIGHTS, dtype=np.dtype(np.float64), **says("rows"))
    return Arrays(arrays + ((weights,) if weighted else ()))


FEATURE_MAP_ARRAYS = Arrays(
    (
        Array(
            "features",
            dtype=np.dtype(np.int64),
            length=lambda e: e["count"],
            of=lambda e: f"the manifest says {e['count']:,}",
        ),
    )
)
"""The dataset of a compact store's ``features.h5``, checked against the manifest's ``feature_map`` entry."""
