"""Arithmetic operations of one step of the velocity recursion, counted on the compiled code.

The paper (Sec. 4, after eq. 22) counts 72 multiplications and 57 additions for
one step ``w_k = q^* o w_{k+1} o q^ + H^ theta_dot`` of the velocity recursion
with revolute joints (72 / 56 for the sandwich product through the 8x8 matrix
form of eq. 2-3, one more addition for ``H^ theta_dot``), against 96 and 66
for the product of exponentials.  This script counts the step as dqspace
executes it in every recursion (``multibody/kernels/kinematics.py::_twist_step``, the
base-to-tip step of ``rnea``, of the articulated-body algorithm and of the
kinematics kernels):

* the frame change ``Ad_k w_parent = rel_k* o w_parent o rel_k`` in its
  rotation + translation form, ``kernels.frames._to_child`` (``R^T w_r``,
  ``R^T w_d + (R^T w_r) x r^k``), then ``S_k theta_dot_k``
  (``kernels.frames._joint_twist``, a general unit axis) and the six additions of
  ``_twist_step``;
* separately, per joint, the cost of R and r^k from the joint's dual
  quaternion (``_joint_transform`` less ``relative_pose``), paid once per
  body and shared by every frame change of that body (twist, acceleration and
  wrench in ``rnea``), and the joint's pose itself (``relative_pose``), which
  every form needs;
* for comparison with the paper's form, the dual-quaternion sandwich
  ``dqspace.dq.kernels.dv_frame_change`` and the 8x8 matrix form.

Counted on:

* **LLVM IR**: numba compiles the kernel afresh for float64 C-contiguous arrays
  (the types the recursions pass) and the ``fmul``, ``fadd``, ``fsub`` and
  ``fneg`` instructions of the optimized IR are counted (vector instructions
  once per lane), in the kernel's own function and in the dqspace kernels it
  still calls after LLVM's inlining.  The steps that branch on the joint type
  are compiled inside small probe functions that call them on a constant
  two-body model (body 1: a revolute joint under body 0); numba freezes the
  global model array into the code, so LLVM folds the joint-type tests and
  only the revolute branch is left;
* **machine code**: the same in the x86 assembly (``v?mul/add/sub s/p d``,
  FMAs counted as one multiplication and one addition);
* **source (AST)**: the ``*``, ``+``, ``-`` and unary ``-`` of the kernel's
  Python source, loops with a constant trip count unrolled, the revolute
  branch taken where the source branches on the joint type and the non-root
  branch where it branches on the parent;
* the 8x8 matrix form ``[q*]^+ ([q]^- X)`` with the structural zeros of the
  matrices and of the pure dual quaternion X skipped (and the two scalar parts
  of the result, known to be zero, not computed), counted by evaluating it on
  counting symbols.

Run ``/work/venv/bin/python benchmarks/op_counts.py``: it prints the table and
rewrites ``docs/op-counts.md``.
"""

import ast
import inspect
import re
import sys
import textwrap
from collections import Counter
from pathlib import Path

import llvmlite
import llvmlite.binding as llvm
import numba
import numpy as np
from _timing import table

from dqspace.dq import kernels as dqk
from dqspace.multibody.kernels import frames as mbk
from dqspace.multibody.kernels import kinematics as mbkin
from dqspace.multibody.kernels import layout as mbl

DOC = Path(__file__).resolve().parent.parent / "docs" / "op-counts.md"


# ------------------------------------------------------------------- probes

# A constant two-body model: body 1 is attached to body 0 by a revolute joint.
# Called on it from the probes below, the steps that branch on the joint type
# or on the parent compile to their revolute, non-root branch alone (numba
# freezes a global array into the code as a constant, and LLVM folds the tests).
_REVOLUTE_MODEL = np.array([[-1, mbl.FIXED, 0, 0], [0, mbl.REVOLUTE, 0, 0]], dtype=np.int64)


def probe_relative_pose(reals, q):
    return mbk.relative_pose(_REVOLUTE_MODEL, reals, 1, q)


