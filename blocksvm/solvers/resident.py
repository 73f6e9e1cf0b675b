"""Dual CD at the speed of its sweeps: one sweep a pass over the rows kept in memory and the blocks streamed in, in
one random order, with LIBLINEAR's shrinking carried from pass to pass (a mixin of the dual CD learner).

The engine keeps as many blocks in memory as the run's budget holds (:class:`blocksvm.store.KeptBlocks`: planned
when the run starts, read once, one CSR matrix of resident rows) and streams the others at every pass. The first pass
sweeps each block as it comes. From the second, the resident rows are cut at every pass into as many random shares as
the store has blocks (:func:`shares`: a pure function of the seed and the pass), and the visit of block ``b`` sweeps
share ``b``, with the block's own rows when it was streamed in: every row is swept once a pass, in one random order
over them all (Hsieh et al. 2008's random permutation, cut in pieces: rows visited block by block, in a fixed or
blocked order, make dual CD crawl where rows are alike, as cyclic coordinate descent does, Sun & Ye 2019), and the
resident rows are swept in proportion to the blocks that arrive (StreamSVM's cached loops, Matsushima, Vishwanathan
& Smola 2012), never once per block.

Where the budget keeps no rows (``--inner-passes 1`` under a tenth of them), the streamed blocks are swept two at a
time (:meth:`ResidentRows.visit_resident`): a block's own rows swept alone, one sweep a visit, are the same group of
rows in every pass, and coordinate descent in groups that never change crawls where rows are alike (a9a in 2 to 20
blocks: a relative gap of 1.3e-3 to 4.5e-3 after 1,000 passes, where one random order of all the rows reaches 1e-3
in 111); paired afresh every pass (the blocks' order is drawn again), the groups change and it converges as one
random order does (docs/ALGORITHMS.md).

Shrinking: a row at a bound it keeps (LIBLINEAR's test against the last pass's PG bounds) is flagged and left out of
the passes after, as in LIBLINEAR's own loop, until the violation over the rows swept has fallen tenfold since the
rows last came back, when they all come back. A shrunk row's loss when it was shrunk stands for it in the pass's
estimates (the exact evaluation that confirms the gap reads every row).
"""

from __future__ import annotations

import time

import numpy as np

from blocksvm.rows import Rows
from blocksvm.solvers import _dual_cd_kernels as K
from blocksvm.solvers._common import row_norms_squared
from blocksvm.solvers.base import BlockReport
from blocksvm.solvers.evaluate import NO_WEIGHTS, correct_predictions, counted

# the arrays of a run's state besides w and alpha (empty in the other modes)
RESIDENT_STATE = ("shrunk", "pg_old", "pass_pg", "unshrink_at", "frozen", "counts")
UNSHRINK = 0.1  # every row comes back once the violation has fallen to this share of what it was when they last did
# ``counts``: visits made in this pass; the resident rows are swept (from the second pass); the block held for the
# next visit's sweep, its index + 1 (0: none)
VISITS, READY, HELD = 0, 1, 2


