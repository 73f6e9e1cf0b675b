"""The column layout of a store, read: its blocks of entries by feature, their statistics, its rows' labels and
weights, and the checks of ``blocksvm info --verify`` (docs/FORMAT.md, *The column layout*; written by
:mod:`blocksvm.store.columns`)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from blocksvm.errors import StoreError, StoreReplacedError
from blocksvm.store import format as F
from blocksvm.store.readahead import ReadStats, read_in_order

if TYPE_CHECKING:
    import scipy.sparse as sp

COLUMNS_KEY = "columns"
"""The manifest's key that describes the column layout."""
COLUMNS_DIR = "columns"
ROWS_FILE = "rows.h5"
COLUMNS_VERSION = 2
"""The newest version of the column layout this blocksvm reads and writes (the manifest's ``columns.version``): a
layout is written at the lowest version that describes it (:func:`columns_version`), and every older one is read."""
MAX_STAT_CLASSES = 256
"""A store of more classes (regression labels) gets its columns' statistics as totals, one column."""
COLUMN_ENTRIES = ("features", "indptr", "rows", "data")
COLUMN_DATASETS = (*COLUMN_ENTRIES, "sums", "squares")
STATISTICS = ("features", "indptr", "sums", "squares")


@dataclass
class ColumnBlock:
    """One column block in memory: the stored (nonempty) columns of the features ``first .. stop - 1``, as CSC.

    Attributes
    ----------
    index : int
        Position of the block in the layout.
    first, stop : int
        The feature range ``[first, stop)`` the block covers (compact feature ids, the row blocks' columns).
    features : ndarray of int64, shape (n_columns,)
        The stored columns' feature ids, increasing.
    indptr : ndarray of int64, shape (n_columns + 1,)
        Column ``s``'s entries are ``indptr[s]:indptr[s+1]``.
    rows : ndarray of int32 (int64 for a store of 2**31 rows or more), shape (nnz,)
        Store-wide row positions (``BlockStore.row_offsets[b] + i`` of row ``i`` of row block ``b``), increasing
        within each column.
    data : ndarray of float32 or float64, shape (nnz,)
        The values (the store's dtype).
    sums, squares : ndarray of float64, shape (n_columns, stat_classes), or None
        For each stored column and class ``c``: the sum over its rows of class ``c`` of ``weight_i * x_ij`` and of
        ``weight_i * x_ij**2`` (``weight_i`` the row's instance weight, 1 in a store without); one column of totals
        for a store of more than 256 classes. None in a block read for its entries alone, and in a layout without
        statistics (``stat_classes`` 0).
    """

    index: int
    first: int
    stop: int
    features: np.ndarray
    indptr: np.ndarray
    rows: np.ndarray
    data: np.ndarray
    sums: np.ndarray | None = None
    squares: np.ndarray | None = None

    @property
    def n_columns(self) -> int:
        return len(self.features)

    @property
    def nnz(self) -> int:
        return len(self.rows)

    @property
    def counts(self) -> np.ndarray:
        """Entries of each stored column."""
        return np.diff(self.indptr)

    @property
    def csc(self) -> tuple:
        """``(features, indptr, rows, data)``: the stored columns as the learners' kernels take them."""
        return self.features, self.indptr, self.rows, self.data

    @property
    def datasets(self) -> tuple[str, ...]:
        """The names of the arrays the block holds (its entries', and its statistics' where it has them)."""
        return COLUMN_DATASETS if self.sums is not None else COLUMN_ENTRIES

    @property
    def nbytes(self) -> int:
        return sum(getattr(self, name).nbytes for name in self.datasets)

    def columns_of(self, marked: np.ndarray) -> ColumnBlock:
        """The block with only its columns whose feature ``marked`` (a bool array over the features, or the weights)
        marks, in their order (the entries only: no statistics)."""
        keep = np.flatnonzero(marked[self.features])
        counts = self.counts[keep]
        indptr = np.zeros(len(keep) + 1, np.int64)
        np.cumsum(counts, out=indptr[1:])
        at = np.repeat(self.indptr[keep] - indptr[:-1], counts) + np.arange(indptr[-1])  # their entries' places
        return ColumnBlock(self.index, self.first, self.stop, self.features[keep], indptr, self.rows[at], self.data[at])

    def to_csc(self, n_rows: int) -> sp.csc_matrix:
        """The stored columns as a ``scipy.sparse.csc_matrix`` of shape (n_rows, n_columns)."""
        import scipy.sparse as sp  # (here: reading a layout's facts needs no scipy)

        return sp.csc_matrix((self.data, self.rows, self.indptr), shape=(n_rows, self.n_columns))


