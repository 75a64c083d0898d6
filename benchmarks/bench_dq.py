"""Speed of the dual-quaternion product and frame change against other libraries (issue 2).

Run::

    /work/venv/bin/python benchmarks/bench_dq.py            # ~20 s
    /work/venv/bin/python benchmarks/bench_dq.py --quick    # fewer rounds, smaller batch

Candidates, all measured side by side in one run (see ``_timing.measure``):

* **dqspace** — ``dq_mul(a, b)`` and ``frame_change(q, x)`` on (8,) / (6,) numpy
  arrays, and on (N, 8) / (N, 6) batches; the public call with its validation.
* **numpy 8x8** — the paper's matrix form written in plain numpy: ``[a]^+`` is
  gathered from ``a`` with an index table (``a[IDX] * SIGN``) and multiplied,
  ``[a]^+ @ b``; the frame change is ``[q*]^+ ([q]^- X)``.  Batches build the
  (N, 8, 8) stacks the same way and use ``np.matmul``.  Timed: building the
  matrices, the products, and padding/cutting the 6-vector to/from the pure
  dual quaternion (a user of the 8x8 form has to).
* **pytransform3d** — ``transformations.concatenate_dual_quaternions`` (single) and
  ``trajectories.batch_concatenate_dual_quaternions`` (batch); frame change
  as the sandwich ``dq_q_conj(q) o X o q`` of its own functions.  Same
  storage order as dqspace, so no conversion of the poses; the 6-vector is
  padded to the pure dual quaternion inside the timed statement.
* **dqspace DualQuaternion** — the value class, ``Ta * Tb`` (for information:
  the object API, as DQ Robotics' ``DQ``).
* **DQ Robotics** (C++ through pybind11) — ``DQ * DQ`` and ``Ad(conj(q), X)``
  (``Ad(a, x) = a x a*``).  Two rows: *native* on ``DQ`` objects built
  beforehand (what a DQ Robotics user holds; no conversion timed) and *from
  numpy* (``DQ(a) * DQ(b)``, ``Ad(conj(DQ(q)), DQ(x8))``: the inputs converted
  from numpy arrays, as a user holding arrays has to; the result is left a
  ``DQ``).  No batch API: the batch row is a Python loop over
  pre-built ``DQ`` objects, on a 10,000-element subset.
* **numpy elementwise** — ``np.multiply(A, B, out=C)`` / ``np.add`` on (N, 8)
  arrays: the memory-bandwidth-bound cost of a pass reading two (N, 8) arrays
  and writing one, the same data volume as the batched product.

Every candidate's result is checked against dqspace (1e-12) before timing.
Targets (issue 2): a single-call product within 2x of the fastest single call
among numpy 8x8, pytransform3d and DQ Robotics -- judged twice, with DQ
Robotics on pre-built ``DQ`` objects and with every library starting from numpy
arrays; a batched product within 2x of the numpy elementwise cost per row (the
faster of ``np.multiply`` and ``np.add`` with ``out=``, the strictest yardstick).
"""

import argparse
import sys

import dqrobotics as dqr
import numpy as np
import pytransform3d.trajectories as ptr
import pytransform3d.transformations as pt
from _timing import fmt_time, machine, measure, table, verdict

from dqspace import dq

# ------------------------------------------------------------ the 8x8 form in numpy
# Hamilton product matrices of a quaternion p (scalar first):
#   p o x = L(p) x,   x o p = R(p) x   (written out independently of dqspace)
_L = [[(0, 1), (1, -1), (2, -1), (3, -1)],
      [(1, 1), (0, 1), (3, -1), (2, 1)],
      [(2, 1), (3, 1), (0, 1), (1, -1)],
      [(3, 1), (2, -1), (1, 1), (0, 1)]]  # fmt: skip
_R = [[(0, 1), (1, -1), (2, -1), (3, -1)],
      [(1, 1), (0, 1), (3, 1), (2, -1)],
      [(2, 1), (3, -1), (0, 1), (1, 1)],
      [(3, 1), (2, 1), (1, -1), (0, 1)]]  # fmt: skip


def _dual_table(T):
    """Index and sign tables of [[M(p), 0], [M(q), M(p)]] for a dual quaternion [p, q]."""
    idx = np.zeros((8, 8), dtype=np.intp)
    sgn = np.zeros((8, 8))
    for i in range(4):
        for j in range(4):
            src, s = T[i][j]
            idx[i, j], sgn[i, j] = src, s  # real block
            idx[i + 4, j + 4], sgn[i + 4, j + 4] = src, s  # real block, lower right
            idx[i + 4, j], sgn[i + 4, j] = src + 4, s  # dual block, lower left
    return idx, sgn


IDX_L, SGN_L = _dual_table(_L)  # [a]^+ = a[IDX_L] * SGN_L
IDX_R, SGN_R = _dual_table(_R)  # [b]^- = b[IDX_R] * SGN_R
CONJ = np.array([1.0, -1, -1, -1, 1, -1, -1, -1])  # quaternion conjugate of both parts
PURE = np.array([1, 2, 3, 5, 6, 7])  # slots of a dual vector in an 8-vector