def probe_joint_transform(reals, q, W):
    mbk._joint_transform(_REVOLUTE_MODEL, reals, 1, q, W)


def probe_joint_twist(reals, v):
    return mbk._joint_twist(_REVOLUTE_MODEL, reals, 1, v)


def probe_twist_step(reals, q, v, W):
    mbkin._twist_step(_REVOLUTE_MODEL, reals, 1, q, v, W)


def probe_acceleration_step(reals, a, W):
    mbkin._acceleration_step(_REVOLUTE_MODEL, reals, 1, a, W)


# ------------------------------------------------------------ compiled code


def _compile(kernel, args):
    """A fresh (uncached) numba compilation of a kernel's (or a probe's) source for these args."""
    f = numba.njit(getattr(kernel, "py_func", kernel))
    f(*args)
    (sig,) = f.signatures
    return f, sig


def _name(kernel):
    return getattr(kernel, "py_func", kernel).__name__


def _function_block(text, name, start_pat, end_pat):
    """The text of the kernel's own function (not the cpython/cfunc wrappers numba adds)."""
    lines = text.splitlines()
    starts = [
        i
        for i, ln in enumerate(lines)
        if re.match(start_pat, ln) and name in ln and "cpython" not in ln and "cfunc" not in ln
    ]
    if not starts:
        sys.exit(f"could not find the function {name} in the compiled code")
    i = starts[0]
    out = []
    for ln in lines[i:]:
        out.append(ln)
        if re.match(end_pat, ln):
            break
    return "\n".join(out)


def _ir_functions(ir):
    """{symbol: body} of the functions the LLVM module defines."""
    funcs, name, body = {}, None, []
    for ln in ir.splitlines():
        if name is None:
            m = re.match(r"^define [^@]*@\"?([^\s(\"]+)\"?\(", ln)
            if m:
                name, body = m.group(1), [ln]
        else:
            body.append(ln)
            if ln == "}":
                funcs[name] = "\n".join(body)
                name = None
    return funcs


def _ir_tally(sym, funcs, depth=0):
    """Floating-point instructions of a function and of the dqspace kernels it calls."""
    c = Counter()
    body = funcs[sym]
    for m in re.finditer(
        r"=\s*(fmul|fadd|fsub|fneg)\s+(?:[a-z]+\s+)*(<(\d+) x double>|double)", body
    ):
        c["neg" if m.group(1) == "fneg" else "mul" if m.group(1) == "fmul" else "add"] += (
            int(m.group(3)) if m.group(3) else 1
        )
    for m in re.finditer(r"\bcall\b[^@\n]*@\"?([^\s(\"]+)\"?\(", body):
        callee = m.group(1)
        if re.fullmatch(r"llvm\.(sin|cos)\.f64", callee):
            c[callee.split(".")[1]] += 1
        elif "dqspace" in callee or "__main__" in callee:
            if callee not in funcs:
                sys.exit(f"{callee} is called but not defined in the module: cannot count it")
            if depth > 20:
                sys.exit("call chain too deep")
            c.update(_ir_tally(callee, funcs, depth + 1))
            d = re.search(r"(?:kernels|frames|kinematics)\d+(\w+?)B\d", callee)
            c["calls:" + (d.group(1) if d else callee)] += 1
    return c


def llvm_counts(kernel, args):
    """fmul / fadd+fsub / fneg (per lane) and sin / cos of the kernel's optimized LLVM IR.

    The kernel's own function plus, once per call site, the dqspace kernels it
    still calls after LLVM's inlining (``calls`` names them).
    """
    f, sig = _compile(kernel, args)
    ir = f.inspect_llvm(sig)
    funcs = _ir_functions(ir)
    name = _name(kernel)
    own = [
        s for s in funcs if f"{len(name)}{name}" in s and "cpython" not in s and "cfunc" not in s
    ]
    if not own:
        sys.exit(f"could not find the function {name} in the compiled code")
    c = _ir_tally(own[0], funcs)
    out = {k: c[k] for k in ("mul", "add", "neg", "sin", "cos")}
    out["calls"] = sorted(k.split(":", 1)[1] for k in c if k.startswith("calls:"))
    return out


