"""HDF5 files: written so that a full disk is an ``OSError``, not a crash; read with a version check.

When the disk fills while HDF5 writes a file, h5py reports the failure while it closes or frees
the file and then crashes the interpreter with a segmentation fault (h5py/h5py#914; reproduced
with h5py 3.16 on a 1 MB tmpfs). So blocksvm builds each file in memory and writes its bytes with
Python's own I/O, whose errors (``ENOSPC``, ``EROFS``, ``EACCES``) are ordinary exceptions.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from pathlib import Path

import h5py


def write_hdf5(path: str | os.PathLike, fill: Callable[[h5py.File], None], *, libver=None) -> memoryview:
    """Create the HDF5 file ``path`` with ``fill(f)``, fsync it, and return its bytes (a view).

    The file is assembled in memory (its final, compressed size), then written at once. If the
    write fails, the partial file is removed and the ``OSError`` raised names ``path``.
    ``libver`` is h5py's (the oldest HDF5 that must read the file; default: any).
    """
    path = Path(path)
    image = io.BytesIO()
    with h5py.File(image, "w", libver=libver) as f:
        fill(f)
    data = image.getbuffer()
    try:
        with open(path, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
    except OSError as exc:
        path.unlink(missing_ok=True)
        raise OSError(exc.errno, exc.strerror, str(path)) from exc
    return data


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
