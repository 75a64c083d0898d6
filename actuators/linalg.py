"""Small dense linear algebra for the actuator kernels (numba): LU and minimum-norm least squares.

The actuator laws solve tiny systems (3 x 3 for steering, up to 6 rows by a few dozen
columns for allocation and wheel distribution) many times per second.  numba's LAPACK
wrappers compile slowly and load scipy, so the two algorithms they need are written out:

:func:`lu_factor` / :func:`lu_solve`
    Gaussian elimination with partial pivoting (row-wise, the multiplier
    ``l = M[r, c] / M[c, c]``), in place.  ``det M = sign * prod(diag U)``.
:func:`lstsq_min_norm`
    The minimum-norm least-squares solution ``x = A_F^+ b`` of ``min |A_F x - b|`` for the
    columns ``F`` of ``A``, by a one-sided Jacobi SVD (Hestenes): the columns of ``A_F``
    (when it has no more columns than rows) or of ``A_F^T`` (otherwise) are rotated until
    orthogonal, ``X = M V = U S``; singular values at most ``rcond * s_max`` count as zero
    (rank-deficient and under-determined problems are fine).

Kernels trust their inputs (float64 arrays, matching sizes).
"""

import math

import numpy as np
from numba import njit
from numpy.typing import NDArray

__all__ = ["lu_factor", "lu_solve", "lstsq_min_norm"]

#: Largest relative off-diagonal ``|x_i . x_j| / (|x_i| |x_j|)`` the Jacobi sweeps leave.
JACOBI_TOL = 1e-15
#: Most Jacobi sweeps (each over all column pairs); 6 columns converge in fewer than 10.
JACOBI_SWEEPS = 60


@njit(cache=True)
def lu_factor(M: NDArray[np.float64], n: int, perm: NDArray[np.int64]) -> float:
    """LU factorisation with partial pivoting of the leading (n, n) block of ``M``, in place.

    Parameters
    ----------
    M : (>= n, >= n) float64 array; on return ``U`` on and above the diagonal and the
        multipliers of ``L`` (unit diagonal) below it
    n : int
    perm : (>= n,) int64 array; on return the row exchanges: at step k, rows k and
        ``perm[k]`` were swapped (LAPACK's ``ipiv``, from 0)

    Returns
    -------
    float, ``det M``: the product of the pivots with the sign of the row exchanges (0 when a
    column has no non-zero pivot; its elimination is then skipped).
    """
    det = 1.0
    for col in range(n):
        piv = col
        for r in range(col + 1, n):
            if abs(M[r, col]) > abs(M[piv, col]):
                piv = r
        perm[col] = piv
        if piv != col:
            for j in range(n):
                M[col, j], M[piv, j] = M[piv, j], M[col, j]
            det = -det
        p = M[col, col]
        det *= p
        if p == 0.0:
            continue
        for r in range(col + 1, n):
            f = M[r, col] / p
            M[r, col] = f
            if f != 0.0:
                for j in range(col + 1, n):
                    M[r, j] -= f * M[col, j]
    return det


@njit(cache=True)
def lu_solve(
    LU: NDArray[np.float64], n: int, perm: NDArray[np.int64], x: NDArray[np.float64]
) -> None:
    """Solve ``M x = rhs`` from :func:`lu_factor`'s factors; ``x`` holds ``rhs`` on entry.

    Parameters
    ----------
    LU : (>= n, >= n) float64 array, the factors
    n : int
    perm : (>= n,) int64 array, the row exchanges from :func:`lu_factor`
    x : (>= n,) float64 array, overwritten (a zero pivot gives inf or nan)
    """
    for k in range(n):  # the same row exchanges, in order
        j = perm[k]
        if j != k:
            x[k], x[j] = x[j], x[k]
    for col in range(n):  # forward: L y = P rhs
        xc = x[col]
        if xc != 0.0:
            for r in range(col + 1, n):
                x[r] -= LU[r, col] * xc
    for col in range(n - 1, -1, -1):  # back: U x = y
        acc = x[col]
        for j in range(col + 1, n):
            acc -= LU[col, j] * x[j]
        x[col] = acc / LU[col, col]