_LANES = {"xmm": 2, "ymm": 4, "zmm": 8}


def asm_counts(kernel, args):
    """Floating-point multiply / add / subtract / FMA instructions of the x86 code, per lane."""
    f, sig = _compile(kernel, args)
    asm = f.inspect_asm(sig)
    name = _name(kernel)
    body = _function_block(asm, f"{len(name)}{name}", r"^_ZN\S*:", r"^\.Lfunc_end")
    if re.search(r"\bcall\w*\s+\S*dqspace", body):
        sys.exit(f"{name} calls another dqspace kernel in the machine code: not counted")
    mul = add = 0
    for m in re.finditer(r"\b(v?)(mul|add|sub)([sp])d\s+[^\n]*", body):
        lanes = 1
        if m.group(3) == "p":
            reg = re.search(r"%?([xyz]mm)", m.group(0))
            lanes = _LANES[reg.group(1)] if reg else 2
        if m.group(2) == "mul":
            mul += lanes
        else:
            add += lanes
    for m in re.finditer(r"\bvfn?m(?:add|sub)\w*([sp])d\s+[^\n]*", body):
        lanes = 1
        if m.group(1) == "p":
            reg = re.search(r"%?([xyz]mm)", m.group(0))
            lanes = _LANES[reg.group(1)] if reg else 2
        mul += lanes
        add += lanes
    return {"mul": mul, "add": add}


# ----------------------------------------------------------------- source (AST)

_REVOLUTE_TEST = re.compile(r"\bt\s*==\s*REVOLUTE\b")


def ast_counts(func, calls=None):
    """``*``, ``+``/``-`` and unary ``-`` in the source of func, loops unrolled.

    ``calls`` maps the names of called kernels to their counts (added per call).
    Where the source branches on ``t == REVOLUTE`` only that branch is counted,
    elsewhere the ``else`` branch (the non-root one where it branches on
    ``p < 0``).
    """
    calls = calls or {}
    src = textwrap.dedent(inspect.getsource(getattr(func, "py_func", func)))
    fn = ast.parse(src).body[0]
    c = Counter()

    def nodes(node):
        """ast.walk without the index expressions of subscripts (integer arithmetic)."""
        yield node
        for field, child in ast.iter_fields(node):
            if isinstance(node, ast.Subscript) and field == "slice":
                continue
            for ch in child if isinstance(child, list) else [child]:
                if isinstance(ch, ast.AST):
                    yield from nodes(ch)

    def expr(node, mult):
        for n in nodes(node):
            if isinstance(n, ast.BinOp):
                if isinstance(n.op, ast.Mult):
                    c["mul"] += mult
                elif isinstance(n.op, ast.Add | ast.Sub):
                    c["add"] += mult
                elif isinstance(n.op, ast.Div):
                    c["div"] += mult
            elif isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
                if not isinstance(n.operand, ast.Constant):
                    c["neg"] += mult
            elif isinstance(n, ast.Call):
                name = ast.unparse(n.func).split(".")[-1]
                if name in calls:
                    for key in ("mul", "add", "neg", "sin", "cos"):
                        c[key] += mult * calls[name].get(key, 0)
                elif name in ("sin", "cos", "sqrt"):
                    c[name] += mult

    def block(stmts, mult):
        for s in stmts:
            if isinstance(s, ast.For):
                it = s.iter
                if not (
                    isinstance(it, ast.Call)
                    and ast.unparse(it.func) == "range"
                    and all(isinstance(a, ast.Constant) for a in it.args)
                ):
                    raise ValueError(f"loop without a constant trip count: {ast.unparse(it)}")
                block(s.body, mult * len(range(*[a.value for a in it.args])))
            elif isinstance(s, ast.If):
                if _REVOLUTE_TEST.search(ast.unparse(s.test)):
                    block(s.body, mult)
                elif s.orelse:
                    block(s.orelse, mult)
            elif isinstance(s, ast.AugAssign):
                if isinstance(s.op, ast.Add | ast.Sub):
                    c["add"] += mult
                elif isinstance(s.op, ast.Mult):
                    c["mul"] += mult
                expr(s.value, mult)
            elif isinstance(s, ast.Expr | ast.Assign | ast.Return):
                if s.value is not None:
                    expr(s.value, mult)
            elif isinstance(s, ast.Pass):
                pass
            else:
                raise ValueError(f"statement not handled: {ast.unparse(s)[:60]}")

    block(fn.body, 1)
    return dict(c)


