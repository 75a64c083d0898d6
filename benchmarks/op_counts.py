"""Arithmetic operations of one step of the velocity recursion, counted on the compiled code.

The paper (Sec. 4, after eq. 22) counts 72 multiplications and 57 additions for
one step ``w_k = q^* o w_{k+1} o q^ + H^ theta_dot`` of the velocity recursion
with revolute joints (72 / 56 for the sandwich product through the 8x8 matrix
form of eq. 2-3, one more addition for ``H^ theta_dot``), against 96 and 66
for the product of exponentials.  This script counts the same step in dqspace:

* the frame change is ``dqspace.dq._kernels.dv_frame_change`` (called by
  ``dqspace.multibody._kernels.twists``), the ``+ S theta_dot`` is
  ``_kernels.motion`` (``S theta_dot``, a general unit axis) plus the
  6-component ``+=`` loop of ``twists``;
* **LLVM IR**: the kernel is compiled afresh by numba for float64 C-contiguous
  arrays (the signature the recursions use) and the ``fmul``, ``fadd``,
  ``fsub`` and ``fneg`` instructions of the optimized IR of the kernel
  function itself (not its Python wrapper) are counted, vector instructions
  once per lane;
* **machine code**: the same in the x86 assembly (``v?mul/add/sub s/p d``,
  FMAs counted as one multiplication and one addition);
* **source (AST)**: the ``*``, ``+``, ``-`` and unary ``-`` of the kernel's
  Python source, loops with a constant trip count unrolled, the revolute
  branch taken where the source branches on the joint type;
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

from dqspace.dq import _kernels as dqk
from dqspace.multibody import _kernels as mbk

DOC = Path(__file__).resolve().parent.parent / "docs" / "op-counts.md"


# ------------------------------------------------------------ compiled code


def _compile(kernel, args):
    """A fresh (uncached) numba compilation of the kernel's source for these args."""
    f = numba.njit(kernel.py_func)
    f(*args)
    (sig,) = f.signatures
    return f, sig


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


_LANES = {"xmm": 2, "ymm": 4, "zmm": 8}


def llvm_counts(kernel, args):
    """fmul / fadd+fsub / fneg counts (per lane) of the kernel's optimized LLVM IR."""
    f, sig = _compile(kernel, args)
    ir = f.inspect_llvm(sig)
    name = kernel.py_func.__name__
    body = _function_block(ir, f"{len(name)}{name}", r"^define ", r"^}")
    c = Counter()
    for m in re.finditer(
        r"=\s*(fmul|fadd|fsub|fneg)\s+(?:[a-z]+\s+)*(<(\d+) x double>|double)", body
    ):
        lanes = int(m.group(3)) if m.group(3) else 1
        c[m.group(1)] += lanes
    callees = []
    for m in re.finditer(r"\bcall\b[^@\n]*@(\S+?)\(", body):
        d = re.search(r"_kernels\d+(\w+?)B\d", m.group(1))  # numba's mangled kernel names
        if d:
            callees.append(re.sub(r"^\d+", "", d.group(1)))
    return {"mul": c["fmul"], "add": c["fadd"] + c["fsub"], "neg": c["fneg"], "calls": callees}


def asm_counts(kernel, args):
    """Floating-point multiply / add / subtract / FMA instructions of the x86 code, per lane."""
    f, sig = _compile(kernel, args)
    asm = f.inspect_asm(sig)
    name = kernel.py_func.__name__
    body = _function_block(asm, f"{len(name)}{name}", r"^_ZN\S*:", r"^\.Lfunc_end")
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
    Where the source branches on ``t == REVOLUTE`` only that branch is counted.
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
                    for key in ("mul", "add", "neg"):
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


def twists_update_counts():
    """The ``twist[k, j] += sv[j]`` loop of ``twists``: the AugAssign inside its range(6) loop."""
    src = textwrap.dedent(inspect.getsource(mbk.twists.py_func))
    n = 0
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.For) and any(
            isinstance(s, ast.AugAssign) and "twist[k, j]" in ast.unparse(s.target)
            for s in node.body
        ):
            n += len(range(*[a.value for a in node.iter.args]))
    if n == 0:
        sys.exit("could not find the `twist[k, j] += ...` loop in twists")
    return {"add": n}


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


def _add(*parts):
    out = Counter()
    for p in parts:
        out.update({k: v for k, v in p.items() if k in ("mul", "add", "neg", "sin", "cos")})
    return dict(out)