def np8_mul(a, b):
    return (a[IDX_L] * SGN_L) @ b


def np8_frame_change(q, x):
    X = np.zeros(8)
    X[PURE] = x
    return ((q * CONJ)[IDX_L] * SGN_L @ ((q[IDX_R] * SGN_R) @ X))[PURE]


def np8_mul_batch(A, B):
    return np.matmul(A[:, IDX_L] * SGN_L, B[:, :, None])[:, :, 0]


def np8_frame_change_batch(Q, X):
    X8 = np.zeros((len(X), 8))
    X8[:, PURE] = X
    Y = np.matmul(Q[:, IDX_R] * SGN_R, X8[:, :, None])
    return np.matmul((Q * CONJ)[:, IDX_L] * SGN_L, Y)[:, PURE, 0]


# ---------------------------------------------------------------- pytransform3d


def pt_frame_change(q, x):
    X = np.r_[0.0, x[:3], 0.0, x[3:]]
    c = pt.concatenate_dual_quaternions
    return c(c(pt.dq_q_conj(q), X, unit=False), q, unit=False)[PURE]


def pt_frame_change_batch(Q, X):
    X8 = np.zeros((len(X), 8))
    X8[:, PURE] = X
    c = ptr.batch_concatenate_dual_quaternions
    return c(c(ptr.batch_dq_q_conj(Q), X8), Q)[:, PURE]


# ------------------------------------------------------------------ DQ Robotics


def dqr_pure(x):
    return dqr.DQ([0.0, x[0], x[1], x[2], 0.0, x[3], x[4], x[5]])


def dqr_loop_mul(DA, DB):
    return [a * b for a, b in zip(DA, DB, strict=True)]


def dqr_loop_frame_change(DQc, DX):
    return [dqr.Ad(c, x) for c, x in zip(DQc, DX, strict=True)]


# ------------------------------------------------------------------------- main