# ------------------------------------------------------------ the 8x8 matrix form


class Sym:
    """A counting scalar: products and sums are tallied; literal zeros are skipped."""

    tally = Counter()

    def __mul__(self, other):
        if other == 0:
            return 0
        Sym.tally["mul"] += 1
        return Sym()

    __rmul__ = __mul__

    def __add__(self, other):
        if other == 0:
            return self
        Sym.tally["add"] += 1
        return Sym()

    __radd__ = __add__


def _quat_matrix(p, right):
    """4x4 Hamilton matrix of p (p o x if not right, x o p if right); signs folded in."""
    L = [[0, 1, 2, 3], [1, 0, 3, 2], [2, 3, 0, 1], [3, 2, 1, 0]]
    return [[p[L[i][j]] for j in range(4)] for i in range(4)]


def matrix_form_counts():
    """[q*]^+ ([q]^- X) for a pure X, skipping structural zeros (signs folded in entries)."""
    q = [Sym() for _ in range(8)]
    X = [0, Sym(), Sym(), Sym(), 0, Sym(), Sym(), Sym()]

    def dual(p, d, right):
        P, D = _quat_matrix(p, right), _quat_matrix(d, right)
        Z = [[0] * 4 for _ in range(4)]
        return [P[i] + Z[i] for i in range(4)] + [D[i] + P[i] for i in range(4)]

    def matvec(M, x, rows):
        out = [0] * 8
        for i in rows:
            acc = 0
            for j in range(8):
                acc = acc + M[i][j] * x[j]
            out[i] = acc
        return out

    Sym.tally = Counter()
    Y = matvec(dual(q[:4], q[4:], right=True), X, range(8))  # X o q
    matvec(dual(q[:4], q[4:], right=False), Y, [1, 2, 3, 5, 6, 7])  # q* o (X o q), vector part
    return dict(Sym.tally)


# ------------------------------------------------------------------------- main

_KEYS = ("mul", "add", "neg", "sin", "cos")


def _add(*parts):
    out = Counter()
    for p in parts:
        out.update({k: v for k, v in p.items() if k in _KEYS})
    return dict(out)


def _sub(a, b):
    return {k: a.get(k, 0) - b.get(k, 0) for k in _KEYS}


def own_counts(func):
    """The operations of func's own source, the kernels it calls left out."""
    return ast_counts(func, calls={})