@dataclass
class ColumnStatistics:
    """A column block's statistics without its entries (:meth:`ColumnLayout.statistics`): ``features``, their
    ``counts`` (entries of each), ``sums`` and ``squares`` as in :class:`ColumnBlock`."""

    index: int
    features: np.ndarray
    counts: np.ndarray
    sums: np.ndarray | None = None
    squares: np.ndarray | None = None


class ColumnLayout:
    """A store's column layout, opened for reading (:attr:`BlockStore.columns`).

    Parameters
    ----------
    store : BlockStore
        The store; its manifest has the key ``columns``.

    Raises
    ------
    StoreError
        The manifest's ``columns`` entry is damaged or of a newer version, or a file it names is missing or of
        another size.

    Examples
    --------
    >>> layout = BlockStore("train.bsvm").columns              # doctest: +SKIP
    >>> for block in layout.iter_blocks():                     # doctest: +SKIP
    ...     X = block.to_csc(layout.n_rows)                    # block.features are its columns' ids
    """

    def __init__(self, store):
        self.store = store
        self.entry = _checked_entry(store)
        self.blocks: list[dict] = self.entry["blocks"]
        self.stat_classes: int = self.entry["stat_classes"]
        self.block_mb: float = self.entry["block_mb"]
        self.rows_dtype = rows_dtype(store.n_rows)
        for b in range(self.n_blocks):
            problem = self._file_problem(self.blocks[b], self._where(b))
            if problem:
                raise StoreError(problem)
        problem = self._file_problem(self.entry["rows"], self._where(None))
        if problem:
            raise StoreError(problem)

    @property
    def n_blocks(self) -> int:
        return len(self.blocks)

    @property
    def n_rows(self) -> int:
        return self.store.n_rows

    @property
    def n_features(self) -> int:
        """The store's compact width: feature ids lie in ``0 .. n_features - 1``."""
        return self.store.n_features

    @property
    def nnz(self) -> int:
        return sum(b["nnz"] for b in self.blocks)

    @property
    def n_columns(self) -> int:
        """The stored (nonempty) columns."""
        return sum(b["columns"] for b in self.blocks)

    def __repr__(self) -> str:
        return (
            f"ColumnLayout({str(self.store.path)!r}: {self.n_columns} of {self.n_features} features stored, "
            f"{self.nnz} nnz, {self.n_blocks} blocks)"
        )

    def _where(self, b: int | None) -> str:
        if b is None:
            return f"{self.store.path}: the column layout's rows ({self.entry['rows']['file']})"
        return f"{self.store.path}: column block {b} ({self.blocks[b]['file']})"

    def _remedy(self) -> str:
        return f"write the columns again ('blocksvm columns {self.store.path}')"

    def _file_problem(self, entry: dict, where: str) -> str | None:
        """Why the file of ``entry`` is not the one the manifest describes (missing, other size), or None."""
        try:
            size = (self.store.path / entry["file"]).stat().st_size
        except FileNotFoundError:
            return f"{where} is missing: {self._remedy()}"
        if size != entry["bytes"]:
            return (
                f"{where} has {size} bytes, the manifest says {entry['bytes']}: the file is truncated or was "
                f"replaced; {self._remedy()}"
            )
        return None

    def _check_generation(self, where: str, found) -> None:
        """Refuse a file of another generation than the store's: the store was replaced under the run."""
        store_id = self.store.store_id
        if found is None or store_id is None:
            return
        found = found.decode() if isinstance(found, bytes) else str(found)
        if found != store_id:
            raise StoreReplacedError(
                f"{where} is of generation {found}, the store was opened as generation {store_id}: the store was "
                "converted again or copied over while this run read it; run again on the store as it is now"
            )

    def _read(self, b: int | None, names: tuple[str, ...]) -> dict[str, np.ndarray]:
        """The datasets ``names`` of column block ``b`` (None: the rows file), decoded as row blocks are."""
        entry = self.entry["rows"] if b is None else self.blocks[b]
        where = self._where(b)
        try:
            return self.store.read_arrays(entry["file"], names, lambda found: self._check_generation(where, found))
        except (OSError, KeyError, ValueError) as exc:
            problem = self._file_problem(entry, where)
            raise StoreError(
                problem or f"{where} cannot be read, the file is damaged ({_short(exc)}): {self._remedy()}"
            ) from None

    def read_block(self, b: int, statistics: bool = True) -> ColumnBlock:
        """Read column block ``b``, its chunks decoded on the store's ``read_threads`` threads; without its
        ``statistics`` if not asked (a learner reads them once, by :meth:`statistics`: they are 32 bytes a column,
        more than the entries where most features occur once or twice).

        Raises
        ------
        StoreError
            The file is damaged (one line naming it) or disagrees with the manifest; StoreReplacedError: it is of
            another generation than the store.
        """
        if not 0 <= b < self.n_blocks:
            raise StoreError(f"{self.store.path}: no column block {b} (the layout has {self.n_blocks})")
        entry = self.blocks[b]
        arrays = self._read(b, COLUMN_DATASETS if statistics and self.stat_classes else COLUMN_ENTRIES)
        block = ColumnBlock(b, entry["first"], entry["stop"], **arrays)
        problem = self._block_problem(block, entry)
        if problem:
            raise StoreError(f"{self._where(b)} is inconsistent: {problem}; {self._remedy()}")
        return block

    def _block_problem(self, block: ColumnBlock, entry: dict) -> str | None:
        """What in ``block`` disagrees with its entry and the layout's invariants (all but the rows' order, which
        :meth:`verify` checks), or None."""
        n = block.n_columns
        if n != entry["columns"] or block.nnz != entry["nnz"]:
            return f"{n} columns and {block.nnz} nnz, the manifest says {entry['columns']} and {entry['nnz']}"
        if len(block.indptr) != n + 1 or len(block.data) != block.nnz:
            return "array lengths disagree"
        shapes = {(n, self.stat_classes)}
        if block.sums is not None and {block.sums.shape, block.squares.shape} != shapes:
            return f"the statistics are not of shape ({n}, {self.stat_classes})"
        if block.data.dtype != self.store.dtype or block.rows.dtype.kind != "i" or block.features.dtype.kind != "i":
            return "an array is of another type than the layout's"
        if n and (block.indptr[0] != 0 or block.indptr[-1] != block.nnz or np.any(np.diff(block.indptr) <= 0)):
            return "column pointers do not increase from 0 to nnz"
        if n and (block.features[0] < block.first or block.features[-1] >= block.stop):
            return f"a feature lies outside the block's range {block.first} .. {block.stop - 1}"
        if n > 1 and np.any(np.diff(block.features) <= 0):
            return "the features do not increase"
        return None

    def iter_blocks(
        self,
        order: Iterable[int] | None = None,
        *,
        prefetch: int = 1,
        stats: ReadStats | None = None,
        statistics: bool = True,
    ) -> Iterator[ColumnBlock]:
        """Yield column blocks in ``order`` (default: by feature), reading up to ``prefetch`` ahead on threads, as
        :meth:`BlockStore.iter_blocks` reads row blocks; ``stats`` accumulates read and wait seconds; ``statistics``:
        as :meth:`read_block`."""
        order = list(range(self.n_blocks) if order is None else order)
        read = self.read_block if statistics else lambda b: self.read_block(b, statistics=False)
        yield from read_in_order(order, read, self.blocks, prefetch, stats)

    def statistics(self, b: int) -> ColumnStatistics:
        """Column block ``b``'s statistics without its entries: its features, their counts, ``sums`` and
        ``squares`` (the gradient at w = 0 and LIBLINEAR's first C for L1 follow from them)."""
        if not 0 <= b < self.n_blocks:
            raise StoreError(f"{self.store.path}: no column block {b} (the layout has {self.n_blocks})")
        if not self.stat_classes:
            raise StoreError(f"{self.store.path}: its column layout keeps no statistics (they would outweigh its data)")
        a = self._read(b, STATISTICS)
        n = self.blocks[b]["columns"]
        good = len(a["features"]) == n and len(a["indptr"]) == n + 1 and a["sums"].shape == (n, self.stat_classes)
        if not good or a["squares"].shape != a["sums"].shape:
            raise StoreError(f"{self._where(b)} is inconsistent: array lengths disagree; {self._remedy()}")
        return ColumnStatistics(b, a["features"], np.diff(a["indptr"]), a["sums"], a["squares"])

    def row_labels(self) -> tuple[np.ndarray, np.ndarray | None]:
        """Every row's label (float64, store order) and, in a weighted store, its instance weight (else None)."""
        names = ("labels", "weights") if self.store.weighted else ("labels",)
        arrays = self._read(None, names)
        if any(len(a) != self.n_rows or a.ndim != 1 for a in arrays.values()):
            raise StoreError(f"{self._where(None)} is inconsistent: it does not hold one value a row; {self._remedy()}")
        return arrays["labels"], arrays.get("weights")

    def verify(self) -> list[str]:
        """Read every column file and check it: checksums, features increasing inside the block's range, pointers
        monotone, rows increasing within each column and below ``n_rows``, the totals, the statistics against the
        data, and the rows file against the manifest's labels and weights. Returns the problems found."""
        return verify_columns(self.store, self)

    def info(self) -> dict:
        """The layout's facts (JSON-able): blocks, stored columns, nnz, bytes on disk, ..."""
        return {
            "version": self.entry["version"],
            "blocks": self.n_blocks,
            "stored_features": self.n_columns,
            "features": self.n_features,
            "nnz": self.nnz,
            "bytes_on_disk": sum(b["bytes"] for b in self.blocks) + self.entry["rows"]["bytes"],
            "block_mb": self.block_mb,
            "stat_classes": self.stat_classes,
            "seconds": self.entry.get("seconds"),
            "block_sizes": [{k: b[k] for k in ("first", "stop", "columns", "nnz", "bytes")} for b in self.blocks],
        }


