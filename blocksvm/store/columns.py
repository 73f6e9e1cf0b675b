"""The column layout of a store: its entries by feature, for the learners that read columns (docs/FORMAT.md, *The
column layout*).

A store's rows are cut into row blocks; the column layout holds the same entries cut into **feature ranges**, each
a file ``columns/col-NNNNN.h5`` of compressed CSC arrays (the stored columns' ids, pointers, row ids and values)
and each column's statistics by class, plus ``columns/rows.h5`` (every row's label and weight, in store order).
The manifest's optional key ``columns`` describes them; the store's format version and generation do not change,
so an older blocksvm reads the store as before and a checkpoint of the store stays valid.

:func:`write_columns` is an external transpose in memory bounded by the block size, whatever the rows and
features (:mod:`blocksvm.store.transpose`); this module writes it under the store's lock and publishes it.

The layout is written into ``columns.partial-<id>/`` under the store's exclusive lock, fsync'ed, renamed to
``columns/``, and only then named in the manifest (replaced atomically): a write killed at any moment leaves no
columns (a partial folder, or a ``columns/`` folder the manifest does not name, which the next write removes) or
complete ones.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from blocksvm._hdf5 import fsync_dir
from blocksvm._locks import FileLock, lock_path
from blocksvm.errors import InUseError, ParameterError, StoreError, StoreReplacedError
from blocksvm.params import cores
from blocksvm.store import _column_kernels as K
from blocksvm.store import format as F
from blocksvm.store.column_layout import (
    COLUMNS_DIR,
    COLUMNS_KEY,
    ColumnBlock,
    ColumnLayout,
    ColumnStatistics,
    columns_version,
    verify_columns,
)
from blocksvm.store.reader import BlockStore
from blocksvm.store.transpose import Built, Transpose, count_type, test_kill
from blocksvm.store.writer import write_json_atomic

__all__ = [  # the reading side lives in column_layout (the store opens its layout with it): one place to import
    "ColumnBlock",
    "ColumnLayout",
    "ColumnStatistics",
    "ColumnSummary",
    "ensure_columns",
    "verify_columns",
    "write_columns",
]

COLUMN_FILE = "col-{:05d}.h5"
DEFAULT_BLOCK_MB = 64.0
PIECE_BYTES = 1 << 20
"""Bytes of entries in a piece of a block (the spill's bucket; a larger single column alone): a piece's counting
sort writes inside a window this large, which the cache holds, and a block's pieces are sorted on several threads."""
PARTIAL = f"{COLUMNS_DIR}.partial-"
OLD = f"{COLUMNS_DIR}.old-"


@dataclass
class ColumnSummary:
    """What :func:`write_columns` wrote, and how fast."""

    store: str
    blocks: int
    columns: int
    """Stored (nonempty) columns."""
    features: int
    """The store's compact width."""
    nnz: int
    bytes: int
    block_mb: float
    seconds: float

    def to_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        return (
            f"{self.store}: columns of {self.nnz:,} nnz in {self.blocks} blocks, {self.columns:,} of "
            f"{self.features:,} features stored, {self.bytes / 1e6:,.1f} MB; {self.seconds:.1f} s"
        )


# ---------------------------------------------------------------------------------------------
# writing


def write_columns(
    store: BlockStore | str | os.PathLike,
    *,
    block_mb: float | None = None,
    jobs: int | None = None,
    progress: bool | None = False,
    say: Callable[[str], None] | None = None,
) -> ColumnSummary:
    """Write (or write again) the column layout of a store: an external transpose of its row blocks.

    Parameters
    ----------
    store : BlockStore or path
        The store; an opened one sees its new layout (its manifest's ``columns``) afterwards.
    block_mb : float, optional
        Megabytes of entries (row id and value) per column block; default: the store's own ``block_mb``, or 64. A
        single column larger than that makes a block of its own.
    jobs : int, optional
        Threads that sort, compress and write column blocks (default: one a core). The layout is the same, byte
        for byte, whatever their number.
    progress : bool, optional
        Progress bars (None: when standard error is a terminal).
    say : callable, optional
        Told one line when the store's previous layout, or the remains of a killed write, are replaced.

    Returns
    -------
    ColumnSummary

    Raises
    ------
    InUseError
        A run is reading the store (or a conversion or another column write is writing it): nothing is written.
    StoreError
        The store's folder cannot be written; nothing is changed.
    """
    store = store if isinstance(store, BlockStore) else BlockStore(store)
    target = _block_target(store, block_mb)
    jobs = _jobs(jobs)
    _check_writable(store.path)
    lock = FileLock(lock_path(store.path), holder=f"blocksvm columns pid {os.getpid()}", optional=True)
    lock.acquire_or_raise(
        lambda holder: InUseError(
            f"cannot write the columns of {store.path}: a run is reading it, or a conversion or another column "
            f"write is writing it ({holder or 'another process'}); run again once it has ended"
        )
    )
    try:
        _check_same_store(store)
        return _write(store, target, jobs, progress, say)
    finally:
        lock.release()


def write_columns_unlocked(
    path: Path, *, block_mb: float | None, jobs: int | None, progress, counts: np.ndarray | None = None
) -> ColumnSummary:
    """:func:`write_columns` for a store nobody else can know of yet (``convert --columns``: its partial folder,
    whose conversion holds the lock of the store it will replace). ``counts``: each feature's entries, when the
    caller counted them as it wrote the row blocks (:class:`FeatureCounts`): the first read of the blocks is saved."""
    store = BlockStore(path)
    return _write(store, _block_target(store, block_mb), _jobs(jobs), progress, None, counts, fresh=True)


class FeatureCounts:
    """Each feature's entries among ``nnz``, counted block by block on several threads (a conversion's writers): the
    counts :func:`write_columns_unlocked` would otherwise read the row blocks for. 4 bytes a feature (8 from 2^32
    entries on)."""

    def __init__(self, n_features: int, nnz: int):
        self.counts = np.zeros(n_features, count_type(nnz))
        self._lock = threading.Lock()

    def add(self, indices: np.ndarray, shift: int = 0) -> None:
        """Count the entries of columns ``indices - shift`` (a block's, as written: ``shift`` its index base)."""
        with self._lock:  # one counting at a time: a few milliseconds a block, outside the GIL
            if not K.add_counts(self.counts, indices, shift):
                raise StoreError("a feature index lies outside the store's feature range")


def ensure_columns(
    store: BlockStore | str | os.PathLike,
    *,
    say: Callable[[str], None] | None = None,
    progress: bool | None = False,
) -> ColumnLayout:
    """The store's column layout, written first when it has none (saying so in one line through ``say``).

    Call it before taking the store's shared lock (:func:`blocksvm.store.reading`): the write takes it exclusively.

    Raises
    ------
    StoreError
        The store has no columns and its folder cannot be written (the line says what to do).
    InUseError
        The store has no columns and another run is reading it now.
    """
    store = store if isinstance(store, BlockStore) else BlockStore(store)
    layout = store.columns
    if layout is not None:
        return layout
    if say is not None:
        say(f"writing the column layout of {store.path} (once: it is kept in the store, and L1 learners read columns)")
    write_columns(store, progress=progress, say=say)
    return store.columns


def _block_target(store: BlockStore, block_mb: float | None) -> float:
    """Bytes of entries per column block: ``block_mb``, else the store's own, else 64 MB."""
    if block_mb is None:
        block_mb = store.manifest.get("params", {}).get("block_mb") or DEFAULT_BLOCK_MB
    if isinstance(block_mb, bool) or not isinstance(block_mb, (int, float)) or not block_mb > 0:
        raise ParameterError(f"block_mb must be positive (--block-mb), not {block_mb!r}")
    return float(block_mb)


def _jobs(jobs: int | None) -> int:
    if jobs is not None and (isinstance(jobs, bool) or int(jobs) != jobs or jobs < 1):
        raise ParameterError(f"jobs must be a positive integer (--jobs), not {jobs}")
    return int(jobs) if jobs is not None else cores()


def _check_writable(path: Path) -> None:
    if not os.access(path, os.W_OK):
        raise StoreError(
            f"cannot write the column layout of {path}: this process cannot write in the store's folder "
            f"(permission denied or a read-only file system); run 'blocksvm columns {path}' as a user who can, or "
            "copy the store to a folder you can write (its checkpoints stay valid) and use the copy"
        )


def _check_same_store(store: BlockStore) -> None:
    """Refuse when the store at the path is not the one opened (converted again in between)."""
    try:
        on_disk = json.loads((store.path / F.MANIFEST).read_text()).get("store_id")
    except (OSError, ValueError, AttributeError):
        on_disk = None
    if on_disk != store.store_id:
        raise StoreReplacedError(
            f"{store.path} was replaced since it was opened (generation {on_disk}, opened as {store.store_id}): "
            "open it again"
        )


def _write(store: BlockStore, block_mb: float, jobs: int, progress, say, counts=None, fresh=False) -> ColumnSummary:
    """Write the layout into a partial folder and install it (the caller holds the lock, or needs none). ``fresh``:
    the store is itself unpublished (a conversion's partial folder): the layout is written straight into
    ``columns/`` and named in the manifest, and an error is the conversion's to report."""
    start = time.perf_counter()
    if fresh:
        folder = store.path / COLUMNS_DIR
        folder.mkdir()
        key = _key(Transpose(store, block_mb, jobs, progress, folder).run(counts), block_mb, start)
        fsync_dir(folder)
        _name_in_manifest(store, key)
        return _summary(store, key, block_mb, start)
    _remove_remains(store, say)
    partial = store.path / f"{PARTIAL}{uuid.uuid4().hex[:8]}"
    try:
        partial.mkdir()
    except OSError as exc:
        raise StoreError(f"cannot write the column layout of {store.path}: {exc.strerror or exc}") from None
    try:
        key = _key(Transpose(store, block_mb, jobs, progress, partial).run(counts), block_mb, start)
        fsync_dir(partial)
        test_kill("written")
        _install(store, partial, key, say)
    except OSError as exc:
        shutil.rmtree(partial, ignore_errors=True)
        try:
            kept = COLUMNS_KEY in _manifest_on_disk(store.path)
        except (OSError, ValueError):
            kept = False
        columns = "its columns are those it had" if kept else "it has no columns now"
        raise StoreError(
            f"cannot write the column layout of {store.path}: {exc.strerror or exc} (its rows are unchanged; {columns})"
        ) from exc
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    store.manifest[COLUMNS_KEY] = key
    return _summary(store, key, block_mb, start)


def _key(built: Built, block_mb: float, start: float) -> dict:
    """The manifest's ``columns`` entry of a written layout."""
    return {
        "version": columns_version(built.stat_classes > 0),
        "block_mb": block_mb,
        "blocks": built.blocks,
        "rows": built.rows,
        "stat_classes": built.stat_classes,
        "seconds": round(time.perf_counter() - start, 3),
    }


def _name_in_manifest(store: BlockStore, key: dict) -> None:
    """Name the layout in the manifest on disk (replaced atomically, the folder fsync'ed) and in ``store``'s."""
    manifest = _manifest_on_disk(store.path)
    manifest[COLUMNS_KEY] = key
    write_json_atomic(store.path / F.MANIFEST, manifest)
    fsync_dir(store.path)
    store.manifest[COLUMNS_KEY] = key


def _summary(store: BlockStore, key: dict, block_mb: float, start: float) -> ColumnSummary:
    return ColumnSummary(
        str(store.path),
        len(key["blocks"]),
        sum(b["columns"] for b in key["blocks"]),
        store.n_features,
        sum(b["nnz"] for b in key["blocks"]),
        sum(b["bytes"] for b in key["blocks"]) + key["rows"]["bytes"],
        block_mb,
        time.perf_counter() - start,
    )


def _remove_remains(store: BlockStore, say) -> None:
    """Remove what killed writes left: partial and old folders, and a ``columns/`` folder the manifest does not
    name (the lock is held: no other write is under way)."""
    named = COLUMNS_KEY in _manifest_on_disk(store.path)
    remains = [p for p in store.path.iterdir() if p.name.startswith((PARTIAL, OLD))]
    if not named and (store.path / COLUMNS_DIR).exists():
        remains.append(store.path / COLUMNS_DIR)
    if remains and say is not None:
        say(f"removing what an interrupted column write left in {store.path}: {', '.join(p.name for p in remains)}")
    for path in remains:
        shutil.rmtree(path, ignore_errors=True)


def _manifest_on_disk(path: Path) -> dict:
    return json.loads((path / F.MANIFEST).read_text())


def _install(store: BlockStore, partial: Path, key: dict, say) -> None:
    """Publish the written layout: the old layout (if any) leaves the manifest first, then its folder; the new
    folder is renamed in, and only then does the manifest name it (each manifest replaced atomically)."""
    path = store.path
    manifest = _manifest_on_disk(path)
    if manifest.get("store_id") != store.store_id:  # (under the lock: cannot happen but by a copy over the folder)
        raise StoreReplacedError(f"{path} was replaced while its columns were written: open it again")
    if COLUMNS_KEY in manifest:
        if say is not None:
            say(f"replacing the column layout of {path}")
        del manifest[COLUMNS_KEY]
        write_json_atomic(path / F.MANIFEST, manifest)
        test_kill("unkeyed")
    target = path / COLUMNS_DIR
    old = None
    if target.exists():
        old = path / f"{OLD}{uuid.uuid4().hex[:8]}"
        os.rename(target, old)
    os.rename(partial, target)
    fsync_dir(path)
    test_kill("renamed")
    _name_in_manifest(store, key)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