def count_all():
    """Every count of the page, as a dict of {name: counts}."""
    a8 = np.zeros(8)
    a8[0] = 1.0
    x6, o6, o8 = np.zeros(6), np.empty(6), np.empty(8)
    z6 = (0.0,) * 6
    reals = np.zeros((2, mbl.REALS.width))
    reals[:, mbl.PLACEMENT] = 1.0
    reals[1, mbl.AXIS + 2] = 1.0
    q1 = np.zeros(1)
    W = np.zeros((3, mbl.RNEA_WIDTH))
    c = {}
    # the step every recursion executes (rotation + translation form)
    c["tc_ir"] = llvm_counts(mbk._to_child, (W, 1, *z6))
    c["tc_asm"] = asm_counts(mbk._to_child, (W, 1, *z6))
    c["tc_ast"] = ast_counts(mbk._to_child)
    c["sv_ir"] = llvm_counts(probe_joint_twist, (reals, q1))
    c["sv_asm"] = asm_counts(probe_joint_twist, (reals, q1))
    c["sv_ast"] = ast_counts(mbk._joint_twist)
    c["upd"] = own_counts(mbkin._twist_step)  # w_k = Ad_k w_parent + S_k v_k, component-wise
    c["step_ir"] = _add(c["tc_ir"], c["sv_ir"], c["upd"])
    c["step_asm"] = _add(c["tc_asm"], c["sv_asm"], c["upd"])
    c["step_ast"] = _add(c["tc_ast"], c["sv_ast"], c["upd"])
    # per joint: its pose, and R, r^k from it
    c["qmul_ast"] = ast_counts(mbk._qmul)
    c["rp_ir"] = llvm_counts(probe_relative_pose, (reals, q1))
    c["rp_ast"] = ast_counts(mbk.relative_pose, calls={"_qmul": c["qmul_ast"]})
    c["jt_ir"] = llvm_counts(probe_joint_transform, (reals, q1, W))
    c["jt_ast"] = ast_counts(
        mbk._joint_transform, calls={"relative_pose": c["rp_ast"], "_qmul": c["qmul_ast"]}
    )
    c["conv_ir"] = _sub(c["jt_ir"], c["rp_ir"])
    c["conv_ast"] = _sub(c["jt_ast"], c["rp_ast"])
    # the other per-body steps that use R, r^k
    c["cross_ir"] = llvm_counts(mbk._cross6, (*z6, *z6))
    c["acc_ir"] = llvm_counts(probe_acceleration_step, (reals, q1, W))
    c["tp_ir"] = llvm_counts(mbk._to_parent, (W, 1, *z6))
    c["ts_ir"] = llvm_counts(probe_twist_step, (reals, q1, q1, W))
    c["ts_sum"] = _add(c["jt_ir"], c["step_ir"], c["cross_ir"])
    # the paper's form
    c["fc_ir"] = llvm_counts(dqk.dv_frame_change, (a8, x6, o6))
    c["fc_asm"] = asm_counts(dqk.dv_frame_change, (a8, x6, o6))
    c["fc_ast"] = ast_counts(dqk.dv_frame_change)
    c["fci_ir"] = llvm_counts(dqk.dv_frame_change_inv, (a8, x6, o6))
    c["dq_step_ir"] = _add(c["fc_ir"], c["sv_ir"], c["upd"])
    c["mul_ir"] = llvm_counts(dqk.dq_mul, (a8, a8, o8))
    c["mul_asm"] = asm_counts(dqk.dq_mul, (a8, a8, o8))
    c["mul_ast"] = ast_counts(dqk.dq_mul)
    c["mat"] = matrix_form_counts()
    c["paper_sandwich"] = {"mul": 72, "add": 56}
    c["paper_dq"] = {"mul": 72, "add": 57}
    c["paper_poe"] = {"mul": 96, "add": 66}
    # the probes kept one branch: one sine and one cosine, and S theta_dot as written
    for k in ("rp_ir", "jt_ir", "ts_ir"):
        if (c[k]["sin"], c[k]["cos"]) != (1, 1):
            sys.exit(f"{k}: the joint-type tests were not folded (sin/cos {c[k]})")
    if c["sv_ir"]["mul"] != c["sv_ast"]["mul"]:
        sys.exit(f"_joint_twist: the joint-type tests were not folded ({c['sv_ir']})")
    for k, v in c.items():
        if v.get("calls"):
            sys.exit(f"{k}: the compiled code still calls {v['calls']}; the counts include them")
    return c


def _row(label, c, how):
    extra = ", ".join(f"{k} {c[k]}" for k in ("sin", "cos") if c.get(k))
    return (
        label,
        str(c.get("mul", 0)),
        str(c.get("add", 0)),
        str(c.get("neg", 0)),
        extra or "-",
        how,
    )