class ResidentRows:
    """A mixin of :class:`blocksvm.solvers.dual_cd.DualCDSolver`: its visits when it sweeps the resident rows.

    State, per problem: ``shrunk`` (a flag a row), ``pg_old`` (the last pass's PG bounds: LIBLINEAR's ``PGmax_old``,
    ``PGmin_old``), ``pass_pg`` (this pass's so far), ``unshrink_at`` (the violation at which every row comes back),
    ``frozen`` (loss and right rows of the rows shrunk: before this pass, and in it); ``counts``: visits made in this
    pass, and whether the resident rows are swept.
    """

    def start_resident(self, problem, params, kept) -> None:
        n_k = problem.n_problems
        on = kept is not None
        self.kept, self.seed = kept, params.seed
        self.shrunk = np.zeros((n_k, problem.n_rows if on else 0), np.bool_)
        self.pg_old = np.tile([np.inf, -np.inf], (n_k, 1))
        self.pass_pg = np.tile([-np.inf, np.inf], (n_k, 1))
        self.unshrink_at = np.full(n_k, np.inf)
        self.frozen = np.zeros((n_k, 2, 2))  # [problem, before this pass | in it, loss | right rows]
        self.counts = np.zeros(3, np.int64)
        # no rows kept: the streamed blocks swept in pairs (the first of a pair held until the second comes)
        self.paired = on and not kept.plan and problem.n_blocks > 1
        self._held = None  # the block held (re-read after a resume from its index in ``counts``)
        self.rows_kept = None  # the resident rows' per-problem arrays, made when they are first swept
        self.rows_shrunk = 0  # rows (of all problems) left out of the pass that ended last
        self.outer = 1

    def forget_shrinking(self) -> None:
        """Every row back, no PG bounds (the problem or its alphas moved: what was shrunk is no longer known)."""
        self.shrunk[:] = False
        self.pg_old[:] = [np.inf, -np.inf]
        self.pass_pg[:] = [-np.inf, np.inf]
        self.unshrink_at[:] = np.inf
        self.frozen[:] = 0.0
        self.rows_kept = None  # (their 1 / Qbar_ii follow the costs)

    def start_pass(self, outer: int) -> None:
        self.outer = outer
        self._shares = None

    # ---- a visit ------------------------------------------------------------------------------------

    def visit_resident(self, block, seeds) -> BlockReport:
        """Sweep the block's share of the resident rows, and the block's own rows unless they are resident; with no
        rows kept, the first of a pair of blocks is held and swept with the second (:meth:`_opens_pair`)."""
        p = self.problem
        if self.counts[READY] and self._shares is None:
            self._begin_sweeps()
        if self.paired and self._opens_pair():
            self.counts[HELD] = block.index + 1
            self._held = block
            return self._report(_no_sweep(p.n_problems), block, 0 if p.n_problems > 1 else None, 0.0)
        resident = bool(self.counts[READY]) and self.kept.holds(block.index)
        own = None if resident else _own_rows(p, block, self.tables)
        held = self._take_held()
        if held is not None:  # the pair's first block stands where the resident rows' share would
            share, kept = np.arange(held.n_rows), {**_own_rows(p, held, self.tables), **_csr(held)}
        else:
            share = self._shares[block.index] if self._shares is not None else np.zeros(0, np.int64)
            kept = self.rows_kept
        seen = self._seen_correct(block, own, share, held) if p.n_problems > 1 and p.folds == 1 else None
        empty = _EMPTY_ROWS
        a_csr = (block.indptr, block.indices, block.data) if own is not None else _empty_csr(block.data.dtype)
        b_csr = (kept["indptr"], kept["indices"], kept["data"]) if kept is not None else _empty_csr(block.data.dtype)
        hyper = np.array([p.bias, 1.0, -1.0, self.sigma])

        def sweep(k: int) -> np.ndarray:
            rows_a = (own["y"][k], own["qd"][k], own["weights"], own["ids"]) if own is not None else empty
            rows_b = (kept["y"][k], kept["qd"][k], kept["weights"], kept["ids"]) if kept is not None else empty
            members = K.working_members(
                len(rows_a[3]), share, rows_a[3], rows_b[3], self.shrunk[k],
                own["trains"][k] if own is not None else _NONE, kept["trains"][k] if kept is not None else _NONE,
            )  # fmt: skip
            upper, diag = self.tables[k]
            box = (upper, diag, p.costs[k])
            loss = p.loss.table
            return K.sweep_working(
                a_csr, b_csr, rows_a, rows_b, self.w[k], self.alpha[k], box, hyper, loss, int(seeds[k]), members,
                self.shrunk[k], self.pg_old[k],
            )  # fmt: skip

        start = time.perf_counter()
        stats = np.array(self.map(sweep, range(p.n_problems)))
        sweep_seconds = time.perf_counter() - start
        # the blocks streamed in: their dual sums, exact (the kept ones': refresh_resident_sums)
        for rows, streamed in ((own, block), (kept if held is not None else None, held)):
            if rows is None:
                continue
            for k in range(p.n_problems):
                alpha = self.alpha[k, rows["ids"]]
                self.block_sums[k, streamed.index] = self._terms(k, rows["y"][k], alpha, streamed.weights).sum(axis=0)
        return self._report(stats, block, seen, sweep_seconds)

    def _opens_pair(self) -> bool:
        """This visit's block is the first of a pair: none is held and it is not the pass's last (an odd one out is
        swept alone)."""
        return self.counts[HELD] == 0 and self.counts[VISITS] < self.problem.n_blocks - 1

    def _take_held(self):
        """The block held for this visit (read again where a resumed run comes back between a pair's visits), or
        None; none is held after."""
        index = int(self.counts[HELD]) - 1
        if index < 0:
            return None
        held = self._held if self._held is not None else self.resources.blocks.read_block(index)
        self.counts[HELD], self._held = 0, None
        return held

    def _report(self, stats: np.ndarray, block, seen, sweep_seconds: float) -> BlockReport:
        """The visit's report; the pass's first also counts the rows shrunk before it (their loss when shrunk)."""
        loss, right = stats[:, K.SEEN_LOSS].copy(), float(stats[0, K.SEEN_CORRECT])
        if self.counts[VISITS] == 0:
            loss += self.frozen[:, 0, 0]
            right += self.frozen[0, 0, 1]
        self.counts[VISITS] += 1
        self.frozen[:, 1, 0] += stats[:, K.SHRUNK_LOSS]
        self.frozen[:, 1, 1] += stats[:, K.SHRUNK_CORRECT]
        self.pass_pg[:, 0] = np.fmax(self.pass_pg[:, 0], stats[:, K.SEEN_PG_MAX])
        self.pass_pg[:, 1] = np.fmin(self.pass_pg[:, 1], stats[:, K.SEEN_PG_MIN])
        return BlockReport(
            loss=loss,
            correct=counted(right, block) if seen is None else seen,
            passes=1.0,
            updates=int(stats[:, K.SEEN_UPDATES].sum()),
            figures=violations(stats[:, K.SEEN_PG_MAX], stats[:, K.SEEN_PG_MIN], stats[:, K.SEEN_PG_SUM]),
            sweep_seconds=sweep_seconds,
        )

    def _seen_correct(self, block, own, share, held=None) -> int | float:
        """One-vs-rest: the rows of the visit predicted right by the arg-max of ``w`` before it (a walk of their
        own: each problem's sweep counts its own margins)."""
        p, W = self.problem, self.w
        right = correct_predictions(p, W, block) if own is not None else 0
        if held is not None:
            right += correct_predictions(p, W, held)
        elif len(share):
            r = self.kept.resident()
            right += correct_predictions(p, W, Rows(r.indptr, r.indices, r.data, r.labels, None, r.weights).take(share))
        return right

    # ---- the passes ---------------------------------------------------------------------------------

    def _begin_sweeps(self) -> None:
        """The first visit of a pass that sweeps the resident rows: all of them in memory (a resumed run reads them
        first), their arrays made once, and this pass's shares."""
        if not self.kept.complete_plan:
            self.kept.complete(self.resources.blocks, prefetch=1, stats=None)
        if self.rows_kept is None:
            self.rows_kept = _kept_rows(self.problem, self.kept.resident(), self.tables)
            blocks = sorted(self.kept.plan, key=lambda b: self.kept.plan[b][0])  # (in the resident rows' order)
            self.rows_kept["blocks"] = np.array(blocks, np.int64)
            self.rows_kept["starts"] = np.array([self.kept.plan[b][0] for b in blocks], np.int64)
        n = len(self.rows_kept["ids"])
        order, starts = K.shares(n, self.problem.n_blocks, _share_seed(self.seed, self.outer))
        self._shares = [order[starts[b] : starts[b + 1]] for b in range(self.problem.n_blocks)]

    def end_pass(self) -> bool:
        """LIBLINEAR's PG bounds for the next pass (its ``PGmax_old``, ``PGmin_old``); the rows shrunk in this pass
        join those before; every row back once the violation has fallen tenfold since they last came back; and the
        resident rows are swept from the next pass on."""
        if self.kept is None:
            return True
        self.rows_shrunk = int(np.count_nonzero(self.shrunk))  # (the pass swept every row if none)
        high, low = self.pass_pg[:, 0], self.pass_pg[:, 1]
        violation = high - low
        back = violation <= UNSHRINK * self.unshrink_at
        self.pg_old[:, 0] = np.where(back | ~(high > 0), np.inf, high)
        self.pg_old[:, 1] = np.where(back | ~(low < 0), -np.inf, low)
        self.unshrink_at = np.where(back, violation, self.unshrink_at)
        self.shrunk[back] = False
        self.frozen[:, 0] += self.frozen[:, 1]
        self.frozen[:, 1] = 0.0
        self.frozen[back] = 0.0
        self.pass_pg[:] = [-np.inf, np.inf]
        self.counts[VISITS] = 0
        self.counts[READY] = 1  # (a run resumed inside the first pass reads the plan's blocks it did not keep)
        return True

    def bring_back_rows(self) -> None:
        """Every row back and no PG bounds (LIBLINEAR's ``active_size = l``, ``PGmax_old = INF``)."""
        if self.kept is not None:
            self.shrunk[:] = False
            self.pg_old[:] = [np.inf, -np.inf]
            self.frozen[:] = 0.0

    def refresh_resident_sums(self) -> None:
        """The kept blocks' dual sums made exact from their alphas (they move in every visit's share): before a
        record's dual and a checkpoint's state, once a pass."""
        kept = self.rows_kept
        if kept is None:
            return
        for k in range(self.problem.n_problems):
            terms = self._terms(k, kept["y"][k], self.alpha[k, kept["ids"]], kept["weights_or_none"])
            sums = np.add.reduceat(terms, kept["starts"], axis=0) if len(terms) else terms
            self.block_sums[k, kept["blocks"]] = sums

    def state(self) -> dict[str, np.ndarray]:
        self.refresh_resident_sums()
        return super().state()


