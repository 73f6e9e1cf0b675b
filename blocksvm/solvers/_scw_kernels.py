"""Soft Confidence-Weighted learning, SCW-I and SCW-II, with a diagonal covariance, on one block.

Wang, Zhao & Hoi, "Exact Soft Confidence-Weighted Learning", ICML 2012, Algorithms 1 and 2. A Gaussian
``N(mu, Sigma)`` over weight vectors, ``Sigma`` diagonal (1 at the start); the model is ``mu``. For each row,
with ``m = y mu.x`` and ``v = x^T Sigma x`` measured before the update, ``phi`` the confidence parameter,
``psi = 1 + phi^2 / 2`` and ``zeta = 1 + phi^2``, a row with the loss ``max(0, phi sqrt(v) - m) > 0`` makes::

    SCW-I:   alpha = min(C, max(0, (-m psi + sqrt(m^2 phi^4 / 4 + v phi^2 zeta)) / (v zeta)))
    SCW-II:  n = v + 1 / (2C),  gamma = phi sqrt(phi^2 m^2 v^2 + 4 n v (n + v phi^2)),
             alpha = max(0, (-(2 m n + phi^2 m v) + gamma) / (2 (n^2 + n v phi^2)))
    u = (-alpha v phi + sqrt(alpha^2 v^2 phi^2 + 4 v))^2 / 4,   beta = alpha phi / (sqrt(u) + v alpha phi)
    mu <- mu + alpha y Sigma x,    Sigma <- Sigma - beta Sigma x x^T Sigma

``Sigma x x^T Sigma`` is kept on the diagonal, ``Sigma_jj <- Sigma_jj - beta Sigma_jj^2 x_j^2``; the bias feature
is one more coordinate. A row's class weight ``c`` multiplies ``C`` (as LIBLINEAR's ``-wi`` does), and so does
its instance weight. A row with ``v = 0`` changes nothing.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from blocksvm.solvers._common import UPDATES, online_pass, visited_row
from blocksvm.solvers._confidence_weighted_kernels import judged_margin


@njit(cache=True, nogil=True)
def scw1_alpha(m, v, phi, C):
    """SCW-I's step ``alpha`` (Algorithm 1)."""
    psi, zeta = 1.0 + phi * phi / 2.0, 1.0 + phi * phi
    step = (-m * psi + math.sqrt(m * m * phi**4 / 4.0 + v * phi * phi * zeta)) / (v * zeta)
    return min(C, max(0.0, step))


@njit(cache=True, nogil=True)
def scw2_alpha(m, v, phi, C):
    """SCW-II's step ``alpha`` (Algorithm 2)."""
    n = v + 1.0 / (2.0 * C)
    gamma = phi * math.sqrt(phi * phi * m * m * v * v + 4.0 * n * v * (n + v * phi * phi))
    return max(0.0, (-(2.0 * m * n + phi * phi * m * v) + gamma) / (2.0 * (n * n + n * v * phi * phi)))


@njit(cache=True, nogil=True, inline="always")
def scw_pass(rows, y, mu, sigma, setup, seed, step, phi, C):
    """One pass of SCW updates whose ``alpha`` is ``step`` (:func:`scw1_alpha` or :func:`scw2_alpha`)."""
    indptr, indices, data, weights = rows
    bias, loss, cost, weight = setup
    n_w = mu.shape[0] - 1
    order, stats = online_pass(indptr, seed)
    for s in range(order.shape[0]):
        i, own, start, stop = visited_row(order, s, indptr, weights)  # the row's instance weight
        if own == 0.0:
            continue  # a row of weight 0 is not there
        # m = y mu.x and v = x^T Sigma x
        m, v, label = judged_margin(mu, sigma, indices, data, start, stop, bias, y[i], own, stats, loss, cost)
        if v <= 0 or phi * math.sqrt(v) - m <= 0:
            continue  # x = 0, or confident enough already
        alpha = step(m, v, phi, C * weight[label] * own)
        if alpha <= 0:
            continue
        u = (-alpha * v * phi + math.sqrt(alpha * alpha * v * v * phi * phi + 4.0 * v)) ** 2 / 4.0
        beta = alpha * phi / (math.sqrt(u) + v * alpha * phi)
        d = alpha * y[i]  # mu <- mu + alpha y Sigma x, then Sigma_jj <- Sigma_jj - beta (Sigma_jj x_j)^2
        for k in range(start, stop):
            j = np.uint32(indices[k])
            sx = sigma[j] * np.float64(data[k])
            mu[j] += d * sx
            sigma[j] -= beta * sx * sx
        if bias > 0:
            sx = sigma[n_w] * bias
            mu[n_w] += d * sx
            sigma[n_w] -= beta * sx * sx
        stats[UPDATES] += 1
    return stats


@njit(cache=True, nogil=True)
def scw1_block(rows, y, mu, state, hyper, setup, seed):
    """One pass of SCW-I over a block (the online kernel contract: :mod:`._common`). ``mu``: the mean;
    ``state``: ``(sigma,)``, the diagonal of ``Sigma``; ``hyper``: ``[phi, C]``. The hinge loss is reported."""
    return scw_pass(rows, y, mu, state[0], setup, seed, scw1_alpha, hyper[0], hyper[1])


@njit(cache=True, nogil=True)
def scw2_block(rows, y, mu, state, hyper, setup, seed):
    """One pass of SCW-II over a block, as :func:`scw1_block`."""
    return scw_pass(rows, y, mu, state[0], setup, seed, scw2_alpha, hyper[0], hyper[1])