def main():
    c = count_all()
    R = _row
    rows = [
        R("frame change `_to_child` (R, r^k form)", c["tc_ir"], "LLVM IR"),
        R("frame change `_to_child`", c["tc_asm"], "x86 machine code"),
        R("frame change `_to_child`", c["tc_ast"], "source (AST)"),
        R("`S theta_dot`: `_joint_twist` (revolute)", c["sv_ir"], "LLVM IR (probe)"),
        R("`S theta_dot`: `_joint_twist` (revolute)", c["sv_ast"], "source (AST)"),
        R("`+ S theta_dot`: the additions of `_twist_step`", c["upd"], "source (AST)"),
        R("**velocity step** (frame change + S theta_dot)", c["step_ir"], "LLVM IR + AST"),
        R("**velocity step**", c["step_asm"], "machine code + AST"),
        R("**velocity step**", c["step_ast"], "source (AST)"),
        R("per joint: R, r^k from its dual quaternion", c["conv_ir"], "LLVM IR (probes)"),
        R("per joint: R, r^k from its dual quaternion", c["conv_ast"], "source (AST)"),
        R("per joint: its pose `relative_pose` (revolute)", c["rp_ir"], "LLVM IR (probe)"),
        R("per joint: its pose `relative_pose` (revolute)", c["rp_ast"], "source (AST)"),
        R("velocity product `_cross6` (P15)", c["cross_ir"], "LLVM IR"),
        R("acceleration step `_acceleration_step` (P16)", c["acc_ir"], "LLVM IR (probe)"),
        R("wrench frame change `_to_parent` (P19)", c["tp_ir"], "LLVM IR"),
        R("`_twist_step` compiled whole (revolute)", c["ts_ir"], "LLVM IR (probe)"),
        R("frame change `dv_frame_change` (sandwich)", c["fc_ir"], "LLVM IR"),
        R("frame change `dv_frame_change` (sandwich)", c["fc_asm"], "x86 machine code"),
        R("frame change `dv_frame_change` (sandwich)", c["fc_ast"], "source (AST)"),
        R("velocity step with `dv_frame_change`", c["dq_step_ir"], "LLVM IR + AST"),
        R("inverse frame change `dv_frame_change_inv`", c["fci_ir"], "LLVM IR"),
        R("paper: sandwich via 8x8 matrices (eq. 2-3)", c["paper_sandwich"], "paper"),
        R("paper: velocity step, dual quaternions", c["paper_dq"], "paper"),
        R("paper: velocity step, product of exponentials", c["paper_poe"], "paper [31]"),
        R("8x8 form `[q*]^+ ([q]^- X)`, zeros skipped", c["mat"], "counting symbols"),
        R("product `dq_mul`", c["mul_ir"], "LLVM IR"),
        R("product `dq_mul`", c["mul_asm"], "x86 machine code"),
        R("product `dq_mul`", c["mul_ast"], "source (AST)"),
    ]
    tab = table(rows, ("operation", "mul", "add/sub", "neg", "other", "counted on"))
    print(tab)
    ver = (
        f"numba {numba.__version__}, llvmlite {llvmlite.__version__} "
        f"(LLVM {'.'.join(map(str, llvm.llvm_version_info))}), numpy {np.__version__}"
    )
    DOC.write_text(document(c, tab, ver))
    print(f"\nwrote {DOC}")


def _pair(c):
    return f"{c['mul']} / {c['add']}"


