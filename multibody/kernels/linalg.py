"""Small dense linear algebra for the kernels: an in-place Cholesky factorization and solve."""

import math

from numba import njit


@njit(cache=True, _nrt=False, fastmath={"contract"})
def cholesky(A, n):
    """In-place Cholesky ``A = L L^T`` of the leading n x n block: L below the diagonal,
    ``1 / L_jj`` on it.  False if A is not positive-definite."""
    for j in range(n):
        s = A[j, j]
        for m in range(j):
            s -= A[j, m] * A[j, m]
        if not s > 0.0:
            return False
        r = 1.0 / math.sqrt(s)
        A[j, j] = r
        for i in range(j + 1, n):
            s = A[i, j]
            for m in range(j):
                s -= A[i, m] * A[j, m]
            A[i, j] = s * r
    return True


@njit(cache=True, _nrt=False, fastmath={"contract"})
def cholesky_solve(L, n, x):
    """``x <- (L L^T)^-1 x`` in place (first n entries) with the factor of :func:`cholesky`."""
    for i in range(n):
        s = x[i]
        for m in range(i):
            s -= L[i, m] * x[m]
        x[i] = s * L[i, i]
    for i in range(n - 1, -1, -1):
        s = x[i]
        for m in range(i + 1, n):
            s -= L[m, i] * x[m]
        x[i] = s * L[i, i]
