"""A store's columns as a column learner reads them: the column layout's door (the column analogue of
:class:`~blocksvm.store.ShardView`).

:class:`ColumnPieces` opens the store's column layout (:mod:`blocksvm.store.column_layout`) and cuts it into a fixed
partition of pieces (contiguous ranges of column blocks, :func:`feature_pieces`); each :class:`ColumnPiece` keeps its
column blocks in memory after their first read when they fit in its share of the memory budget, else reads them at
every use. The learners (:mod:`blocksvm.solvers.by_columns`) and the search of C reach the rows' labels and weights,
the per-feature statistics and the pieces through it, never the layout's files.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from blocksvm._threads import ThreadMap
from blocksvm.errors import ParameterError
from blocksvm.store.readahead import ReadStats


def feature_pieces(blocks: list[dict], pieces: int) -> list[np.ndarray]:
    """The column blocks of each of ``pieces`` pieces: contiguous ranges, each about ``nnz / pieces`` entries."""
    if pieces > len(blocks):
        raise ParameterError(
            f"--column-pieces {pieces} needs at least {pieces} column blocks, the store has {len(blocks)}: write "
            "its columns in smaller blocks (blocksvm columns STORE --block-mb MB) or use fewer pieces"
        )
    nnz = np.cumsum([b["nnz"] for b in blocks], dtype=np.float64)
    cuts = [0]
    for p in range(1, pieces):  # the first block past p/pieces of the entries, at least one block a piece
        cut = int(np.searchsorted(nnz, nnz[-1] * p / pieces, side="left")) + 1
        cuts.append(min(max(cut, cuts[-1] + 1), len(blocks) - (pieces - p)))
    cuts.append(len(blocks))
    return [np.arange(a, b) for a, b in zip(cuts[:-1], cuts[1:])]


class ColumnPieces:
    """The column layout of ``store`` in ``n_pieces`` pieces, each keeping its blocks within ``budget / n_pieces``
    bytes and running its separable work on ``threads`` threads.

    Parameters
    ----------
    store : BlockStore
        A store with a column layout (``store.columns``).
    n_pieces : int
        Pieces of the features (``--column-pieces``).
    bias : float
        The bias feature's value (<= 0: none): the last piece owns its weight, after the features.
    budget : float
        Bytes of column blocks the pieces may keep in memory, shared equally.
    threads : int
        Threads of each piece's separable work.
    prefetch : int
        Column blocks read ahead.

    Attributes
    ----------
    pieces : list of ColumnPiece
    labels, row_weights : ndarray
        Every row's label and instance weight (None: none), in store order.
    """

    def __init__(self, store, n_pieces: int, bias: float, budget: float, threads: int, prefetch: int):
        layout = store.columns
        if layout is None:
            raise ParameterError(
                f"{store.path} has no column layout, which the column learners read: write it with 'blocksvm "
                "columns STORE' (train and tune write it themselves the first time)"
            )
        self.layout, self.budget = layout, budget
        groups = feature_pieces(layout.blocks, n_pieces)
        share = budget / len(groups)
        n_features = store.n_features
        self.pieces = [
            ColumnPiece(p, layout, ids, n_features, bias if p == len(groups) - 1 else None, share, threads, prefetch)
            for p, ids in enumerate(groups)
        ]
        self.labels, self.row_weights = layout.row_labels()

    # ---- the layout's figures and reads that the learners use (its files stay behind this door) ----

    @property
    def n_rows(self) -> int:
        return self.layout.n_rows

    @property
    def nnz(self) -> int:
        return self.layout.nnz

    @property
    def n_blocks(self) -> int:
        """Column blocks of the layout."""
        return self.layout.n_blocks

    @property
    def stat_classes(self) -> int:
        """The classes the per-feature statistics are counted for (0: none kept)."""
        return self.layout.stat_classes

    def statistics(self, b: int):
        """Column block ``b``'s per-feature statistics."""
        return self.layout.statistics(b)

    def iter_blocks(self, *args, **kwargs):
        """The layout's column blocks (:meth:`~blocksvm.store.column_layout.ColumnLayout.iter_blocks`)."""
        return self.layout.iter_blocks(*args, **kwargs)

    @property
    def piece_weights(self) -> list[slice]:
        """The weights of each piece, in the pieces' order."""
        return [piece.weights for piece in self.pieces]

    @property
    def bytes(self) -> int:
        """Bytes the pieces' column blocks take in memory."""
        return sum(piece.bytes for piece in self.pieces)

    @property
    def fits(self) -> bool:
        """Every piece keeps its blocks in memory."""
        return all(piece.fits for piece in self.pieces)


