"""Sums over rows that add in one fixed tree: the same bits however the rows are split among threads or machines.

A pass learner's pass is a sum over rows (a gradient, a Hessian-vector product, loss values). Floating-point
addition is not associative, so a sum split among T threads, each summing its share into its own vector, would
depend on T in its last bits, and Newton's iterates would drift with the number of threads or workers. Here the
rows are cut into **pieces** that depend only on the store and the problem (:class:`PieceLayout`: ``piece_rows``
consecutive rows of a block, the last piece of a block shorter), each piece is summed alone, and the pieces'
sums are added along the binary tree of their indices in the pass (Spark's ``treeAggregate`` with a fixed
shape)::

    level 0:   p0   p1   p2   p3   p4 ...           (a piece's sums, from zero, its rows in order)
    level 1:   p0+p1     p2+p3     ...              (node (l, k) covers pieces k 2^l .. (k + 1) 2^l - 1)
    level 2:   (p0+p1)+(p2+p3)   ...
    the end:   the complete nodes left, added from the last to the first

Whoever sums a range of pieces (a thread, a dask worker) returns the complete aligned nodes inside it
(:func:`range_nodes`); :class:`TreeSum` takes nodes in piece order and makes the rest of the tree, so the total
is the same bits for any split into contiguous ranges: one thread, T threads, K workers, or a run resumed in
the middle of a pass (its checkpoint holds the :class:`TreeSum`'s nodes).

A sums value is a dict of float64 arrays, added key by key.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

Sums = dict  # name -> float64 ndarray; two sums of one pass have the same keys and shapes


def add(total: Sums, more: Sums) -> Sums:
    """``total + more``, key by key, into ``total`` (returned)."""
    for name, value in more.items():
        total[name] += value
    return total


@dataclass
class Node:
    """The sums of pieces ``start .. start + 2^level - 1`` (``level`` -1: a partial node, the end of a pass)."""

    start: int
    level: int
    sums: Sums

    @property
    def stop(self) -> int:
        return self.start + (1 << self.level)


class TreeSum:
    """The running sum of pieces ``first .. next - 1``, pushed in order, as the complete aligned nodes of the tree.

    A node pushed starts where the last one stopped and is aligned (its start a multiple of its size); pushing
    merges it with its left sibling while that is the last node. From ``first`` = 0 the nodes left are the whole
    prefix's, and :meth:`total` is the pass's sum; from another ``first`` (a thread's or a worker's range) they
    are what that range contributes, to be pushed into the pass's own.
    """

    def __init__(self, first: int = 0):
        self.first = first
        self.nodes: list[Node] = []

    @property
    def next(self) -> int:
        """The first piece not yet summed."""
        return self.nodes[-1].stop if self.nodes else self.first

    def push(self, node: Node) -> None:
        if node.start != self.next or node.start % (1 << node.level):
            raise ValueError(f"node at piece {node.start} (level {node.level}) pushed after piece {self.next}")
        while self.nodes and self.nodes[-1].level == node.level and self.nodes[-1].start % (2 << node.level) == 0:
            left = self.nodes.pop()  # the left sibling of node
            node = Node(left.start, node.level + 1, add(left.sums, node.sums))
        self.nodes.append(node)

    def extend(self, nodes: list[Node]) -> None:
        for node in nodes:
            self.push(node)

    def total(self) -> Sums:
        """The sum of every piece pushed: the nodes left, added from the last (smallest) to the first."""
        if not self.nodes:
            raise ValueError("no piece was summed")
        total = {name: value.copy() for name, value in self.nodes[-1].sums.items()}
        for node in reversed(self.nodes[:-1]):
            add(total, node.sums)
        return total

    def state(self) -> dict[str, np.ndarray]:
        """The nodes as arrays, for a checkpoint: ``tree.nodes`` (start, level) and ``tree.<i>.<name>``."""
        arrays = {"tree.nodes": np.array([(n.start, n.level) for n in self.nodes], np.int64).reshape(-1, 2)}
        for i, node in enumerate(self.nodes):
            arrays |= {f"tree.{i}.{name}": value for name, value in node.sums.items()}
        return arrays

    @classmethod
    def from_state(cls, arrays: dict[str, np.ndarray]) -> TreeSum:
        """The tree of a pass (from piece 0) as :meth:`state` wrote it."""
        tree = cls()
        for i, (start, level) in enumerate(np.asarray(arrays.get("tree.nodes", np.zeros((0, 2))), np.int64)):
            prefix = f"tree.{i}."
            sums = {k[len(prefix) :]: np.array(v, np.float64) for k, v in arrays.items() if k.startswith(prefix)}
            tree.nodes.append(Node(int(start), int(level), sums))
        return tree


def range_nodes(first: int, stop: int, leaf: Callable[[int], Sums]) -> list[Node]:
    """The complete aligned nodes of pieces ``first .. stop - 1``, in order, each piece's sums ``leaf(i)``.

    Pieces are summed one at a time and merged as soon as both halves of a node are there, so at most
    ``log2(stop - first) + 1`` sums are alive.
    """
    tree = TreeSum(first)
    for i in range(first, stop):
        tree.push(Node(i, 0, leaf(i)))
    return tree.nodes


def split(first: int, stop: int, parts: int) -> list[tuple[int, int]]:
    """``first .. stop - 1`` cut into at most ``parts`` contiguous ranges of nearly equal length (none empty)."""
    cuts = np.linspace(first, stop, min(parts, max(stop - first, 1)) + 1).round().astype(np.int64)
    return [(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:]) if b > a]


# A piece holds about this many nonzeros, or four times as many as the weights, whichever is more: a piece's sums
# are dense vectors of the weights, and zeroing and adding them should cost little beside the piece's own work.
# Measured on 400,000 x 100,000 (60 nonzeros a row), one pass in memory, 1 and 2 threads: pieces of one
# weights' worth of nonzeros 0.21 / 0.12 s (value pass) and 0.15 / 0.10 s (H d); of four, 0.13 / 0.09 and
# 0.14 / 0.07; of sixteen, 0.14 / 0.09 and 0.13 / 0.08 (tools/bench_passes.py's kernel).
PIECE_NNZ = 1 << 18
PIECE_WEIGHTS = 4


class PieceLayout:
    """The pieces of a store: block ``b``'s rows cut every ``piece_rows`` rows, pieces numbered through the store.

    Parameters
    ----------
    block_rows : ndarray of int64
        Rows of each block.
    piece_rows : int
        Rows of a piece (the last of a block may have fewer).
    """

    def __init__(self, block_rows: np.ndarray, piece_rows: int):
        self.block_rows = np.asarray(block_rows, np.int64)
        self.piece_rows = int(piece_rows)
        counts = np.maximum(1, -(-self.block_rows // self.piece_rows))  # an empty block is one empty piece
        self.first = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)

    @classmethod
    def of(cls, block_rows: np.ndarray, nnz: int, n_weights: int) -> PieceLayout:
        """The layout of a store with ``nnz`` nonzeros for sums over ``n_weights`` weights: pieces of about
        ``max(PIECE_NNZ, PIECE_WEIGHTS n_weights)`` nonzeros, at least 256 rows."""
        rows = max(int(np.sum(block_rows)), 1)
        per_row = max(nnz / rows, 1.0)
        return cls(block_rows, max(256, int(np.ceil(max(PIECE_NNZ, PIECE_WEIGHTS * n_weights) / per_row))))

    @property
    def n_pieces(self) -> int:
        return int(self.first[-1])

    def pieces(self, block: int) -> tuple[int, int]:
        """The pieces of ``block``: ``first .. stop - 1``."""
        return int(self.first[block]), int(self.first[block + 1])

    def rows(self, block: int, piece: int) -> tuple[int, int]:
        """The rows of ``piece`` (one of ``block``'s) in the block: ``start .. stop - 1``."""
        start = (piece - int(self.first[block])) * self.piece_rows
        return start, min(start + self.piece_rows, int(self.block_rows[block]))