def document(c, tab, ver):
    """The text of ``docs/op-counts.md``: what is counted, how, the table, the comparison."""
    tc, st, cv, rp = c["tc_ir"], c["step_ir"], c["conv_ir"], c["rp_ir"]
    fc, fci, tp = c["fc_ir"], c["fci_ir"], c["tp_ir"]
    same = ("mul", "add")
    alone = _add(st, cv)  # a velocity recursion that builds R, r^k for itself
    rnea_rt = _add(cv, tc, tc, tp)  # R, r^k once; twist, acceleration, wrench
    rnea_dq = _add(fc, fc, fci)
    merged = _sub(c["ts_sum"], c["ts_ir"])
    if merged["mul"] == 3 and merged["add"] == 0:
        why = (
            "in the velocity product, the products of the transformed\n"
            "  parent twist with the zero dual part of `S theta_dot` each appear twice\n"
            "  and are computed once (LLVM merges identical products, which changes no\n"
            "  result)"
        )
    else:
        why = "identical products, which LLVM computes once"
    agree = all(tc[k] == c["tc_asm"][k] == c["tc_ast"][k] for k in same)
    agree = " (IR, machine code and\n  source agree)" if agree else " (IR)"
    if all(c["step_asm"][k] == st[k] for k in same):
        asm_note = (
            "The rotation + translation form has no such constants:\n"
            "  its machine code executes the IR's counts."
        )
    else:
        asm_note = f"The velocity step's machine code executes {_pair(c['step_asm'])}."
    dq_step = c["dq_step_ir"]
    as_much = "as much as" if all(alone[k] == dq_step[k] for k in same) else "against"
    twos = c["fc_ast"]["mul"] - c["fc_asm"]["mul"]
    return f"""# Operation counts of the velocity recursion

Generated by `benchmarks/op_counts.py` ({ver}); rerun it to refresh this page.

## What is counted

One step of the base-to-tip velocity recursion for a revolute joint (paper eq.
12 and the discussion after eq. 22),
`w_k = q^* o w_parent o q^ + S_k theta_dot_k`, as every recursion of dqspace
executes it: `multibody/kernels/kinematics.py::_twist_step`, the step of the forward
pass shared by `rnea`, the articulated-body algorithm (`kernels/articulated.py`) and the
kinematics kernels (`body_motions`, `system_momentum`, `kinetic_energy`):

* the frame change `q^* o w o q^` is evaluated in its rotation + translation
  form, `_to_child`: `R^T w_r` and `R^T w_d + (R^T w_r) x r^k`, with `R` the
  rotation matrix of the joint's pose `rel_k` and `r^k` its translation in
  body k;
* `S_k theta_dot_k` is `_joint_twist` (three products `axis * theta_dot`:
  the axis is any unit vector, not only z), added to the six components of
  the twist in `_twist_step`;
* `R` and `r^k` are built once per body from the joint's dual quaternion
  (`_joint_transform`, from `relative_pose`, the one place that builds a
  joint's pose) and then serve every frame change of that body: the twist and
  the acceleration (`_to_child`) and the wrench (`_to_parent`) in `rnea`, and
  also the articulated inertia in the articulated-body algorithm.  Their cost
  is listed separately (rows "per joint"), as is the joint's pose itself,
  which every form needs and the paper does not count.

The dual-quaternion sandwich `dq/kernels.py::dv_frame_change` (`R^T w_r`,
`R^T w_d + (R^T w_r) x r^b` evaluated from the dual quaternion at each call,
with `r^b = 2 vec(p* o q)` and the rotation by the two-cross-product formula
`v + w t + u x t`, `t = 2 u x v`) is kept in the table as the form of the
paper, with the paper's own figures and its 8x8 matrix form.

## How

* **LLVM IR**: numba compiles the kernel for float64 C-contiguous arrays (the
  types the recursions pass); the `fmul`, `fadd`, `fsub` and `fneg`
  instructions in the optimized IR of the kernel function (not the Python
  wrapper numba adds), and of any dqspace kernel it still calls, are counted;
  vector instructions count once per lane.  The steps that branch on the
  joint type (`_joint_twist`, `relative_pose`, `_joint_transform`,
  `_twist_step`, `_acceleration_step`) are compiled inside small probe
  functions that call them on a constant two-body model (a revolute joint
  under a root): numba freezes the model into the code, LLVM folds the tests
  on the joint type and on the parent, and only the revolute, non-root branch
  is left (one `sin` and one `cos` in the IR confirm it).
* **machine code**: the same in the x86-64 assembly numba emits for this CPU
  (`vmulsd`, `vaddsd`, `vsubsd`, packed forms per lane, FMA as one of each).
* **source (AST)**: the `*`, `+`, `-` and unary `-` of the Python source of
  the kernel and of the kernels it calls, constant-trip-count loops unrolled,
  the revolute (and non-root) branch taken.  This is what was written; the
  compiler may fold some of it.
* The velocity step is the sum of its parts: the frame change and
  `S theta_dot` (compiled) and the six additions of `_twist_step` (source).
  As a cross-check, `_twist_step` is also compiled whole for a revolute
  joint: {_pair(c["ts_ir"])} multiplications / additions, against
  {_pair(c["ts_sum"])} for its parts (R, r^k and the joint's pose {_pair(c["jt_ir"])},
  the velocity step {_pair(st)}, the velocity product of P15
  {_pair(c["cross_ir"])}).  The {merged["mul"]} multiplications fewer: {why}.
* The paper's 8x8 form `[q*]^+ ([q]^- X)` (eq. 2-3) is counted by evaluating
  it on counting symbols that skip the structural zeros of the two matrices
  and of the pure dual quaternion `X = [0, w, 0, v]`, and do not compute the
  two scalar parts of the result, which are known to be zero. Signs are taken
  as folded into the matrix entries.

## Results

{tab}

## Comparison with the paper

* The frame change as the recursions compute it costs **{tc["mul"]} multiplications
  and {tc["add"]} additions**{agree}: the rotation `R^T x` of the real and of the
  dual 3-vector, 9 and 6 each, and the cross product `(R^T w_r) x r^k`, 6 and
  3, added into the dual part with 3 more.  The dual-quaternion sandwich
  costs {_pair(fc)} (`dv_frame_change`, which rebuilds the rotation and `r^b`
  from the dual quaternion at each call), and 72 / 56 through the paper's
  8x8 matrices ({_pair(c["mat"])} by our count of the same form with its zeros
  skipped; the paper does not say how it counts, hence perhaps the two
  additions).
* One velocity step, given R and r^k: **{st["mul"]} multiplications and {st["add"]}
  additions**, against the paper's 72 / 57 for its dual-quaternion recursion
  and 96 / 66 for the product of exponentials.  `S theta_dot` with a general
  unit axis costs {c["sv_ir"]["mul"]} multiplications and its addition to the twist
  {c["upd"]["add"]} additions (three of them add zeros, for the components a revolute
  joint does not move): the paper's single addition assumes the axis is z
  and adds only the non-zero element.
* R and r^k cost **{cv["mul"]} multiplications and {cv["add"]} additions per joint** (IR;
  {_pair(c["conv_ast"])} in the source: the compiler computes the nine products that
  appear twice in the rotation matrix once, and drops the scalar part of
  `rel_r* o rel_d`, which is never used).  A velocity recursion on its own
  would therefore cost {_pair(alone)} per step, {as_much} the sandwich kernel's
  {_pair(dq_step)}, and below the paper's 72 / 57.  The gain is in the sharing: in
  `rnea` each body changes the frame of its twist, of its acceleration and of
  its wrench with the same R and r^k, {_pair(rnea_rt)} for the three against
  {_pair(rnea_dq)} with the sandwich kernels (`dv_frame_change` twice,
  `dv_frame_change_inv` once); the articulated-body algorithm uses them four
  times per body (twist, acceleration, bias wrench, articulated inertia), and
  `crba` in its composite-inertia sweep and once per ancestor and joint
  column.
* {twos} of the sandwich kernel's multiplications are by the constant 2
  (`t = 2 u x v` and `r = 2 vec(p* o q)`); the x86 code does them as
  additions (`x + x`), so the machine executes {_pair(c["fc_asm"])} for it.
  {asm_note}
* Not in any of these figures: the joint's own pose
  `rel_k = placement_k o X_J(theta_k)` (`relative_pose`: {rp["mul"]} multiplications,
  {rp["add"]} additions, one sine and one cosine for a revolute joint: the product of
  the placement with the pure rotation `X_J`, its zero dual part skipped;
  the general product `dq_mul` costs {_pair(c["mul_ir"])}), which the paper's recursion
  needs as well.
"""


if __name__ == "__main__":
    main()