class ColumnPiece:
    """A piece of the features: a contiguous range of the column layout's blocks (and the bias feature, for the last
    piece), kept in memory where the piece runs when they fit in its share of the budget, else read at every use.

    ``weights`` are the indices of the weights it owns (its blocks' feature range, and the bias's last); ``blocks()``
    yields its column blocks in order, ``with_bias()`` then the bias column (every row, value B) when it owns one;
    ``engine`` runs separable work (the gradient) on the piece's threads.
    """

    mutable = False  # its kept blocks are a cache: a round run twice gives the same results

    def __init__(
        self,
        index: int,
        layout,
        block_ids: np.ndarray,
        n_features: int,
        bias: float | None,
        budget: float,
        threads: int,
        prefetch: int,
    ):
        entries = layout.blocks
        self.index, self.layout, self.block_ids, self.prefetch = index, layout, np.asarray(block_ids), prefetch
        last = bias is not None
        lo = entries[int(block_ids[0])]["first"] if index > 0 else 0
        hi = n_features if last else entries[int(block_ids[-1])]["stop"]
        self.bias = bias if last else 0.0
        # the piece's weights, its features and (the last piece) the bias slot after them: a range, so that the
        # learners' arrays over them are views, not copies of the size of the features
        self.weights = slice(lo, n_features + 1 if last else hi)
        self.n_rows, self.threads = layout.n_rows, threads
        item = layout.rows_dtype.itemsize + np.dtype(layout.store.dtype).itemsize  # a row id and a value an entry
        self.bytes = sum(entries[int(b)]["nnz"] * item for b in block_ids)
        self.fits = self.bytes <= budget
        self.budget = budget
        self.kept: dict[int, object] = {}
        self.scratched: dict[str, np.ndarray] = {}
        self.read = ReadStats()

        self.engine = ThreadMap(threads)  # (pickled without its threads: a piece on a worker starts its own)

    def __getstate__(self) -> dict:  # a piece shipped to a worker reads its blocks there
        return {**self.__dict__, "kept": {}, "scratched": {}, "_bias_column": None}

    def scratch(self, name: str, shape: tuple, dtype=np.float64, fill=None) -> np.ndarray:
        """An array of a learner's round kept where the piece runs from one round to the next (set to ``fill`` when
        given): a fresh array as large as the features costs the first touch of its pages every round, a quarter of
        newGLMNET's read of the gradient over 2^24 features. The round's results may be views of it: the learner
        copies what it keeps before the next round."""
        array = self.scratched.get(name)
        if array is None or array.shape != tuple(shape) or array.dtype != np.dtype(dtype):
            array = self.scratched[name] = np.empty(shape, dtype)
        if fill is not None:
            array.fill(fill)
        return array

    def blocks(self):
        """The piece's column blocks in order (kept, or read ahead)."""
        missing = [int(b) for b in self.block_ids if int(b) not in self.kept]
        read = self.layout.iter_blocks(missing, prefetch=self.prefetch, stats=self.read, statistics=False)
        fresh = iter(read) if missing else None
        for b in self.block_ids:
            block = self.kept.get(int(b))
            if block is None:
                block = next(fresh)
                if self.fits:
                    self.kept[int(b)] = block
            yield block

    def narrowed(self, marked: np.ndarray) -> Narrowed:
        """The piece's column blocks narrowed to the columns whose feature ``marked`` marks, for the passes of one
        round (:class:`Narrowed`)."""
        return Narrowed(self, marked)

    def with_bias(self):
        """The piece's column blocks, then its bias column (where it owns one)."""
        yield from self.blocks()
        if self.bias > 0:
            yield self.bias_column()

    @property
    def block_columns(self) -> np.ndarray:
        """The stored columns of each of the piece's blocks, in order."""
        return np.array([self.layout.blocks[int(b)]["columns"] for b in self.block_ids], np.int64)

    def bias_column(self):
        """The bias feature as a column: every row, value B (kept: a row id and a value a row); None where the piece
        owns no bias."""
        if self.bias <= 0:
            return None
        if getattr(self, "_bias_column", None) is None:
            n = self.n_rows
            self._bias_column = BiasColumn(  # (its index: after the layout's blocks)
                self.layout.n_blocks,
                np.array([self.weights.stop - 1]),
                np.array([0, n]),
                np.arange(n),
                np.full(n, self.bias),
            )
        return self._bias_column


class Narrowed:
    """A piece's column blocks narrowed to some features' columns (newGLMNET's quadratic: the features not shrunk),
    for the passes of one round: each iteration yields them in order. Where the piece does not keep its blocks (they
    exceed its share of the budget), the first pass narrows the blocks it reads and keeps the narrowed ones while they
    fit in that share, and the later passes read nothing: shrinking leaves a small part of the columns, which the
    passes read again and again. A kernel that visits a block's marked columns visits them in the same order in the
    narrowed block, so its results are the same."""

    def __init__(self, piece: ColumnPiece, marked: np.ndarray):
        self.piece, self.marked = piece, marked
        self.kept: list | None = None if piece.fits else []  # (a piece that keeps its blocks narrows nothing)
        self.complete = False

    def __iter__(self):
        if self.kept is None or self.complete:
            yield from self.kept if self.complete else self.piece.blocks()
            return
        size = 0
        for block in self.piece.blocks():
            if self.kept is None:  # (they did not fit: every pass reads)
                yield block
                continue
            narrow = block.columns_of(self.marked)
            size += narrow.nbytes
            self.kept = self.kept + [narrow] if size <= self.piece.budget else None
            yield narrow
        self.complete = self.kept is not None


@dataclass
class BiasColumn:
    """The bias feature as a column block (the kernels read ``features``, ``indptr``, ``rows``, ``data``)."""

    index: int
    features: np.ndarray
    indptr: np.ndarray
    rows: np.ndarray
    data: np.ndarray

    @property
    def csc(self) -> tuple:
        """``(features, indptr, rows, data)``, as :attr:`ColumnBlock.csc`."""
        return self.features, self.indptr, self.rows, self.data