@njit(cache=True)
def lstsq_min_norm(
    A: NDArray[np.float64],
    cols: NDArray[np.int64],
    k: int,
    b: NDArray[np.float64],
    rcond: float,
    x: NDArray[np.float64],
) -> int:
    """Minimum-norm solution of ``min_x |A[:, cols[:k]] x - b|_2`` (one-sided Jacobi SVD).

    Parameters
    ----------
    A : (m, n) float64 array
    cols : (>= k,) int64 array, the columns used, in order
    k : int, how many (0 gives rank 0 and writes nothing)
    b : (m,) float64 array
    rcond : float, singular values ``<= rcond * s_max`` are treated as zero (numpy's
        ``lstsq`` default is ``eps * max(m, k)``, ``pinv``'s 1e-15)
    x : (>= k,) float64 array, ``x[:k]`` written

    Returns
    -------
    int, the numerical rank of ``A[:, cols[:k]]``
    """
    m = A.shape[0]
    if k == 0:
        return 0
    tall = k <= m
    p = m if tall else k  # the rotated matrix X is (p, q): A_F (tall) or A_F^T (wide)
    q = k if tall else m
    X = np.empty((p, q))
    V = np.zeros((q, q))
    for i in range(p):
        for j in range(q):
            X[i, j] = A[i, cols[j]] if tall else A[j, cols[i]]
    for j in range(q):
        V[j, j] = 1.0
    for _ in range(JACOBI_SWEEPS):
        rotated = False
        for i in range(q - 1):
            for j in range(i + 1, q):
                alpha = beta = gamma = 0.0
                for r in range(p):
                    alpha += X[r, i] * X[r, i]
                    beta += X[r, j] * X[r, j]
                    gamma += X[r, i] * X[r, j]
                if abs(gamma) <= JACOBI_TOL * math.sqrt(alpha * beta) or gamma == 0.0:
                    continue
                rotated = True
                zeta = (beta - alpha) / (2.0 * gamma)
                t = (1.0 if zeta >= 0.0 else -1.0) / (abs(zeta) + math.sqrt(1.0 + zeta * zeta))
                c = 1.0 / math.sqrt(1.0 + t * t)
                s = c * t
                for r in range(p):
                    xi, xj = X[r, i], X[r, j]
                    X[r, i] = c * xi - s * xj
                    X[r, j] = s * xi + c * xj
                for r in range(q):
                    vi, vj = V[r, i], V[r, j]
                    V[r, i] = c * vi - s * vj
                    V[r, j] = s * vi + c * vj
        if not rotated:
            break
    # singular values: the column norms of X = U S
    smax = 0.0
    for j in range(q):
        s2 = 0.0
        for r in range(p):
            s2 += X[r, j] * X[r, j]
        smax = max(smax, math.sqrt(s2))
    for i in range(k):
        x[i] = 0.0
    rank = 0
    for j in range(q):
        s2 = 0.0
        for r in range(p):
            s2 += X[r, j] * X[r, j]
        if s2 == 0.0 or math.sqrt(s2) <= rcond * smax:
            continue
        rank += 1
        if tall:  # x += v_j (u_j . b) / s_j = V[:, j] (X[:, j] . b) / s_j^2
            c = 0.0
            for r in range(p):
                c += X[r, j] * b[r]
            c /= s2
            for i in range(k):
                x[i] += V[i, j] * c
        else:  # A_F = V S U^T: x += u_j (v_j . b) / s_j = X[:, j] (V[:, j] . b) / s_j^2
            c = 0.0
            for r in range(q):
                c += V[r, j] * b[r]
            c /= s2
            for i in range(k):
                x[i] += X[i, j] * c
    return rank