def main():
    a = np.zeros(8)
    a[0] = 1.0
    x6, o6, o8 = np.zeros(6), np.empty(6), np.empty(8)
    fc_ir = llvm_counts(dqk.dv_frame_change, (a, x6, o6))
    fc_asm = asm_counts(dqk.dv_frame_change, (a, x6, o6))
    fc_ast = ast_counts(dqk.dv_frame_change)
    fci_ir = llvm_counts(dqk.dv_frame_change_inv, (a, x6, o6))
    mul_ir = llvm_counts(dqk.dq_mul, (a, a, o8))
    mul_asm = asm_counts(dqk.dq_mul, (a, a, o8))
    mul_ast = ast_counts(dqk.dq_mul)
    cross_ir = llvm_counts(dqk.dv_cross, (x6, x6, o6))
    motion_ast = ast_counts(mbk.motion)
    upd = twists_update_counts()
    rel_ast = ast_counts(mbk.relative_pose, calls={"dq_mul": mul_ir})
    mat = matrix_form_counts()
    nb2 = np.array([[-1, mbk.FIXED, 0, 0], [0, mbk.REVOLUTE, 0, 0]], dtype=np.int64)
    reals2 = np.zeros((2, 24))
    reals2[1, 2] = 1.0
    rel2 = np.tile(a, (2, 1))
    tw_ir = llvm_counts(mbk.twists, (nb2, reals2, rel2, np.zeros(1), np.empty((2, 6))))

    step_ir = _add(fc_ir, motion_ast, upd)
    step_asm = _add(fc_asm, motion_ast, upd)
    step_ast = _add(fc_ast, motion_ast, upd)

    def row(label, c, how):
        neg = c.get("neg", 0)
        extra = ", ".join(f"{k} {c[k]}" for k in ("sin", "cos") if c.get(k))
        return (
            label,
            str(c.get("mul", 0)),
            str(c.get("add", 0)),
            str(neg) if neg else "0",
            extra or "-",
            how,
        )

    rows = [
        row("frame change `dv_frame_change`", fc_ir, "LLVM IR"),
        row("frame change `dv_frame_change`", fc_asm, "x86 machine code"),
        row("frame change `dv_frame_change`", fc_ast, "source (AST)"),
        row("`+ S theta_dot`: `motion` (revolute)", motion_ast, "source (AST)"),
        row("`+ S theta_dot`: `twist[k] += sv` loop", upd, "source (AST)"),
        row("`twists`, its own code (calls: " + ", ".join(tw_ir["calls"]) + ")", tw_ir, "LLVM IR"),
        row("**velocity step** (frame change + S theta_dot)", step_ir, "LLVM IR + AST"),
        row("**velocity step**", step_asm, "machine code + AST"),
        row("**velocity step**", step_ast, "source (AST)"),
        row("paper: sandwich via 8x8 matrices (eq. 2-3)", {"mul": 72, "add": 56}, "paper"),
        row("paper: velocity step, dual quaternions", {"mul": 72, "add": 57}, "paper"),
        row("paper: velocity step, product of exponentials", {"mul": 96, "add": 66}, "paper [31]"),
        row("8x8 form `[q*]^+ ([q]^- X)`, zeros skipped", mat, "counting symbols"),
        row("product `dq_mul`", mul_ir, "LLVM IR"),
        row("product `dq_mul`", mul_asm, "x86 machine code"),
        row("product `dq_mul`", mul_ast, "source (AST)"),
        row("relative pose, revolute `relative_pose`", rel_ast, "AST + dq_mul IR"),
        row("inverse frame change `dv_frame_change_inv`", fci_ir, "LLVM IR"),
        row("dual cross product `dv_cross`", cross_ir, "LLVM IR"),
    ]
    tab = table(rows, ("operation", "mul", "add/sub", "neg", "other", "counted on"))
    print(tab)

    ver = (
        f"numba {numba.__version__}, llvmlite {llvmlite.__version__} "
        f"(LLVM {'.'.join(map(str, llvm.llvm_version_info))}), numpy {np.__version__}"
    )
    twos = fc_ast["mul"] - fc_asm["mul"]
    if "dv_frame_change" in tw_ir["calls"]:
        twists_note = (
            "* `twists` itself is also compiled and counted: numba does not inline the\n"
            "  kernels it calls ("
            + ", ".join(f"`{c}`" for c in tw_ir["calls"])
            + " stay separate\n"
            "  functions), so its own code holds only the additions of\n"
            "  `twist[k] += S theta_dot`, which confirms that the step is the sum of the\n"
            "  rows above."
        )
    else:
        twists_note = (
            "* `twists` itself is also compiled and counted; the kernels it calls are\n"
            "  inlined into it, so its row covers every joint type's branch and is not\n"
            "  the cost of one revolute step."
        )
    doc = f"""# Operation counts of the velocity recursion

Generated by `benchmarks/op_counts.py` ({ver}); rerun it to refresh this page.

## What is counted

One step of the base-to-tip velocity recursion for a revolute joint (paper eq.
12 and the discussion after eq. 22),
`w_k = q^* o w_parent o q^ + S_k theta_dot_k`, as dqspace executes it in
`multibody/_kernels.py::twists`:

* the frame change `q^* o w o q^` is the compiled kernel
  `dq/_kernels.py::dv_frame_change` (`R^T w_r`, `R^T w_d + (R^T w_r) x r^b`,
  with `r^b = 2 vec(p* o q)` and the rotation done with the two-cross-product
  formula `v + w t + u x t`, `t = 2 u x v`);
* `S_k theta_dot_k` is `motion` (three products `axis * theta_dot`: the axis is
  any unit vector, not only z), added to the six components of the twist.

## How

* **LLVM IR**: numba compiles the kernel for float64 C-contiguous arrays (the
  types the recursions pass); the `fmul`, `fadd`, `fsub` and `fneg`
  instructions in the optimized IR of the kernel function (not the Python
  wrapper numba adds) are counted; vector instructions count once per lane.
* **machine code**: the same in the x86-64 assembly numba emits for this CPU
  (`vmulsd`, `vaddsd`, `vsubsd`, packed forms per lane, FMA as one of each).
* **source (AST)**: the `*`, `+`, `-` and unary `-` of the Python source of
  the kernel, constant-trip-count loops unrolled, the revolute branch taken.
  This is what was written; the compiler may fold some of it.
* The paper's 8x8 form `[q*]^+ ([q]^- X)` (eq. 2-3) is counted by evaluating
  it on counting symbols that skip the structural zeros of the two matrices
  and of the pure dual quaternion `X = [0, w, 0, v]`, and do not compute the
  two scalar parts of the result, which are known to be zero. Signs are taken
  as folded into the matrix entries.
{twists_note}

## Results

{tab}

## Comparison with the paper

* The frame change as dqspace computes it costs **{fc_ir["mul"]} multiplications and
  {fc_ir["add"]} additions/subtractions** in the compiled IR; the sandwich product
  through the 8x8 matrices costs 72 and 56 in the paper ({mat["mul"]} and {mat["add"]}
  by our count of the same form with its zeros skipped; the paper does not
  say how it counts, hence perhaps the two additions).  By the source: the
  rotation `R^T v` of the real and of the dual 3-vector, 18 multiplications
  (3 of them by 2) and 12 additions each; the translation `r^b = 2 vec(p* o q)`,
  15 and 9; the cross product `(R^T w_r) x r^b` added into the dual part, 6
  and 6.  No scalar part is ever formed, and the dual block of the 8x8
  matrices (the position) enters once, through `r^b`, instead of multiplying
  every component.
* {twos} of those multiplications are by the constant 2 (`t = 2 u x v` and
  `r = 2 vec(p* o q)`); the x86 code does them as additions (`x + x`), so the
  machine executes **{fc_asm["mul"]} multiplications and {fc_asm["add"]} additions**.
  The three source negations (`u = -p_vec`) are folded into the subtractions
  by the compiler (no `fneg` in the IR).
* `S theta_dot` with a general unit axis costs {motion_ast.get("mul", 0)} multiplications and the
  update of the twist {upd["add"]} additions (three of them add zeros, for the
  components a revolute joint does not move): the paper's single addition
  assumes the axis is z and adds only the non-zero element.
* One velocity step: **{step_ir["mul"]} multiplications and {step_ir["add"]} additions**
  (IR; {step_asm["mul"]} and {step_asm["add"]} in machine code) against the paper's
  72 and 57 for its dual-quaternion recursion and 96 and 66 for the product of
  exponentials.
* For reference, the relative pose of a revolute joint (`relative_pose`,
  `placement o [cos(theta/2), sin(theta/2) axis]`) costs {rel_ast["mul"]} multiplications,
  {rel_ast["add"]} additions, one sine and one cosine: it calls the general product
  `dq_mul` ({mul_ir["mul"]} / {mul_ir["add"]}), which does not exploit the zero dual part
  of the joint's own pose (a product with a pure rotation needs 32 / 24).
"""
    DOC.write_text(doc)
    print(f"\nwrote {DOC}")


if __name__ == "__main__":
    main()