def _check(name, got, want):
    err = np.abs(np.asarray(got, float) - want).max()
    if not err < 1e-12:
        sys.exit(f"{name}: result differs from dqspace by {err:.3g}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=100_000, help="batch size (default 100000)")
    ap.add_argument("--repeats", type=int, default=31, help="interleaved rounds (default 31)")
    ap.add_argument("--quick", action="store_true", help="5 rounds, batch 20000")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.repeats = 20_000, 5
    N, NL = args.n, min(args.n, 10_000)
    rng = np.random.default_rng(2024)
    A = dq.dq_normalize(rng.normal(size=(N, 8)))
    B = dq.dq_normalize(rng.normal(size=(N, 8)))
    X = rng.normal(size=(N, 6))
    C = np.empty((N, 8))
    a, b, x = A[0].copy(), B[0].copy(), X[0].copy()
    da, db, dX = dqr.DQ(a), dqr.DQ(b), dqr_pure(x)
    Ta, Tb = dq.DualQuaternion(a), dq.DualQuaternion(b)
    dac = dqr.conj(da)
    DA = [dqr.DQ(r) for r in A[:NL]]
    DB = [dqr.DQ(r) for r in B[:NL]]
    DAc = [dqr.conj(d) for d in DA]
    DX = [dqr_pure(r) for r in X[:NL]]

    # correctness of every candidate before timing it
    ab, xa = dq.dq_mul(a, b), dq.frame_change(a, x)
    AB, XA = dq.dq_mul(A, B), dq.frame_change(A, X)
    _check("DualQuaternion product", (Ta * Tb).array, ab)
    _check("numpy 8x8 product", np8_mul(a, b), ab)
    _check("numpy 8x8 frame change", np8_frame_change(a, x), xa)
    _check("numpy 8x8 batch product", np8_mul_batch(A, B), AB)
    _check("numpy 8x8 batch frame change", np8_frame_change_batch(A, X), XA)
    _check("pytransform3d product", pt.concatenate_dual_quaternions(a, b), ab)
    _check("pytransform3d frame change", pt_frame_change(a, x), xa)
    _check("pytransform3d batch product", ptr.batch_concatenate_dual_quaternions(A, B), AB)
    _check("pytransform3d batch frame change", pt_frame_change_batch(A, X), XA)
    _check("DQ Robotics product", (da * db).vec8(), ab)
    _check("DQ Robotics frame change", dqr.Ad(dac, dX).vec8()[PURE], xa)
    _check("DQ Robotics loop", np.array([d.vec8() for d in dqr_loop_mul(DA, DB)]), AB[:NL])

    ns = dict(globals())
    ns.update(locals())
    single = {
        "mul/dqspace": "dq.dq_mul(a, b)",
        "mul/dqspace DualQuaternion": "Ta * Tb",
        "mul/numpy 8x8": "np8_mul(a, b)",
        "mul/pytransform3d": "pt.concatenate_dual_quaternions(a, b)",
        "mul/DQ Robotics native": "da * db",
        "mul/DQ Robotics from numpy": "dqr.DQ(a) * dqr.DQ(b)",
        "fc/dqspace": "dq.frame_change(a, x)",
        "fc/numpy 8x8": "np8_frame_change(a, x)",
        "fc/pytransform3d": "pt_frame_change(a, x)",
        "fc/DQ Robotics native": "dqr.Ad(dac, dX)",
        "fc/DQ Robotics from numpy": "dqr.Ad(dqr.conj(dqr.DQ(a)), dqr_pure(x))",
    }
    batch = {
        "mul/dqspace": "dq.dq_mul(A, B)",
        "mul/numpy 8x8": "np8_mul_batch(A, B)",
        "mul/pytransform3d": "ptr.batch_concatenate_dual_quaternions(A, B)",
        "mul/DQ Robotics loop": "dqr_loop_mul(DA, DB)",
        "fc/dqspace": "dq.frame_change(A, X)",
        "fc/numpy 8x8": "np8_frame_change_batch(A, X)",
        "fc/pytransform3d": "pt_frame_change_batch(A, X)",
        "fc/DQ Robotics loop": "dqr_loop_frame_change(DAc, DX)",
        "np.multiply(A, B, out=C)": "np.multiply(A, B, out=C)",
        "np.add(A, B, out=C)": "np.add(A, B, out=C)",
        "np.multiply(A, B)": "np.multiply(A, B)",
    }
    per = {k: (NL if "loop" in k else N) for k in batch}
    print(f"machine: {machine()}")
    print(f"numpy {np.__version__}, batch N = {N}, {args.repeats} interleaved rounds, medians")
    ts = measure(single, ns, repeats=args.repeats)
    tb = measure(batch, ns, repeats=args.repeats, per=per, block_s=0.04)

    for op, title in (("mul", "dual-quaternion product a o b"), ("fc", "frame change q* o x o q")):
        rows = []
        names = [k.split("/", 1)[1] for k in single if k.startswith(op + "/")]
        ref_s = ts[f"{op}/dqspace"][0]
        ref_b = tb[f"{op}/dqspace"][0]
        for nm in names:
            s, s_iqr = ts[f"{op}/{nm}"][:2]
            bkey = f"{op}/{nm}" if f"{op}/{nm}" in tb else f"{op}/{nm.replace(' native', ' loop')}"
            if bkey in tb:
                bt, b_iqr = tb[bkey][:2]
                bcol = f"{fmt_time(bt)} (±{b_iqr:.0%})"
                brat = f"{bt / ref_b:.2f}"
            else:
                bcol = brat = "-"
            rows.append((nm, f"{fmt_time(s)} (±{s_iqr:.0%})", f"{s / ref_s:.2f}", bcol, brat))
        print(f"\n{title}")
        print(
            table(
                rows,
                ("implementation", "single call", "x dqspace", "batch, per element", "x dqspace"),
            )
        )
    rows = [(k, f"{fmt_time(tb[k][0])} (±{tb[k][1]:.0%})") for k in batch if k.startswith("np.")]
    print(f"\nnumpy elementwise on ({N}, 8) arrays, per row of 8")
    print(table(rows, ("operation", "per row")))

    print("\ntargets (issue 2)")
    own = ["numpy 8x8", "pytransform3d", "DQ Robotics native"]
    from_np = ["numpy 8x8", "pytransform3d", "DQ Robotics from numpy"]
    ours = ts["mul/dqspace"][0]
    print(f"  single-call product within 2x of the fastest single call (dqspace {fmt_time(ours)}):")
    for label, refs in (
        ("each library on its own objects (DQ Robotics: pre-built DQ)", own),
        ("every library starting from numpy arrays", from_np),
    ):
        fastest = min(refs, key=lambda r: ts[f"mul/{r}"][0])
        r1 = ours / ts[f"mul/{fastest}"][0]
        print(
            f"    {label}: fastest {fastest} {fmt_time(ts[f'mul/{fastest}'][0])}, "
            f"ratio {r1:.2f} -> {verdict(r1, 2.0)}"
        )
    bw_name = min(("np.multiply(A, B, out=C)", "np.add(A, B, out=C)"), key=lambda r: tb[r][0])
    bw = tb[bw_name][0]
    r2 = tb["mul/dqspace"][0] / bw
    print(
        f"  batched product within 2x of the numpy elementwise cost (the faster of "
        f"np.multiply / np.add with out=, {bw_name}: {fmt_time(bw)} per row): "
        f"{fmt_time(tb['mul/dqspace'][0])} per element, ratio {r2:.2f} -> {verdict(r2, 2.0)}"
    )
    fastest_fc = min(own, key=lambda r: ts[f"fc/{r}"][0])
    r3 = ts["fc/dqspace"][0] / ts[f"fc/{fastest_fc}"][0]
    r4 = tb["fc/dqspace"][0] / bw
    print("  (for information, the frame change with the same yardsticks)")
    print(f"  single-call frame change / fastest ({fastest_fc}): ratio {r3:.2f}")
    print(f"  batched frame change / {bw_name} per row: ratio {r4:.2f}")


if __name__ == "__main__":
    main()