def verify_columns(store, layout: ColumnLayout | None = None) -> list[str]:
    """The problems of ``store``'s column layout (:meth:`ColumnLayout.verify`), as lines."""
    try:
        layout = layout or ColumnLayout(store)
    except StoreError as exc:
        return [str(exc)]
    problems = []
    files = [(layout._where(b), e) for b, e in enumerate(layout.blocks)] + [(layout._where(None), layout.entry["rows"])]
    for where, entry in files:
        if F.file_crc32(store.path / entry["file"]) != entry["crc32"]:
            problems.append(f"{where}: file checksum differs from the manifest")
    try:
        labels, weights = layout.row_labels()
    except StoreError as exc:
        return [*problems, str(exc)]
    problems += _rows_problems(store, layout, labels, weights)
    row_class = _row_classes(store, labels, layout.stat_classes)
    row_weight = np.ones(store.n_rows) if weights is None else weights
    for b in range(layout.n_blocks):
        try:
            block = layout.read_block(b)
        except StoreError as exc:
            problems.append(str(exc))
            continue
        problems += [f"{layout._where(b)}: {p}" for p in _block_problems(layout, block, row_class, row_weight)]
    if layout.nnz != store.nnz:
        problems.append(f"the column blocks hold {layout.nnz:,} entries, the store {store.nnz:,}")
    return problems