def _no_sweep(n_problems: int) -> np.ndarray:
    """The statistics of a visit that swept no row (each problem's)."""
    stats = np.zeros((n_problems, K.N_SEEN))
    stats[:, K.SEEN_PG_MAX], stats[:, K.SEEN_PG_MIN] = -np.inf, np.inf
    return stats


def _csr(block) -> dict:
    return {"indptr": block.indptr, "indices": block.indices, "data": block.data}


def _empty_csr(dtype) -> tuple:
    """No rows, their values of the store's ``dtype``: the sweep then has the types of a visit with both sides (a
    float64 store compiles the kernel once, not once for each side left empty)."""
    return _EMPTY_CSR[dtype == np.float64]


_EMPTY_CSR = tuple((np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, t)) for t in (np.float32, np.float64))
_EMPTY_ROWS = (np.zeros(0), np.zeros(0), NO_WEIGHTS, np.zeros(0, np.int64))
_NONE = np.zeros(0, np.bool_)


def _share_seed(seed: int, outer: int) -> int:
    """The seed of pass ``outer``'s shares of the resident rows (a pure function of the run's seed and the pass)."""
    return int(np.random.SeedSequence([seed, outer, 0x5AE5]).generate_state(1, np.uint64)[0] >> np.uint64(1))


def _trains(problem, ids: np.ndarray, weights) -> np.ndarray:
    """Each problem's flag a row: it trains on the row (not its held-out fold's, not of weight 0); (n_problems, 0)
    when every problem trains on every row."""
    folds = problem.folds > 1
    zero = weights is not None and bool(np.any(weights == 0))
    if not folds and not zero:
        return np.zeros((problem.n_problems, 0), np.bool_)
    out = np.ones((problem.n_problems, len(ids)), np.bool_)
    if folds:
        out &= problem.row_folds(ids)[None, :] != problem.held_out[:, None]
    if zero:
        out &= weights[None, :] > 0
    return out


