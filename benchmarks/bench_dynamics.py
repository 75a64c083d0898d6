"""Speed of the multibody dynamics against Pinocchio on the paper's model (issue 3).

Run::

    /work/venv/bin/python benchmarks/bench_dynamics.py           # ~3 s
    /work/venv/bin/python benchmarks/bench_dynamics.py --quick   # 5 rounds

Model: ``dqspace.multibody.models.space_manipulator()`` (27 kg free-floating
base + KUKA iiwa, nq = 15, nv = 13), converted to Pinocchio with
``tests/support/pin_bridge.py::to_pinocchio`` (free-flyer + 7 revolute joints,
same inertias, zero gravity).  One random state (q, v, a, tau) is converted
to Pinocchio's conventions before timing.

Timed, all side by side in one run (``_timing.measure``):

* **dqspace, public call** — ``mass_matrix(model, q)``,
  ``inverse_dynamics(model, q, v, a)``, ``forward_dynamics(model, q, v, tau)``:
  exactly what a user calls, with its validation and allocation of the result;
* **dqspace, compiled kernel alone** — ``kernels.crba``, ``kernels.rnea``,
  ``kernels.aba`` (the default method of ``forward_dynamics``) on pre-validated arrays with
  pre-allocated outputs: the difference to the public call is the Python
  wrapper's cost;
* **profile** — the kernel's time split into the cost of calling a compiled
  function with these arguments (an empty ``njit`` function taking the same
  arrays) and the arithmetic (the kernel called 200 times inside one compiled
  loop, per call);
* **Pinocchio from Python** — ``pin.crba``, ``pin.rnea``, ``pin.aba`` on
  pre-converted states (``crba`` fills the upper triangle only; the others
  return new arrays).

Targets (issue 3): each public call within 3x of its Pinocchio counterpart.
"""

import argparse
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
from _timing import fmt_time, machine, measure, table, verdict
from numba import njit

from dqspace.multibody import forward_dynamics, inverse_dynamics, mass_matrix, models
from dqspace.multibody import kernels as A
from dqspace.multibody import kernels as K

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from support.pin_bridge import q_to_pin, to_pinocchio, v_from_pin, v_to_pin  # noqa: E402


# ---- profile: the kernel's time split into the numba call and the arithmetic
@njit
def _dispatch_floor_9(ints, reals, g, q, v, a, fext, tau, force):
    return None  # an empty compiled function taking rnea's arguments


@njit
def _dispatch_floor_4(ints, reals, q, M):
    return None


@njit
def _rnea_loop(n, ints, reals, g, q, v, a, fext, tau, force):
    for _ in range(n):
        K.rnea(ints, reals, g, q, v, a, fext, tau, force)


@njit
def _crba_loop(n, ints, reals, q, M):
    for _ in range(n):
        K.crba(ints, reals, q, M)


@njit
def _fd_loop(n, ints, reals, g, q, v, tau, fext, a):
    for _ in range(n):
        A.aba(ints, reals, g, q, v, tau, fext, a)  # forward_dynamics' default method


LOOP = 200  # calls per compiled loop


