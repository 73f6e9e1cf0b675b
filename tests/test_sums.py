"""The fixed tree of blocksvm.sums: a pass's total is the same bits however its pieces are split into ranges.

Oracle: the tree written out by hand for small counts, and the sums of contiguous ranges (threads, shards, a
resumed run's two halves) against one range; the values are drawn over many magnitudes, where a different order of
additions would change the last bits (checked: the plain left-to-right sum differs).
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from blocksvm.sums import PieceLayout, TreeSum, range_nodes, split


def pieces(seed: int, n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(5) * 10.0 ** rng.integers(-9, 9, 5) for _ in range(n)]


def total_of(values: list[np.ndarray], cuts: list[int]) -> np.ndarray:
    """The tree's total when the pieces are summed in the ranges between ``cuts``."""
    tree = TreeSum()
    for a, b in zip(cuts[:-1], cuts[1:]):
        tree.extend(range_nodes(a, b, lambda i: {"v": values[i].copy()}))
    return tree.total()["v"]


def test_the_tree_by_hand():
    a, b, c, d, e = (np.array([x]) for x in (1e16, 1.0, -1e16, 1.0, 3.0))
    got = total_of([a, b, c, d, e], [0, 5])
    assert got[0] == (((a + b) + (c + d)) + e)[0]  # pairs, then pairs of pairs, then what is left, last first
    assert got[0] != ((((a + b) + c) + d) + e)[0]  # (the order matters: this is 3.0, left to right 4.0)


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 70), seed=st.integers(0, 1000), cuts=st.lists(st.integers(0, 70), max_size=12))
def test_any_split_into_ranges_gives_the_same_bits(n, seed, cuts):
    values = pieces(seed, n)
    whole = total_of(values, [0, n])
    cut = sorted({0, n, *(c for c in cuts if 0 < c < n)})
    np.testing.assert_array_equal(total_of(values, cut), whole)
    for parts in (2, 3, 7):
        ranges = split(0, n, parts)
        np.testing.assert_array_equal(total_of(values, [0] + [b for _, b in ranges]), whole)


def test_a_checkpointed_tree_continues_the_same_sum():
    values = pieces(3, 23)
    tree = TreeSum()
    tree.extend(range_nodes(0, 13, lambda i: {"v": values[i].copy()}))
    restored = TreeSum.from_state({k: v.copy() for k, v in tree.state().items()})
    restored.extend(range_nodes(13, 23, lambda i: {"v": values[i].copy()}))
    np.testing.assert_array_equal(restored.total()["v"], total_of(values, [0, 23]))


def test_a_node_out_of_order_is_refused():
    tree = TreeSum()
    tree.extend(range_nodes(0, 3, lambda i: {"v": np.ones(1)}))
    try:
        tree.extend(range_nodes(4, 5, lambda i: {"v": np.ones(1)}))
    except ValueError as exc:
        assert "pushed after piece 3" in str(exc)
    else:
        raise AssertionError("a gap in the pieces was accepted")


def test_pieces_cut_blocks_every_piece_rows_rows():
    layout = PieceLayout(np.array([600, 0, 256, 1000]), 256)
    assert [layout.pieces(b) for b in range(4)] == [(0, 3), (3, 4), (4, 5), (5, 9)]
    assert [layout.rows(0, p) for p in range(3)] == [(0, 256), (256, 512), (512, 600)]
    assert layout.rows(1, 3) == (0, 0)  # an empty block is one empty piece
    assert layout.n_pieces == 9
    # about max(PIECE_NNZ, 4 n_weights) nonzeros a piece, at least 256 rows
    assert PieceLayout.of(np.array([10_000]), nnz=100_000, n_weights=1_000_000).piece_rows == 400_000
    assert PieceLayout.of(np.array([10_000]), nnz=1_000_000, n_weights=10).piece_rows == 2_622  # 2^18 / 100
    assert PieceLayout.of(np.array([10_000]), nnz=100_000_000, n_weights=10).piece_rows == 256
