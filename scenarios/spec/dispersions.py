"""Monte Carlo dispersions: scenario keys drawn from distributions, percentiles, requirements.

A dispersion table maps dotted scenario keys (as ``--set`` writes them) to a distribution::

    {"base.mass": {"dist": "normal", "sigma_rel": 0.05},
     "disturbance.torque": {"dist": "uniform", "low": -0.01, "high": 0.01},
     "arm.payload_mass": {"dist": "truncnormal", "sigma": 0.5, "low": -1.0, "high": 1.0}}

Distributions (about the key's nominal value; a vector is dispersed element by element):

* ``normal``: ``nominal + sigma * N(0, 1)``, or with ``sigma_rel``: ``nominal (1 + sigma_rel N)``;
* ``uniform``: ``nominal + U(low, high)``;
* ``truncnormal``: ``nominal + sigma * N(0, 1)`` restricted to ``[low, high]`` (offsets).

:meth:`Dispersions.samples` gives N override dicts from one seed: sample i is drawn from its
own generator, ``SeedSequence(seed).spawn(...)[i]``, so it is the same whatever N (sample 7 of
a 10-run campaign is sample 7 of a 200-run one) and can be rerun alone; each sample also sets
``scenario.seed`` (the run's own noise) from the same sequence.  The dicts are what
:func:`dqspace.scenarios.campaigns.sweep.sweep` takes as ``samples=``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .config import MAX_VARIANTS, did_you_mean

__all__ = ["Dispersion", "Dispersions", "percentiles", "requirement_table"]

_PARAMS = {
    "normal": ({"sigma", "sigma_rel"}, set()),
    "uniform": (set(), {"low", "high"}),
    "truncnormal": ({"sigma"}, {"low", "high"}),
}


@dataclass(frozen=True)
class Dispersion:
    """One key's distribution (see the module docstring)."""

    key: str
    dist: str
    nominal: float | tuple[float, ...]
    params: Mapping[str, float]

    def draw(self, rng: np.random.Generator) -> float | list[float]:
        """A value for this key."""
        nom = np.atleast_1d(np.asarray(self.nominal, dtype=float))
        p = self.params
        if self.dist == "normal":
            z = rng.standard_normal(nom.shape)
            x = nom * (1.0 + p["sigma_rel"] * z) if "sigma_rel" in p else nom + p["sigma"] * z
        elif self.dist == "uniform":
            x = nom + rng.uniform(p["low"], p["high"], nom.shape)
        else:  # truncated normal by rejection (the bounds hold at least some probability)
            off = np.empty(nom.shape)
            for i in range(nom.size):
                while True:
                    z = p["sigma"] * rng.standard_normal()
                    if p["low"] <= z <= p["high"]:
                        off[i] = z
                        break
            x = nom + off
        return float(x[0]) if np.ndim(self.nominal) == 0 else x.tolist()


def _lookup(cfg: Mapping, key: str):
    sec, _, name = key.partition(".")
    if not name or "." in name:
        raise ValueError(f"dispersions: {key!r}: expected a key as section.key")
    if sec not in cfg or not isinstance(cfg[sec], dict):
        raise ValueError(f"dispersions: {key!r}: unknown section{did_you_mean(sec, cfg)}")
    if name not in cfg[sec]:
        raise ValueError(f"dispersions: {key!r}: unknown key{did_you_mean(name, cfg[sec])}")
    value = cfg[sec][name]
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(value, list):
        ok = bool(value) and all(isinstance(v, (int, float)) for v in value)
    if not ok:
        raise ValueError(f"dispersions: {key!r} = {value!r} is not a number or a vector")
    return tuple(float(v) for v in value) if isinstance(value, list) else float(value)


#: the least probability a truncated normal's bounds may hold (it is drawn by rejection)
MIN_TRUNCATED_MASS = 1e-3


def _normal_mass(a: float, b: float) -> float:
    """P(a <= Z <= b) of a standard normal Z."""
    return 0.5 * (math.erf(b / math.sqrt(2.0)) - math.erf(a / math.sqrt(2.0)))


