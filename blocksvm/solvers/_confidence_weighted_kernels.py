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
(scaling ``alpha`` instead would overshoot the constraint, and diverges). A row's instance weight
multiplies ``c``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from blocksvm.solvers._common import UPDATES, judge, online_pass, visited_row


@njit(cache=True, nogil=True, inline="always")
def judged_margin(mu, sigma, indices, data, start, stop, bias, yi, own, stats, loss, cost):
    """The margin ``M = y mu.x`` and its variance ``V = x^T Sigma x`` (``Sigma`` the diagonal ``sigma``) of the row
    of entries ``start .. stop - 1`` and target ``yi`` in one sweep, the bias feature's terms first, and the row
    judged into ``stats`` at ``M`` (its instance weight ``own``): ``(M, V, label)`` (CW, AROW and SCW)."""
    n_w = mu.shape[0] - 1
    dot = mu[n_w] * bias if bias > 0 else 0.0
    V = sigma[n_w] * (bias * bias) if bias > 0 else 0.0
    for k in range(start, stop):
        j = np.uint32(indices[k])
        x = np.float64(data[k])
        dot += mu[j] * x
        V += sigma[j] * x * x
    M = yi * dot
    label = 1 if yi > 0 else 0
    judge(stats, loss, cost, label, M, own)
    return M, V, label


@njit(cache=True, nogil=True)
def cw_rule(M, V, c, phi):
    """CW's ``(alpha, gain)`` for the margin ``M``, its variance ``V > 0`` and the row's class weight ``c``:
    ``alpha = max(0, gamma)`` with ``c phi`` in place of ``phi``, ``gain = 2 alpha c phi``."""
    c_phi = c * phi
    b = 1.0 + 2.0 * c_phi * M
    gamma = (-b + math.sqrt(b * b - 8.0 * c_phi * (M - c_phi * V))) / (4.0 * c_phi * V)
    alpha = max(0.0, gamma)
    return alpha, 2.0 * alpha * c * phi


@njit(cache=True, nogil=True)
def arow_rule(M, V, c, r):
    """AROW's ``(alpha, gain)``: ``alpha = max(0, 1 - M) / (V + r / c)``, ``gain = c / r``."""
    return max(0.0, 1.0 - M) / (V + r / c), c / r


@njit(cache=True, nogil=True, inline="always")
def confidence_pass(rows, y, mu, state, setup, seed, rule, a):
    """One pass of updates by ``rule`` (:func:`cw_rule` or :func:`arow_rule`, whose parameter is ``a``).
    ``state``: ``(sigma, u, count)``: the diagonal of ``Sigma``, and Daume's sum and the step count of the mean
    of the iterates (``AveragingSolver``)."""
    indptr, indices, data, weights = rows
    sigma, u, count = state
    bias, loss, cost, weight = setup
    n_w = mu.shape[0] - 1
    bias_sq = bias * bias if bias > 0 else 0.0
    order, stats = online_pass(indptr, seed)
    c = count[0]  # the step of the row
    for s in range(order.shape[0]):
        i, own, start, stop = visited_row(order, s, indptr, weights)  # the row's instance weight
        if own == 0.0:
            continue  # a row of weight 0 is not there
        M, V, label = judged_margin(mu, sigma, indices, data, start, stop, bias, y[i], own, stats, loss, cost)
        at, c = c, c + 1.0  # the row's step, and the next row's
        if V <= 0:
            continue  # x = 0: nothing can change
        alpha, gain = rule(M, V, weight[label] * own, a)
        if alpha <= 0:
            continue
        # mu <- mu + alpha y Sigma x (the Sigma of before), then Sigma^-1 <- Sigma^-1 + gain x^2
        d = alpha * y[i]
        for k in range(start, stop):
            j = np.uint32(indices[k])
            x = np.float64(data[k])
            mu[j] += d * sigma[j] * x
            u[j] += at * d * sigma[j] * x
            sigma[j] = 1.0 / (1.0 / sigma[j] + gain * x * x)
        if bias > 0:
            mu[n_w] += d * sigma[n_w] * bias
            u[n_w] += at * d * sigma[n_w] * bias
            sigma[n_w] = 1.0 / (1.0 / sigma[n_w] + gain * bias_sq)
        stats[UPDATES] += 1
    count[0] = c
    return stats


@njit(cache=True, nogil=True)
def cw_block(rows, y, mu, state, hyper, setup, seed):
    """One pass of CW over a block (the online kernel contract: :mod:`._common`). ``mu``: the mean;
    ``state``: ``(sigma, u, count)`` (:func:`confidence_pass`); ``hyper``: ``[phi]``. The loss is reported only."""
    return confidence_pass(rows, y, mu, state, setup, seed, cw_rule, hyper[0])


@njit(cache=True, nogil=True)
def arow_block(rows, y, mu, state, hyper, setup, seed):
    """One pass of AROW over a block, as :func:`cw_block`; ``hyper``: ``[r]``."""
    return confidence_pass(rows, y, mu, state, setup, seed, arow_rule, hyper[0])