def _check(name, got, want, tol=1e-9):
    err = np.abs(np.asarray(got) - want).max() / max(1.0, np.abs(want).max())
    if not err < tol:
        sys.exit(f"{name}: dqspace and Pinocchio differ by {err:.3g} (relative)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=31, help="interleaved rounds (default 31)")
    ap.add_argument("--quick", action="store_true", help="5 rounds")
    args = ap.parse_args(argv)
    if args.quick:
        args.repeats = 5

    model = models.space_manipulator()
    pmodel = to_pinocchio(model)
    pdata = pmodel.createData()
    rng = np.random.default_rng(7)
    q = model.random_configuration(rng)
    v = rng.normal(size=model.nv)
    a = rng.normal(size=model.nv)
    tau = rng.normal(size=model.nv)
    qp, vp, ap_, taup = (
        q_to_pin(model, q),
        v_to_pin(model, v),
        v_to_pin(model, a),
        v_to_pin(model, tau),
    )

    # the two engines agree on this state before they are timed
    P = v_to_pin(model, np.eye(model.nv)).T  # permutation: ours -> Pinocchio's
    M = mass_matrix(model, q)
    Mp = pin.crba(pmodel, pdata, qp).copy()
    Mp = np.triu(Mp) + np.triu(Mp, 1).T
    _check("mass matrix", P @ M @ P.T, Mp)
    _check(
        "inverse dynamics",
        inverse_dynamics(model, q, v, a),
        v_from_pin(model, pin.rnea(pmodel, pdata, qp, vp, ap_)),
    )
    _check(
        "forward dynamics",
        forward_dynamics(model, q, v, tau),
        v_from_pin(model, pin.aba(pmodel, pdata, qp, vp, taup)),
    )

    ints, reals, g = model._ints, model._reals, model.gravity
    crba, rnea, fd_aba = K.crba, K.rnea, A.aba
    fext = np.zeros((model.nb, 6))
    out_v = np.empty(model.nv)
    out_f = np.empty((model.nb, 6))
    out_M = np.empty((model.nv, model.nv))
    ns = dict(globals())
    ns.update(locals())
    cases = {
        "M/dqspace": "mass_matrix(model, q)",
        "M/kernel": "crba(ints, reals, q, out_M)",
        "M/pinocchio": "pin.crba(pmodel, pdata, qp)",
        "ID/dqspace": "inverse_dynamics(model, q, v, a)",
        "ID/kernel": "rnea(ints, reals, g, q, v, a, fext, out_v, out_f)",
        "ID/pinocchio": "pin.rnea(pmodel, pdata, qp, vp, ap_)",
        "FD/dqspace": "forward_dynamics(model, q, v, tau)",
        "FD/kernel": "fd_aba(ints, reals, g, q, v, tau, fext, out_v)",
        "FD/pinocchio": "pin.aba(pmodel, pdata, qp, vp, taup)",
        "M/loop": "_crba_loop(LOOP, ints, reals, q, out_M)",
        "ID/loop": "_rnea_loop(LOOP, ints, reals, g, q, v, a, fext, out_v, out_f)",
        "FD/loop": "_fd_loop(LOOP, ints, reals, g, q, v, tau, fext, out_v)",
        "floor/4": "_dispatch_floor_4(ints, reals, q, out_M)",
        "floor/9": "_dispatch_floor_9(ints, reals, g, q, v, a, fext, out_v, out_f)",
    }
    _crba_loop(1, ints, reals, q, out_M)
    _rnea_loop(1, ints, reals, g, q, v, a, fext, out_v, out_f)
    _fd_loop(1, ints, reals, g, q, v, tau, fext, out_v)
    print(f"machine: {machine()}")
    print(
        f"numpy {np.__version__}, pinocchio {pin.__version__}; model {model!r}; "
        f"{args.repeats} interleaved rounds, medians"
    )
    per = {k: LOOP for k in cases if k.endswith("/loop")}
    t = measure(cases, ns, repeats=args.repeats, per=per)

    names = {
        "M": ("mass matrix", "mass_matrix", "pin.crba"),
        "ID": ("inverse dynamics", "inverse_dynamics", "pin.rnea"),
        "FD": ("forward dynamics", "forward_dynamics", "pin.aba"),
    }
    rows = []
    for op, (title, _, theirs) in names.items():
        d, kk, p = t[f"{op}/dqspace"], t[f"{op}/kernel"], t[f"{op}/pinocchio"]
        rows.append(
            (
                title,
                f"{fmt_time(d[0])} (±{d[1]:.0%})",
                f"{fmt_time(kk[0])} (±{kk[1]:.0%})",
                f"{fmt_time(d[0] - kk[0])}",
                f"{fmt_time(p[0])} (±{p[1]:.0%}) `{theirs}`",
                f"{d[0] / p[0]:.2f}",
                f"{kk[0] / p[0]:.2f}",
            )
        )
    print()
    print(
        table(
            rows,
            (
                "quantity",
                "dqspace public call",
                "kernel alone",
                "wrapper",
                "Pinocchio",
                "public / pin",
                "kernel / pin",
            ),
        )
    )
    rows = []
    for op, (title, _, _) in names.items():
        kk, lp = t[f"{op}/kernel"][0], t[f"{op}/loop"][0]
        fl = t["floor/4" if op == "M" else "floor/9"][0]
        rows.append((title, fmt_time(kk), fmt_time(fl), fmt_time(lp), fmt_time(kk - lp)))
    print("\nprofile of the kernel call (medians)")
    print(
        table(
            rows,
            (
                "quantity",
                "kernel called from Python",
                "empty njit, same arguments",
                "kernel in a compiled loop",
                "call overhead",
            ),
        )
    )
    print("\ntargets (issue 3): each within 3x of Pinocchio")
    for op, (_, ours, theirs) in names.items():
        r = t[f"{op}/dqspace"][0] / t[f"{op}/pinocchio"][0]
        print(f"  {ours} / {theirs}: ratio {r:.2f} -> {verdict(r, 3.0)}")


if __name__ == "__main__":
    main()