class Dispersions:
    """A set of dispersions over a resolved scenario (see the module docstring)."""

    def __init__(self, items: Sequence[Dispersion]) -> None:
        self.items = tuple(items)

    @classmethod
    def from_table(cls, table: Mapping, nominal_cfg: Mapping) -> Dispersions:
        """Check a dispersion table against a resolved scenario (ValueError naming the key)."""
        if not isinstance(table, Mapping):
            raise ValueError("dispersions must be a table of key = {dist = ..., ...}")
        items = []
        for key, spec in table.items():
            nominal = _lookup(nominal_cfg, key)
            if not isinstance(spec, Mapping) or "dist" not in spec:
                raise ValueError(f"dispersions: {key!r}: expected {{dist = ..., ...}}")
            dist = spec["dist"]
            if dist not in _PARAMS:
                raise ValueError(
                    f"dispersions: {key!r}: unknown dist {dist!r}{did_you_mean(dist, _PARAMS)} "
                    f"({', '.join(_PARAMS)})"
                )
            one_of, needed = _PARAMS[dist]
            params = {k: v for k, v in spec.items() if k != "dist"}
            extra = set(params) - one_of - needed
            if extra:
                raise ValueError(
                    f"dispersions: {key!r}: {sorted(extra)[0]!r} does not apply to {dist}"
                )
            missing = needed - set(params)
            if missing or (one_of and len(one_of & set(params)) != 1):
                want = sorted(missing) or sorted(one_of)
                raise ValueError(f"dispersions: {key!r}: {dist} needs {' or '.join(want)}")
            for k, v in params.items():
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v):
                    raise ValueError(f"dispersions: {key!r}: {k} must be a finite number")
            for k in ("sigma", "sigma_rel"):
                if k in params and params[k] < 0:
                    raise ValueError(f"dispersions: {key!r}: {k} must be >= 0")
            if "low" in params and not params["low"] < params["high"]:
                raise ValueError(f"dispersions: {key!r}: low must be below high")
            if dist == "truncnormal" and not params["low"] <= 0.0 <= params["high"]:
                raise ValueError(f"dispersions: {key!r}: [low, high] must contain 0 (offsets)")
            if dist == "truncnormal" and params["sigma"] > 0.0:
                sigma = params["sigma"]
                mass = _normal_mass(params["low"] / sigma, params["high"] / sigma)
                if mass < MIN_TRUNCATED_MASS:
                    raise ValueError(
                        f"dispersions: {key!r}: [low, high] holds {mass:.2g} of the normal's "
                        f"probability (drawn by rejection: below {MIN_TRUNCATED_MASS:g} it "
                        "would take too long); widen [low, high], lower sigma, or use uniform"
                    )
            items.append(Dispersion(key, dist, nominal, {k: float(v) for k, v in params.items()}))
        return cls(items)

    def samples(self, n: int, seed: int) -> list[dict]:
        """n override dicts (module docstring); sample i depends on ``seed`` and i only."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"n must be a positive integer, got {n!r}")
        if n > MAX_VARIANTS:
            raise ValueError(
                f"n = {n:,} runs: more than {MAX_VARIANTS:,} in one campaign; run it in parts "
                "(run i depends on the seed and i only)"
            )
        out = []
        for i in range(int(n)):
            rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(i,)))
            sample = {d.key: d.draw(rng) for d in self.items}
            sample["scenario.seed"] = int(rng.integers(0, 2**31 - 1))
            out.append(sample)
        return out


def percentiles(values, q=(50, 95, 99)) -> dict[int, float]:
    """``{q: value}`` of the finite values (NaN when there are none)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return {int(p): (float(np.percentile(v, p)) if v.size else float("nan")) for p in q}


def requirement_table(rows: Mapping[str, Sequence[float]], requirements: Mapping) -> list[dict]:
    """One row per requirement ``{metric: (op, limit, percentile)}`` (or a
    :class:`~dqspace.scenarios.spec.requirements.Requirement`), op ``"<="`` or ``">="``:
    the metric's sample value at that percentile (of the runs that measured it), the limit,
    ``n_missing`` (the runs that did not: NaN) and ``ok``, whether that value is within it
    and every run measured it (no confidence: campaigns judge with
    :func:`dqspace.scenarios.campaigns.verdicts.judge_campaign`)."""
    out = []
    for metric, spec in requirements.items():
        op, limit, pct = tuple(spec)[:3]
        if metric not in rows:
            raise ValueError(
                f"requirement on {metric!r}: no such metric{did_you_mean(metric, rows)}"
            )
        if op not in ("<=", ">="):
            raise ValueError(f"requirement on {metric!r}: op must be '<=' or '>=', got {op!r}")
        value = percentiles(rows[metric], (pct,))[int(pct)]
        missing = int(np.count_nonzero(~np.isfinite(np.asarray(rows[metric], float))))
        ok = bool(value <= limit) if op == "<=" else bool(value >= limit)
        ok = ok and not missing  # a run that did not measure it could be beyond the limit
        out.append(
            dict(metric=metric, percentile=int(pct), value=value, op=op, limit=limit, ok=ok,
                 n_missing=missing)
        )  # fmt: skip
    return out
