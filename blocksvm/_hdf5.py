"""HDF5 files: written so that a full disk is an ``OSError``, not a crash; read with a version check, and their global
heaps checked before a string is read from them.

When the disk fills while HDF5 writes a file, h5py reports the failure while it closes or frees
the file and then crashes the interpreter with a segmentation fault (h5py/h5py#914; reproduced
with h5py 3.16 on a 1 MB tmpfs). So blocksvm builds each file in memory and writes its bytes with
Python's own I/O, whose errors (``ENOSPC``, ``EROFS``, ``EACCES``) are ordinary exceptions.

A string attribute of variable length (what h5py writes for a ``str``) lives in the file's *global heap*, the one
part of an HDF5 file that no checksum covers. HDF5 (2.0) walks a heap collection object by object, each object's
size read from the file; an object whose size is damaged to 0 makes that walk spin forever, holding the thread and
h5py's lock (a block file with two bytes flipped there hung ``train``). :func:`check_global_heaps` walks the
collections first, bounded by the file's size, and :func:`open_versioned` runs it before it reads the attributes;
block files are written with strings of fixed length, kept in the object headers, which HDF5's checksums cover.
"""

from __future__ import annotations

import io
import mmap
import os
import struct
from collections.abc import Callable
from pathlib import Path

import h5py

from blocksvm._test_hooks import pause, pause_due

CHECKSUMMED = ("v110", "latest")
"""The file format of HDF5 1.10 on: every object header, chunk index and superblock carries a checksum (HDF5's
first format has none: a model whose attribute message had two bytes flipped crashed HDF5 2.0 reading it)."""


def write_hdf5(path: str | os.PathLike, fill: Callable[[h5py.File], None], *, libver=CHECKSUMMED) -> memoryview:
    """Create the HDF5 file ``path`` with ``fill(f)``, fsync it, and return its bytes (a view).

    The file is assembled in memory (its final, compressed size), then written at once. If the
    write fails, the partial file is removed and the ``OSError`` raised names ``path``.
    ``libver`` is h5py's (the oldest HDF5 that must read the file: 1.10, whose format checksums its metadata).
    """
    path = Path(path)
    image = io.BytesIO()
    with h5py.File(image, "w", libver=libver) as f:
        fill(f)
    data = image.getbuffer()
    try:
        with open(path, "wb") as out:
            write_synced(out, data, path)
    except OSError as exc:
        path.unlink(missing_ok=True)
        raise OSError(exc.errno, exc.strerror, str(path)) from exc
    return data


def write_synced(f, data, path: str | os.PathLike) -> None:
    """Write ``data`` (bytes or text, as ``f`` is opened) to the open file ``f`` of ``path``, flush it and fsync it.
    Test-only: where :func:`blocksvm._test_hooks.pause_due` says so, half of it is written first and the process
    paused to be killed."""
    if pause_due(path):
        f.write(data[: len(data) // 2])
        f.flush()
        pause()
    f.write(data)
    f.flush()
    os.fsync(f.fileno())


def fsync_dir(path: str | os.PathLike) -> None:
    """Make a rename or a new file in the folder ``path`` durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def open_versioned(path: Path, fmt: str, version: int, kind: str, error: type[Exception]) -> h5py.File:
    """Open the HDF5 file ``path`` for reading after checking its ``format`` and ``version`` attributes.

    Raises ``error`` with one line: ``path`` is not a blocksvm ``kind`` (``"model"``), or was
    written by a newer blocksvm.
    The caller closes the file (``with open_versioned(...) as f``).
    """
    problem = check_global_heaps(path)
    if problem is not None:
        raise error(f"{path} is damaged: {problem}")
    f = h5py.File(path, "r")
    try:
        if f.attrs.get("format") != fmt:
            raise error(f"{path} is an HDF5 file but not a blocksvm {kind}")
        found = int(f.attrs["version"])
        if found > version:
            raise error(
                f"{path} is {kind} format version {found}; this blocksvm reads version {version} (upgrade blocksvm)"
            )
    except BaseException:
        f.close()
        raise
    return f


_HEAP = b"GCOL\x01"  # a global heap collection's signature and version (the next 3 bytes, reserved, are not read)
_HEAP_MINIMUM = 4096  # HDF5's smallest collection (H5HG_MINSIZE)
_OBJECT_HEADER = 16  # an object's index (2), reference count (2), reserved (4) and size (8)


def check_global_heaps(file: str | os.PathLike | int) -> str | None:
    """Why a global heap collection of the HDF5 file ``file`` (a path, or a descriptor open on it) would send HDF5
    round in circles, or None.

    Each collection's objects are walked as HDF5 walks them (an object takes 16 bytes and its size rounded up to 8;
    the free space, index 0, its size): every step must move forward and end inside the collection. A
    collection is found by its signature and a size that fits in the file, so that bytes of compressed data that
    happen to spell the signature are not taken for one (HDF5 itself refuses a collection that does not fit).
    """
    with open(file, "rb", closefd=not isinstance(file, int)) as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            return None
        try:
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # a file system without mmap
            data = os.pread(f.fileno(), size, 0)
        try:
            return _heap_problem(data, size)
        finally:
            if isinstance(data, mmap.mmap):
                data.close()


def _heap_problem(data, size: int) -> str | None:
    at = data.find(_HEAP)
    while at >= 0:
        if at + 16 <= size:
            (collection,) = struct.unpack_from("<Q", data, at + 8)
            if _HEAP_MINIMUM <= collection <= size - at:
                problem = _collection_problem(data, at, collection)
                if problem is not None:
                    return f"its global heap at byte {at:,} {problem}"
        at = data.find(_HEAP, at + 1)
    return None


def _collection_problem(data, at: int, collection: int) -> str | None:
    end, p = at + collection, at + 16
    while p + _OBJECT_HEADER <= end:
        index, _, _, length = struct.unpack_from("<HHIQ", data, p)
        step = length if index == 0 else _OBJECT_HEADER + (length + 7) // 8 * 8
        if step < _OBJECT_HEADER or step > end - p:
            return f"holds an object of a damaged size ({length:,} bytes)"
        p += step
    return None