def _rows_problems(store, layout: ColumnLayout, labels: np.ndarray, weights) -> list[str]:
    """The rows file's labels against the manifest's classes and counts, its weights against the manifest's."""
    where, problems = layout._where(None), []
    values, counts = np.unique(labels, return_counts=True)
    if not (np.array_equal(values, store.classes) and np.array_equal(counts, store.label_counts)):
        problems.append(f"{where}: the labels do not match the manifest's classes and counts")
    if weights is not None:
        summary = store.manifest["weights"]
        if not (np.isfinite(weights).all() and (weights >= 0).all()) or not np.isclose(weights.sum(), summary["sum"]):
            problems.append(f"{where}: the weights do not match the manifest's")
    return problems


def _block_problems(layout: ColumnLayout, block: ColumnBlock, row_class, row_weight) -> list[str]:
    from blocksvm.store import _column_kernels as K  # (numba: where blocks are checked)

    problems = []
    if not K.rows_ascending(block.indptr, block.rows, layout.n_rows):
        problems.append("rows do not increase within a column, or lie beyond the store's rows")
        return problems
    if not np.isfinite(block.data).all():
        problems.append("a value is NaN or infinite")
    if block.sums is None:
        return problems
    # the statistics again, by numpy: per (column, class), the weighted values summed in row order
    k = layout.stat_classes
    column = np.repeat(np.arange(block.n_columns), block.counts)
    key = column * k + row_class[block.rows]
    x = block.data.astype(np.float64)
    wx = row_weight[block.rows] * x
    sums = np.bincount(key, weights=wx, minlength=block.n_columns * k).reshape(-1, k)
    squares = np.bincount(key, weights=wx * x, minlength=block.n_columns * k).reshape(-1, k)
    if not (np.allclose(sums, block.sums, rtol=1e-9, atol=0) and np.allclose(squares, block.squares, rtol=1e-9)):
        problems.append("the statistics disagree with the data")
    return problems


