"""Confidence-Weighted (CW) and AROW updates with a diagonal covariance, on one block.

Both keep a Gaussian ``N(mu, Sigma)`` over weight vectors, ``Sigma`` diagonal; the model's weights
are ``mu``. For each row, with ``M = y mu.x`` and ``V = x^T Sigma x`` measured before the update::

    mu <- mu + alpha y Sigma x
    Sigma^-1 <- Sigma^-1 + gain diag(x_1^2, ..., x_n^2)

(``mu`` with the ``Sigma`` of before the update), where ``alpha`` and ``gain`` are

- **CW**, the approximate "Variance" algorithm of Dredze, Crammer & Pereira, "Confidence-Weighted
  Linear Classification", ICML 2008, Algorithm 1 (Crammer, Dredze & Pereira, NIPS 2008, for the
  analysis), with ``phi = Phi^-1(eta)``::

      gamma = (-(1 + 2 phi M) + sqrt((1 + 2 phi M)^2 - 8 phi (M - phi V))) / (4 phi V)
      alpha = max(0, gamma),   gain = 2 alpha phi

  (``alpha > 0`` exactly when ``M < phi V``: the row is not yet classified right with
  probability ``eta``);
- **AROW**, Crammer, Kulesza & Dredze, "Adaptive Regularization of Weight Vectors", NIPS 2009,
  Figure 1, with its ``Sigma^-1 <- Sigma^-1 + x x^T / r`` projected on the diagonal::

      when M < 1:   beta = 1 / (V + r),   alpha = (1 - M) beta,   gain = 1 / r

The bias feature is one more coordinate. ``Sigma`` is kept as its diagonal, each entry updated as
``1 / (1 / Sigma_jj + gain x_j^2)``: a row costs O(nnz). A row with ``V = 0`` (no features, no
bias) changes nothing: ``alpha = 0``. A class weight ``c`` of the row's class: AROW weights the
row's loss by it (``r / c`` in place of ``r``, as LIBLINEAR's ``-wi`` weights C); CW, which has no
loss to weight, asks rows of a heavier class for more confidence: ``c phi`` in place of ``phi``
(scaling ``alpha`` instead would overshoot the constraint, and diverges).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from blocksvm.solvers._common import visit_order

# The update rules confidence_block applies.
CW, AROW = range(2)
# Indices into the stats array confidence_block returns.
LOSS_SEEN, CORRECT_SEEN, UPDATES = range(3)


@njit(cache=True, nogil=True, inline="always")
def cw_alpha(M, V, phi):
    """CW's ``alpha = max(0, gamma)`` for the margin ``M`` and its variance ``V > 0``."""
    b = 1.0 + 2.0 * phi * M
    gamma = (-b + math.sqrt(b * b - 8.0 * phi * (M - phi * V))) / (4.0 * phi * V)
    return max(0.0, gamma)


@njit(cache=True, nogil=True)
def confidence_block(indptr, indices, data, y, mu, sigma, bias, loss, cost, weight, rule, phi, r, seed):
    """One pass of CW or AROW updates over a block's rows (file order when ``seed < 0``).

    Parameters
    ----------
    indptr, indices, data : CSR arrays of the block.
    y : ndarray of float64, shape (n_rows,)
        +1 or -1.
    mu, sigma : ndarray of float64, shape (n_features + 1,)
        The mean and the diagonal of ``Sigma``, updated in place; last entry for the bias feature
        of value ``bias`` (none when ``bias <= 0``).
    loss : ndarray of float64, shape (3,)
        The loss table ``[threshold, linear, quadratic]`` of :mod:`blocksvm.losses` (reported only).
    cost : ndarray of float64, shape (2,)
        Weight of the reported loss of negative and positive rows.
    weight : ndarray of float64, shape (2,)
        Class weight of negative and positive rows (1 without them).
    rule : int
        ``CW`` or ``AROW``.
    phi, r : float
        CW's ``phi = Phi^-1(eta)``; AROW's ``r``.
    seed : int

    Returns
    -------
    stats : ndarray of float64, shape (3,)
        Loss sum and rows with a positive margin, each at the ``mu`` the row saw; rows updated.
    """
    n_rows = indptr.shape[0] - 1
    n_w = mu.shape[0] - 1
    bias_sq = bias * bias if bias > 0 else 0.0
    order = np.empty(n_rows, np.int64)
    visit_order(order, np.arange(n_rows), n_rows, seed)
    stats = np.zeros(3, np.float64)
    for s in range(n_rows):
        i = order[s]
        start, stop = np.uint64(indptr[i]), np.uint64(indptr[i + 1])
        # M = y mu.x and V = x^T Sigma x
        dot = mu[n_w] * bias if bias > 0 else 0.0
        V = sigma[n_w] * bias_sq if bias > 0 else 0.0
        for k in range(start, stop):
            j = np.uint32(indices[k])
            x = np.float64(data[k])
            dot += mu[j] * x
            V += sigma[j] * x * x
        M = y[i] * dot
        label = 1 if y[i] > 0 else 0
        slack = loss[0] - M
        if slack > 0:
            stats[LOSS_SEEN] += cost[label] * (slack * (loss[1] + loss[2] * slack))
        if M > 0:
            stats[CORRECT_SEEN] += 1
        if V <= 0:
            continue  # x = 0: nothing can change
        c = weight[label]
        if rule == CW:
            alpha = cw_alpha(M, V, c * phi)
            gain = 2.0 * alpha * c * phi
        else:
            alpha = max(0.0, 1.0 - M) / (V + r / c)
            gain = c / r
        if alpha <= 0:
            continue
        # mu <- mu + alpha y Sigma x (the Sigma of before), then Sigma^-1 <- Sigma^-1 + gain x^2
        d = alpha * y[i]
        for k in range(start, stop):
            j = np.uint32(indices[k])
            x = np.float64(data[k])
            mu[j] += d * sigma[j] * x
            sigma[j] = 1.0 / (1.0 / sigma[j] + gain * x * x)
        if bias > 0:
            mu[n_w] += d * sigma[n_w] * bias
            sigma[n_w] = 1.0 / (1.0 / sigma[n_w] + gain * bias_sq)
        stats[UPDATES] += 1
    return stats
