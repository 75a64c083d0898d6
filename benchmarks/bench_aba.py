"""Speed of the articulated-body forward dynamics against Pinocchio's ``aba`` (issue 4).

Run::

    /work/venv/bin/python benchmarks/bench_aba.py           # ~10 s
    /work/venv/bin/python benchmarks/bench_aba.py --quick   # 5 rounds

Models: the paper's (``models.space_manipulator()``: free-floating base + KUKA
iiwa, nb = 8, nv = 13) and a 100-body chain (free-floating base + 99 revolute
joints with random axes, placements and inertias), both converted with
``tests/support/pin_bridge.py``; gravity on, one random state converted to
Pinocchio's conventions outside the timed region (results compared first).

Timed side by side (``_timing.measure``):

* ``forward_dynamics_aba(model, q, v, tau)``: the public call (validation,
  allocation of the result);
* ``_aba.aba(...)``: the compiled kernel called from Python on ready arrays;
* the kernel inside a compiled loop (per call): its arithmetic alone;
* ``forward_dynamics(..., method="matrix")``: the matrix form (CRBA + RNEA + Cholesky);
* ``pin.aba(model, data, q, v, tau)`` from Python.
"""

import argparse
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
from _timing import fmt_time, machine, measure, table
from numba import njit

from dqspace.multibody import forward_dynamics, models
from dqspace.multibody import kernels as A
from dqspace.multibody.articulated import forward_dynamics_aba

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from support.pin_bridge import q_to_pin, to_pinocchio, v_from_pin, v_to_pin  # noqa: E402
from support.random_models import random_chain  # noqa: E402

LOOP = 200


@njit
def _aba_loop(n, ints, reals, g, q, v, tau, fext, a):
    for _ in range(n):
        A.aba(ints, reals, g, q, v, tau, fext, a)


def bench(name, model, repeats):
    rng = np.random.default_rng(1)
    q = model.random_configuration(rng)
    v, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
    pm = to_pinocchio(model)
    pd = pm.createData()
    qp, vp, tp = q_to_pin(model, q), v_to_pin(model, v), v_to_pin(model, tau)
    a = forward_dynamics_aba(model, q, v, tau)
    a_pin = v_from_pin(model, pin.aba(pm, pd, qp, vp, tp))
    err = np.linalg.norm(a - a_pin) / np.linalg.norm(a_pin)
    assert err < 1e-10, err
    ns = dict(
        model=model, q=q, v=v, tau=tau, pm=pm, pd=pd, qp=qp, vp=vp, tp=tp, pin=pin, A=A,
        ints=model._ints, reals=model._reals, g=model.gravity, f0=np.zeros((0, 6)),
        out=np.empty(model.nv), forward_dynamics_aba=forward_dynamics_aba,
        forward_dynamics=forward_dynamics, loop=_aba_loop, LOOP=LOOP,
    )  # fmt: skip
    cases = {
        "public": "forward_dynamics_aba(model, q, v, tau)",
        "kernel": "A.aba(ints, reals, g, q, v, tau, f0, out)",
        "loop": "loop(LOOP, ints, reals, g, q, v, tau, f0, out)",
        "matrix": 'forward_dynamics(model, q, v, tau, method="matrix")',
        "pin": "pin.aba(pm, pd, qp, vp, tp)",
    }
    r = measure(cases, ns, repeats=repeats, per={"loop": LOOP})
    t_pin = r["pin"][0]
    rows = [
        ("dqspace `forward_dynamics_aba` (public)", r["public"]),
        ("dqspace `kernels.aba` kernel from Python", r["kernel"]),
        ("dqspace `kernels.aba` in a compiled loop", r["loop"]),
        ('dqspace `forward_dynamics(method="matrix")`', r["matrix"]),
        ("Pinocchio `pin.aba` from Python", r["pin"]),
    ]
    print(f"\n{name} (nb = {model.nb}, nv = {model.nv}); |a - a_pin| / |a_pin| = {err:.1e}")
    print(
        table(
            [(lab, f"{fmt_time(t)} (±{iqr:.0%})", f"{t / t_pin:.2f}") for lab, (t, iqr, _) in rows],
            ("call", "median", "x pin.aba"),
        )
    )
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    repeats = 5 if args.quick else 31
    print(machine())
    bench("paper's model", models.space_manipulator(gravity=[0.0, 0.0, -9.81]), repeats)
    chain = random_chain(np.random.default_rng(0), 100)
    bench("100-body chain", chain, repeats)


if __name__ == "__main__":
    main()
