"""Which dispersed parameter drives a metric: partial rank correlation coefficients (PRCC).

A Monte Carlo campaign draws each dispersed key once per run (its ``metrics.csv`` and
DataFrame hold the drawn values); a vector key gives one column per component.  For each
metric, the PRCC of a parameter is the correlation between the parts of the parameter's
ranks and of the metric's ranks that the other parameters' ranks do not explain
(:func:`prcc`):

1. rank every column and the metric (:func:`scipy.stats.rankdata`, ties averaged);
2. regress the parameter's ranks and the metric's ranks, each by least squares, on the
   other parameters' ranks (with a constant) and keep the residuals;
3. the PRCC is the Pearson correlation of the two residuals, in [-1, 1]: near +1 the
   metric grows with the parameter (monotonically, linear or not), near 0 the parameter
   does not drive it once the others are accounted for;
4. its p-value is two-sided from Student's t with ``n - 2 - (k - 1)`` degrees of freedom
   (n runs, k parameters): ``t = r sqrt(dof / (1 - r^2))``.  A parameter is *significant*
   at p < :data:`SIGNIFICANCE` (one test per parameter and metric: with many parameters a
   few spurious ones are expected at that level).

Columns that do not vary (a component dispersed by zero) are skipped and listed; runs
without a value of the metric (failed runs) are left out of that metric's coefficients.
PRCC measures monotone effects; a parameter whose effect changes sign over its range can
show a small PRCC and still matter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..spec.schema import SCHEMA

__all__ = [
    "SIGNIFICANCE",
    "PRCCResult",
    "prcc",
    "parameter_columns",
    "campaign_sensitivity",
]

#: a parameter's PRCC is marked significant below this p-value
SIGNIFICANCE = 0.05


@dataclass(frozen=True)
class PRCCResult:
    """The PRCC of k parameters against one metric.

    Attributes
    ----------
    coefficients : (k,) PRCC in [-1, 1]
    p_values : (k,) two-sided p-values
    n : int, the runs used
    """

    coefficients: np.ndarray
    p_values: np.ndarray
    n: int


def _residual(Z, y):
    coef, *_ = np.linalg.lstsq(Z, y, rcond=None)
    return y - Z @ coef


def prcc(X, y) -> PRCCResult:
    """Partial rank correlation of each column of ``X`` with ``y`` (module docstring).

    Parameters
    ----------
    X : (n, k) the parameters' values, one run per row (finite)
    y : (n,) the metric (finite)

    Raises
    ------
    ValueError : shapes that differ, non-finite values, or fewer than ``k + 2`` runs (the
        t statistic needs at least one degree of freedom).
    """
    from scipy.stats import rankdata  # heavy (all of scipy.stats): loaded when asked
    from scipy.stats import t as student_t  # the same module

    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
        raise ValueError(f"prcc: X must be (n, k) and y (n,), got {X.shape} and {y.shape}")
    if not (np.isfinite(X).all() and np.isfinite(y).all()):
        raise ValueError("prcc: X and y must be finite")
    n, k = X.shape
    dof = n - 2 - (k - 1)
    if dof < 1:
        raise ValueError(f"prcc: {k} parameters need at least {k + 2} runs, got {n}")
    R = np.column_stack([rankdata(X[:, j]) for j in range(k)]) if k else np.empty((n, 0))
    ry = rankdata(y)
    r = np.zeros(k)
    for j in range(k):
        Z = np.column_stack([np.ones(n), np.delete(R, j, axis=1)])
        ex, ey = _residual(Z, R[:, j]), _residual(Z, ry)
        den = np.sqrt(ex @ ex * (ey @ ey))
        r[j] = np.clip(ex @ ey / den, -1.0, 1.0) if den > 0 else 0.0
    with np.errstate(divide="ignore"):
        t = np.abs(r) * np.sqrt(dof / np.maximum(1.0 - r**2, 0.0))
    p = np.where(np.isfinite(t), 2.0 * student_t.sf(t, dof), 0.0)
    return PRCCResult(r, p, n)


def _unit(key: str) -> str:
    sec, _, name = key.partition(".")
    f = SCHEMA[sec].fields.get(name) if sec in SCHEMA else None
    return (f.unit if f is not None else "") or "-"


def parameter_columns(df, keys: Sequence[str]):
    """The design matrix of a campaign: one column per dispersed scalar key and per
    component of a dispersed vector key.

    Parameters
    ----------
    df : the campaign's DataFrame (a column per key; a vector key's cells are tuples)
    keys : the dispersed keys (``section.key``), in order

    Returns
    -------
    (X, columns, skipped): X (n, m) the values; columns, m dicts ``{parameter, key,
    component, unit}`` (``parameter`` is ``key`` or ``key[i]``, ``unit`` the key's unit
    from the schema); skipped, the labels of the columns that do not vary (left out).
    """
    cols, meta, skipped = [], [], []
    for key in keys:
        if key not in df:
            continue
        cells = [np.atleast_1d(np.asarray(c, dtype=float)) for c in df[key]]
        A = np.vstack(cells) if cells else np.empty((0, 1))
        vector = A.shape[1] > 1 or isinstance(df[key].iloc[0], (tuple, list))
        for i in range(A.shape[1]):
            label = f"{key}[{i}]" if vector else key
            col = A[:, i]
            if not np.isfinite(col).all() or np.ptp(col) == 0.0:
                skipped.append(label)
                continue
            cols.append(col)
            meta.append(
                {
                    "parameter": label,
                    "key": key,
                    "component": i if vector else None,
                    "unit": _unit(key),
                }
            )
    X = np.column_stack(cols) if cols else np.empty((len(df), 0))
    return X, meta, skipped


def campaign_sensitivity(df, keys: Sequence[str], metrics: Sequence[str]) -> dict:
    """The PRCC of every dispersed parameter against each metric of a campaign.

    Parameters
    ----------
    df : the campaign's DataFrame (the dispersed keys' columns and the metrics)
    keys : the dispersed keys (the campaign's dispersion table)
    metrics : the metrics to explain (a campaign's: its required metrics)

    Returns
    -------
    dict (JSON-ready): ``method``, ``significance`` (:data:`SIGNIFICANCE`), ``skipped``
    (the columns that do not vary) and ``metrics``: metric -> {``n`` (runs used),
    ``parameters``: a list sorted by decreasing |PRCC| of ``{parameter, key, component,
    unit, prcc, p_value, significant}``, ``note``: why there are none, or ""}.
    """
    X, meta, skipped = parameter_columns(df, keys)
    out = {
        "method": "PRCC: partial rank correlation coefficient, two-sided t-test p-value",
        "significance": SIGNIFICANCE,
        "skipped": skipped,
        "metrics": {},
    }
    for m in metrics:
        entry = {"n": 0, "parameters": [], "note": ""}
        out["metrics"][m] = entry
        if m not in df:
            entry["note"] = "not a column of the campaign"
            continue
        y = np.asarray(df[m], dtype=float)
        keep = np.isfinite(y)
        entry["n"] = int(keep.sum())
        if not meta:
            entry["note"] = "no dispersed parameter varies"
            continue
        if not keep.any() or np.ptp(y[keep]) == 0.0:
            entry["note"] = "the metric does not vary"
            continue
        try:
            res = prcc(X[keep], y[keep])
        except ValueError as exc:
            entry["note"] = str(exc).removeprefix("prcc: ")
            continue
        rows = [
            {**c, "prcc": float(r), "p_value": float(p), "significant": bool(p < SIGNIFICANCE)}
            for c, r, p in zip(meta, res.coefficients, res.p_values, strict=True)
        ]
        entry["parameters"] = sorted(rows, key=lambda d: -abs(d["prcc"]))
    return out
