"""Writing a block store: one HDF5 file per block, then a manifest, then an atomic rename.

A store is built inside ``OUTPUT.partial-<id>/`` and renamed to ``OUTPUT`` only after every block
and the manifest are on disk (fsync'ed), so a conversion killed at any moment leaves either no
store or a partial directory that the reader refuses.

Replacing a store (``overwrite``) builds the new one beside it and swaps it in at the end, holding the old
store's exclusive lock from the start: refused while a run reads it (its shared lock,
:func:`blocksvm.store.reading`), and no run starts reading it meanwhile. Every store gets a new id, its
generation, written into its manifest and every block, so that a reader notices a store replaced under it by
other means (a copy, an older blocksvm) at the next block it opens.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import glob
import json
import os
import shutil
import time
import uuid
import zlib
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import h5py
import numpy as np

from blocksvm._hdf5 import fsync_dir, write_hdf5, write_synced
from blocksvm._locks import FileLock, lock_path
from blocksvm.errors import InUseError, StoreError
from blocksvm.rows import Rows
from blocksvm.store import chunks
from blocksvm.store import format as F


def write_block(
    path: Path, block: Rows, *, index: int, compression: str, store_id: str, version: int = F.DENSE_VERSION
) -> dict:
    """Write one block file and return its manifest entry (file, rows, nnz, bytes, crc32).

    ``version``: the store's format version (:func:`~blocksvm.store.format.store_version`: 2 or 3 for a
    store with a feature map, whose blocks hold compact columns). A block whose rows carry ``weights`` gets the
    dataset ``weights`` as well; any other block's datasets are those of a store without weights.
    """
    filters = F.compression_filters(compression)
    names = (*F.BLOCK_DATASETS, *((F.WEIGHTS,) if block.weights is not None else ()))
    arrays = {name: getattr(block, name) for name in names}
    # compressed here, before h5py is called: writer threads compress at once, h5py only copies the bytes
    stored = {name: encode_chunks(a, filters) for name, a in arrays.items() if len(a)}

    def fill(f: h5py.File) -> None:
        fixed_strings(f, format=F.FORMAT_NAME, store_id=store_id)
        f.attrs["version"] = version
        f.attrs["block"] = index
        f.attrs["rows"] = block.n_rows
        f.attrs["nnz"] = block.nnz
        for name, array in arrays.items():
            if len(array) == 0:
                f.create_dataset(name, data=array)
            else:
                write_chunked(f, name, array.shape, array.dtype, filters, stored[name], array)

    data = write_hdf5(path, fill, libver=F.BLOCK_LIBVER)  # in memory first: a full disk must not crash h5py
    return {
        "file": path.name,
        "rows": block.n_rows,
        "nnz": block.nnz,
        "bytes": len(data),
        "crc32": zlib.crc32(data),
    }


def fixed_strings(f: h5py.File, **attributes: str) -> None:
    """String attributes of fixed length, kept in the object header (covered by its checksum), not in the global
    heap, which nothing checks (:func:`blocksvm._hdf5.check_global_heaps`). They read back as bytes."""
    for name, value in attributes.items():
        f.attrs[name] = np.bytes_(value.encode())


def chunk_shape(shape: tuple) -> tuple:
    """The chunks of a block file's dataset of ``shape``: at most 2**20 elements, whole rows of a two-dimensional
    one (so that its chunks are runs of its elements in row-major order)."""
    width = int(np.prod(shape[1:], dtype=np.int64))
    return (max(1, min(shape[0], F.CHUNK_ELEMENTS // max(width, 1))), *shape[1:])


def encode_chunks(array: np.ndarray, filters: dict) -> list | None:
    """``array``'s chunks of :func:`chunk_shape` as HDF5 stores them with ``filters`` (:func:`blocksvm.store.chunks.
    encode` of its elements), or None where they are not encoded here (LZF)."""
    return chunks.encode(array.reshape(-1), filters, int(np.prod(chunk_shape(array.shape))))


def write_chunked(
    f: h5py.File, name: str, shape: tuple, dtype, filters: dict, stored: list | None, array: np.ndarray | None
) -> None:
    """The dataset ``name`` of ``shape`` and ``dtype`` in chunks of :func:`chunk_shape` with ``filters``: its chunks
    as :func:`encode_chunks` encoded them (``stored``), or ``array`` compressed by h5py where they were not (a
    caller that streams its chunks passes ``array`` None and must have them encoded)."""
    chunk = chunk_shape(shape)
    if stored is None:
        f.create_dataset(name, data=array, chunks=chunk, **filters)
        return
    dataset = f.create_dataset(name, shape=shape, dtype=dtype, chunks=chunk, **filters)
    dcpl = dataset.id.get_create_plist()
    declared = tuple(dcpl.get_filter(i)[0] for i in range(dcpl.get_nfilters()))
    if declared != chunks.pipeline_ids(filters, np.dtype(dtype).itemsize):  # h5py set them otherwise: let it write
        if array is None:
            raise StoreError(f"h5py {h5py.__version__} sets the filters {filters} otherwise than blocksvm encodes them")
        dataset[...] = array
        return
    width = int(np.prod(shape[1:], dtype=np.int64))
    for start, data, skipped in stored:
        dataset.id.write_direct_chunk((start // width, *(0 for _ in shape[1:])), data, filter_mask=skipped)


def write_feature_map(
    path: Path, feature_map: np.ndarray, *, compression: str, store_id: str, version: int = F.MAPPED_VERSION
) -> dict:
    """Write a compact store's feature map (sorted original zero-based columns); return its manifest entry
    (file, count, bytes, crc32). ``version``: the store's."""
    filters = F.compression_filters(compression)

    def fill(f: h5py.File) -> None:
        fixed_strings(f, format=F.FORMAT_NAME, store_id=store_id)
        f.attrs["version"] = version
        chunk = (max(1, min(len(feature_map), F.CHUNK_ELEMENTS)),)
        f.create_dataset("features", data=np.asarray(feature_map, np.int64), chunks=chunk, **filters)

    data = write_hdf5(path, fill, libver=F.BLOCK_LIBVER)
    return {"file": path.name, "count": len(feature_map), "bytes": len(data), "crc32": zlib.crc32(data)}


class StoreBuilder:
    """Build a store in a partial directory and publish it atomically.

    Use as a context manager: an exception removes the partial directory; :meth:`commit` writes
    the manifest and renames the directory to its final name.
    """

    def __init__(self, output: str | os.PathLike, *, overwrite: bool = False):
        self.output = Path(output)
        complete_swap(self.output)  # one a killed conversion left half done; what dead conversions left behind
        if self.output.exists() and not overwrite:
            raise StoreError(f"{self.output} already exists (pass overwrite / --overwrite to replace it)")
        if not self.output.parent.exists():
            raise StoreError(f"cannot create {self.output}: folder {self.output.parent} does not exist")
        self.store_id = uuid.uuid4().hex
        self.partial = self.output.with_name(f"{self.output.name}{F.PARTIAL_SUFFIX}-{self.store_id[:8]}")
        self.overwrite = overwrite
        self.lock: FileLock | None = None
        self._lock_output()  # before any work: a store being read is not converted over
        # held while the partial folder exists: a later conversion that can take it knows this one is dead
        self.partial_lock = FileLock(
            partial_lock_path(self.partial), holder=f"convert pid {os.getpid()}", optional=True
        )
        self.partial_lock.try_acquire()
        try:
            self.partial.mkdir()
        except OSError as exc:  # permission denied, read-only file system, no space left, ...
            self._unlock()
            raise StoreError(f"cannot create {self.output}: {exc.strerror or exc}") from None

    def _lock_output(self) -> None:
        """Take the exclusive lock of the store at ``output``, if there is one to replace; refuse while a run reads it
        (or another conversion writes it)."""
        if self.lock is not None or not self.output.is_dir():
            return
        lock = FileLock(lock_path(self.output), holder=f"convert pid {os.getpid()}", optional=True)
        if lock.try_acquire() is not None:
            raise InUseError(
                f"cannot overwrite {self.output}: a run is reading it, or another conversion writing it (train, "
                "tune, predict, convert); run again once it has ended, or write the new store under another name"
            )
        self.lock = lock

    def _unlock(self) -> None:
        self.partial_lock.release()
        if self.lock is not None:
            self.lock.release()
            self.lock = None

    def block_path(self, index: int) -> Path:
        return self.partial / F.BLOCK_FILE.format(index)

    def __enter__(self) -> StoreBuilder:
        return self

    def __exit__(self, kind, exc, tb) -> None:
        if self.partial.exists():
            shutil.rmtree(self.partial, ignore_errors=True)
        self._unlock()
        if not isinstance(exc, OSError):
            return
        if exc.errno == errno.ENOSPC:
            raise StoreError(f"no space left on the device while writing {self.output}; nothing was written") from exc
        if self._wrote(exc):  # the folder turned read-only, an I/O error, ...: not the input's fault
            raise StoreError(f"cannot create {self.output}: {exc.strerror or exc}") from exc

    def _wrote(self, exc: OSError) -> bool:
        """Whether ``exc`` came from writing the store (a write names no file, or one in the partial folder)."""
        return exc.filename is None or str(exc.filename).startswith(str(self.partial))

    def commit(
        self,
        *,
        features: int,
        index_base: int,
        dtype,
        label_counts: dict,
        blocks: list[dict],
        source: dict,
        params: dict,
        feature_map: dict | None = None,
        weights: dict | None = None,
        before_publish: Callable[[Path], None] | None = None,
        **extra,
    ) -> Path:
        """Write the manifest (docs/FORMAT.md: the one place its fields are laid out), then publish the store.

        ``blocks`` are the entries :func:`write_block` returned; rows and nnz are summed from
        them, classes and their counts come from ``label_counts`` (label -> rows). ``feature_map``
        is :func:`write_feature_map`'s entry for a compact store (format version 2), else None
        (version 1). ``weights`` summarizes the instance weights of a weighted store (format version 3), None
        for a store without them. ``before_publish(partial)`` is called once the store is complete in its partial
        folder, before it is published (``convert --columns`` writes its column layout there). ``extra`` fields (a
        converter's skipped lines, say) are kept as given.
        """
        classes = sorted(label_counts)
        mapped = {"feature_map": feature_map} if feature_map is not None else {}
        weighted = {"weights": weights} if weights is not None else {}
        manifest = {
            "format": F.FORMAT_NAME,
            "version": F.store_version(feature_map is not None, weights is not None),
            "complete": True,
            "store_id": self.store_id,
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "rows": sum(int(b["rows"]) for b in blocks),
            "features": int(features),
            "nnz": sum(int(b["nnz"]) for b in blocks),
            "index_base": int(index_base),
            "dtype": np.dtype(dtype).name,
            "classes": [float(c) for c in classes],
            "label_counts": [int(label_counts[c]) for c in classes],
            "blocks": blocks,
            **mapped,
            **weighted,
            "source": source,
            "params": params,
            **extra,
        }
        write_json_atomic(self.partial / F.MANIFEST, manifest)
        fsync_dir(self.partial)
        if before_publish is not None:
            before_publish(self.partial)
        if self.output.exists() and not self.overwrite:  # another conversion published it meanwhile
            raise StoreError(f"{self.output} already exists (pass overwrite / --overwrite to replace it)")
        self._lock_output()  # a store that appeared meanwhile: not replaced under its readers either
        if self.output.exists():
            self._swap()
        else:
            os.rename(self.partial, self.output)
        fsync_dir(self.output.parent)
        return self.output

    def _swap(self) -> None:
        """Put the new store (complete in ``partial``) where the old one is, so that the path holds one or the other
        at every moment: by one atomic exchange of the two directories where the system has one, else by two
        renames that the next open of the path completes if they were cut between (:func:`complete_swap`)."""
        trash = old_path(self.output, self.store_id)
        _test_swap("before")
        if _exchange(self.partial, self.output):  # the old store is now at partial's name
            _test_swap("exchanged")
            os.rename(self.partial, trash)
        else:
            os.rename(self.output, trash)
            _test_swap("between")
            try:
                os.rename(self.partial, self.output)
            except OSError:
                os.rename(trash, self.output)  # the old store stays where it was
                raise
        shutil.rmtree(trash, ignore_errors=True)


# ---- swapping a store for another --------------------------------------------------------------------------------

_RENAME_EXCHANGE = 2  # linux/fs.h
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap the directories ``a`` and ``b`` in one atomic step (Linux's ``renameat2`` with ``RENAME_EXCHANGE``, through
    the C library); False where the system or its file system has no such call (then nothing was moved)."""
    if os.environ.get("BLOCKSVM_TEST_SWAP_BY_RENAMES"):  # test-only: the fallback of systems without the call
        return False
    renameat2 = getattr(_libc(), "renameat2", None)
    if renameat2 is None:  # not Linux, or a C library older than glibc 2.28
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):  # a kernel or file system without it
        return False
    raise OSError(code, os.strerror(code), str(b))


@functools.cache
def _libc():
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def old_path(output: Path, store_id: str) -> Path:
    """Where a store being replaced by the store of ``store_id`` goes while the two are swapped."""
    return output.with_name(f"{output.name}.old-{store_id[:8]}")


def complete_swap(output: str | os.PathLike) -> None:
    """Finish a swap of the store at ``output`` that a conversion left half done (killed between its two renames,
    where the system has no atomic exchange), so that the path holds a whole store again: the new store when it is
    complete, else the old one put back; and remove old stores that swaps left beside it and what conversions that died
    left (:func:`remove_dead_partials`). Swaps still in progress (their conversion holds the old store's lock) are left
    alone. Nothing is raised: what cannot be done here (a folder this process may not write) is left for the reader to
    report."""
    output = Path(output)
    for trash in sorted(output.parent.glob(f"{glob.escape(output.name)}.old-*")):
        lock = FileLock(lock_path(trash), optional=True)
        try:
            if lock.try_acquire() is not None:
                continue  # its conversion is swapping it now
            if not output.exists():
                partial = output.with_name(f"{output.name}{F.PARTIAL_SUFFIX}-{trash.name.rpartition('-')[2]}")
                done = (partial / F.MANIFEST).is_file()
                os.rename(partial if done else trash, output)  # the new store, else the old one back
            if trash.exists():
                shutil.rmtree(trash, ignore_errors=True)
        except OSError:
            continue
        finally:
            lock.release()
    remove_dead_partials(output)


def partial_lock_path(partial: Path) -> Path:
    """The lock file of a partial store folder (``NAME.partial-ID``), beside it as ``NAME.converting-ID.lock``: taken
    before the folder is made, held until it is gone."""
    name, _, conversion = partial.name.rpartition(f"{F.PARTIAL_SUFFIX}-")
    return partial.with_name(f"{name}.converting-{conversion}.lock")


def remove_dead_partials(output: str | os.PathLike) -> None:
    """Remove the partial folders of conversions of ``output`` that died before they published (killed, out of
    power): those whose lock nobody holds. A conversion still running holds its own, and one whose lock cannot be
    taken here (a folder without locks) is left alone. Nothing is raised."""
    output = Path(output)
    name = glob.escape(output.name)
    partials = output.parent.glob(f"{name}{F.PARTIAL_SUFFIX}-*")
    orphans = [  # the locks of partial folders published (or removed) by a conversion killed before it let them go
        output.with_name(f"{output.name}{F.PARTIAL_SUFFIX}-{lock.name[len(output.name) + 12 : -5]}")
        for lock in output.parent.glob(f"{name}.converting-*.lock")
    ]
    for partial in sorted({*(p for p in partials if p.is_dir()), *orphans}):
        lock = FileLock(partial_lock_path(partial), optional=True)
        try:
            if lock.try_acquire() is None and lock.file is not None:  # (really taken: its converter is gone)
                shutil.rmtree(partial, ignore_errors=True)
        except OSError:
            continue
        finally:
            lock.release()  # (and its file removed)


def _test_swap(stage: str) -> None:
    """Test-only: ``BLOCKSVM_TEST_PAUSE_IN_SWAP="STAGE:MARKER"`` stops a store's swap at STAGE ("before", "between" the
    two renames of the fallback, "exchanged"), creates MARKER and sleeps, so that a test kills the conversion there.
    Unset, one environment lookup a swap."""
    spec = os.environ.get("BLOCKSVM_TEST_PAUSE_IN_SWAP")
    if spec is None or spec.partition(":")[0] != stage:
        return
    Path(spec.partition(":")[2]).touch()
    time.sleep(600)  # the test kills this process long before
    os._exit(137)


def write_json_atomic(path: Path, obj) -> None:
    """Write JSON to ``path`` through a temporary file, fsync, and rename."""
    tmp = path.with_name(path.name + ".tmp")
    text = json.dumps(obj, indent=1) + "\n"
    with open(tmp, "w") as f:
        write_synced(f, text, tmp)
    os.replace(tmp, path)