def _row_classes(store, labels: np.ndarray, n_stat: int) -> np.ndarray:
    """Each row's class position (its label's place in the store's classes; 0 where the statistics are totals)."""
    if n_stat == 1:
        return np.zeros(len(labels), np.intp)
    return np.clip(np.searchsorted(store.classes, labels), 0, len(store.classes) - 1)


# ---------------------------------------------------------------------------------------------
# the manifest's key, checked (``store``: a BlockStore, not imported here: it opens its layout with this module)


def _checked_entry(store) -> dict:
    """The manifest's ``columns`` entry, after checking its fields; a damaged one is one line naming the field."""
    entry = store.manifest.get(COLUMNS_KEY)
    where = f"{store.path / F.MANIFEST}: its '{COLUMNS_KEY}' entry"
    remedy = f"write the columns again ('blocksvm columns {store.path}')"
    if not isinstance(entry, dict):
        raise StoreError(f"{where} is not an object: {remedy}")
    version = entry.get("version")
    if _is_int(version) and version > COLUMNS_VERSION:
        raise StoreError(
            f"{store.path}: its column layout is version {version}; this blocksvm reads version {COLUMNS_VERSION} "
            f"(upgrade blocksvm, or {remedy})"
        )
    problem = _entry_problem(entry, store)
    if problem:
        raise StoreError(f"{where} is damaged ({problem}): {remedy}")
    return entry


def _entry_problem(entry: dict, store) -> str | None:
    version = entry.get("version")
    if version not in range(1, COLUMNS_VERSION + 1) or not _is_int(version):
        return f"version {version!r}"
    block_mb = entry.get("block_mb")
    if not isinstance(block_mb, (int, float)) or isinstance(block_mb, bool) or not block_mb > 0:
        return "block_mb"
    if entry.get("stat_classes") != (stat_classes(store) if version == columns_version(True) else 0):
        return "stat_classes"
    rows = entry.get("rows")
    if not isinstance(rows, dict) or rows.get("file") != f"{COLUMNS_DIR}/{ROWS_FILE}":
        return "rows"
    if not all(_is_int(rows.get(k)) and rows[k] >= 0 for k in ("bytes", "crc32")):
        return "rows"
    blocks = entry.get("blocks")
    if not isinstance(blocks, list):
        return "blocks"
    previous_stop = 0
    for b, block in enumerate(blocks):
        if not isinstance(block, dict) or not all(
            _is_int(block.get(k)) and block[k] >= 0 for k in ("first", "stop", "columns", "nnz", "bytes", "crc32")
        ):
            return f"blocks[{b}]"
        if not re.fullmatch(rf"{COLUMNS_DIR}/col-\d{{5,}}\.h5", str(block.get("file"))):
            return f"blocks[{b}].file"
        if not previous_stop <= block["first"] < block["stop"] <= store.n_features:
            return f"blocks[{b}]: the feature range"
        if not 0 < block["columns"] <= min(block["nnz"], block["stop"] - block["first"]):
            return f"blocks[{b}]: columns and nnz"
        previous_stop = block["stop"]
    if sum(block["nnz"] for block in blocks) != store.nnz:
        return "the blocks' nnz do not add up to the store's"
    return None


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def columns_version(statistics: bool) -> int:
    """The version of a layout with or without statistics: 1 with (every layout of blocksvm before 0.46 has them),
    2 without (an older blocksvm refuses it, asking for an upgrade, instead of reading statistics that are not
    there)."""
    return 1 if statistics else 2


def stat_classes(store) -> int:
    """Columns of the statistics: one a class, or one of totals for a store of more than 256 classes."""
    n = len(store.classes)
    return n if 1 <= n <= MAX_STAT_CLASSES else 1


def rows_dtype(n_rows: int) -> np.dtype:
    return np.dtype(np.int32 if n_rows < 2**31 else np.int64)


def _short(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]