def _scalars(problem, y: np.ndarray, sq_norms: np.ndarray, weights, tables) -> np.ndarray:
    """``1 / Qbar_ii`` of each row in each problem, (n_problems, rows)."""
    w = NO_WEIGHTS if weights is None else weights
    hyper = np.array([problem.bias, 1.0, -1.0, 1.0])
    return np.array([K.row_scalars(y[k], sq_norms, w, (*tables[k], problem.costs[k]), hyper)
                     for k in range(problem.n_problems)])  # fmt: skip


def _own_rows(problem, block, tables) -> dict:
    """What a sweep needs of a block's own rows: targets, ``1 / Qbar_ii``, weights, store-wide ids, the problems'
    flags."""
    ids = np.arange(block.row_offset, block.row_offset + block.n_rows)
    y = problem.targets(block.labels)
    qd = _scalars(problem, y, row_norms_squared(block.indptr, block.data), block.weights, tables)
    weights = NO_WEIGHTS if block.weights is None else block.weights
    return {"y": y, "qd": qd, "weights": weights, "ids": ids, "trains": _trains(problem, ids, block.weights)}


def _kept_rows(problem, rows, tables) -> dict:
    """What a sweep needs of the resident rows (:class:`blocksvm.store.kept.Resident`): the CSR arrays, targets,
    ``1 / Qbar_ii``, weights, store-wide ids, the problems' flags."""
    y = problem.targets(rows.labels)
    qd = _scalars(problem, y, row_norms_squared(rows.indptr, rows.data), rows.weights, tables)
    return {
        "indptr": rows.indptr,
        "indices": rows.indices,
        "data": rows.data,
        "y": y,
        "qd": qd,
        "weights": NO_WEIGHTS if rows.weights is None else rows.weights,
        "weights_or_none": rows.weights,
        "ids": rows.ids,
        "trains": _trains(problem, rows.ids, rows.weights),
    }


def violations(pg_max: np.ndarray, pg_min: np.ndarray, pg_sum: np.ndarray) -> dict:
    """A visit's figures of LIBLINEAR's violation, each problem's: the extreme projected gradients and the sum of their
    magnitudes (lists, for JSON checkpoints)."""
    return {"pg_max": pg_max.tolist(), "pg_min": pg_min.tolist(), "pg_sum": pg_sum.tolist()}
