"""Display units: one convention for what people read; files stay SI.

What the console, the figures and the sweep table show:

=================  =========================  ==========================================
SI (as recorded)   display                    note
=================  =========================  ==========================================
m                  mm                         every length, whatever its size (no µm)
m/s                mm/s
rad, deg           deg
rad/s              deg/s                      wheel speeds (kind ``wheel_speed``): rpm
rad/s^2            deg/s²                     wheel accelerations (``wheel_accel``): rpm/s
N, N m, N s, s     unchanged
-                  ``-`` (a pure number)
=================  =========================  ==========================================

A *kind* refines a unit: a wheel speed and a gimbal rate are both rad/s, shown in rpm
and deg/s.  Kinds are named after the series or metric that carries them
(``wheel_speed``, ``peak_gimbal_rate``, ...); a kind that is unknown, or that does not
apply to the given unit, is ignored, so callers may pass every metric's name as its kind.

Numbers keep ``digits`` significant digits in fixed notation (``0.003 mm``,
``0.0331 mm``, ``1000 rpm``) and turn to scientific notation only far from 1
(below 1e-6 or from 1e6 on: ``4.004e+09``).  Every conversion is a plain factor,
so :func:`to_display` works on floats and NumPy arrays alike.

This module imports nothing heavy (the command line imports it to print).
"""

import math

__all__ = [
    "NOT_MEASURED",
    "DISPLAY",
    "KINDS",
    "to_display",
    "format_number",
    "format_quantity",
    "format_compact",
    "display_metrics",
    "format_sweep_table",
]

#: what a metric without a value (NaN, None: no sample in its window) is shown as
NOT_MEASURED = "not measured"

_DEG = 180.0 / math.pi
_RPM = 60.0 / (2.0 * math.pi)

#: SI unit (as recorded in results and metrics) -> (display unit, factor); display = factor * SI
DISPLAY = {
    "m": ("mm", 1e3),
    "m/s": ("mm/s", 1e3),
    "rad": ("deg", _DEG),
    "deg": ("deg", 1.0),
    "rad/s": ("deg/s", _DEG),
    "rad/s^2": ("deg/s²", _DEG),
    "N": ("N", 1.0),
    "N m": ("N m", 1.0),
    "N s": ("N s", 1.0),
    "N m s": ("N m s", 1.0),
    "J": ("J", 1.0),
    "s": ("s", 1.0),
    "-": ("-", 1.0),
}

#: kind -> (SI unit it refines, display unit, factor)
KINDS = {
    "wheel_speed": ("rad/s", "rpm", _RPM),
    "wheel_accel": ("rad/s^2", "rpm/s", _RPM),
    "wheel_accel_cmd": ("rad/s^2", "rpm/s", _RPM),
    "gimbal_rate": ("rad/s", "deg/s", _DEG),
    "gimbal_rate_cmd": ("rad/s", "deg/s", _DEG),
    "peak_gimbal_rate": ("rad/s", "deg/s", _DEG),
    "vscmg_effort": ("rad", "deg", _DEG),
    "rw_speed": ("rad/s", "rpm", _RPM),
    "peak_rw_speed": ("rad/s", "rpm", _RPM),
}


def _unit_factor(si_unit, kind=None):
    """(display unit, factor) of an SI unit, refined by ``kind`` when it applies."""
    refined = KINDS.get(kind)
    if refined is not None and refined[0] == si_unit:
        return refined[1], refined[2]
    try:
        return DISPLAY[si_unit]
    except (KeyError, TypeError):
        known = ", ".join(repr(u) for u in DISPLAY)
        raise ValueError(f"unit {si_unit!r} has no display convention (known: {known})") from None


def to_display(value, si_unit, kind=None):
    """Convert an SI value (float or array) to its display unit.

    Parameters
    ----------
    value : float or ndarray, in ``si_unit``
    si_unit : str, a key of :data:`DISPLAY` (``"m"``, ``"rad/s"``, ...)
    kind : str, optional, a key of :data:`KINDS` (``"wheel_speed"`` -> rpm); others ignored

    Returns
    -------
    (value, unit) : the converted value (same type and shape) and the display unit

    Raises
    ------
    ValueError : ``si_unit`` is not in :data:`DISPLAY`
    """
    unit, factor = _unit_factor(si_unit, kind)
    return value * factor, unit


def format_number(x, digits=4):
    """``x`` with ``digits`` significant digits, trailing zeros dropped.

    Fixed notation for 1e-6 <= |x| < 1e6 (``0.003``, ``0.0331``, ``1000``), scientific
    otherwise (``4.004e+09``); ``0``, ``nan``, ``inf`` as such.
    """
    x = float(x)
    if not math.isfinite(x):
        return str(x)
    if x == 0.0:
        return "0"
    if int(digits) != digits or digits < 1:
        raise ValueError(f"digits must be a positive integer, got {digits!r}")
    exponent = math.floor(math.log10(abs(x)))
    if exponent < -6 or exponent >= 6:
        mantissa, e = f"{x:.{digits - 1}e}".split("e")
        return f"{_strip(mantissa)}e{e}"
    return _strip(f"{x:.{max(digits - 1 - exponent, 0)}f}")


def _strip(s):
    return s.rstrip("0").rstrip(".") if "." in s else s


def format_quantity(value, si_unit, kind=None, digits=4):
    """An SI value as display text with its unit: ``format_quantity(3.31e-5, "m")`` ->
    ``"0.0331 mm"``; a pure number (unit ``"-"``) has no unit: ``"3"``.  No value (None or
    NaN: a metric without a sample) is :data:`NOT_MEASURED`, never a number."""
    if value is None or value != value:
        return NOT_MEASURED
    v, unit = to_display(float(value), si_unit, kind)
    text = format_number(v, digits)
    return text if unit == "-" else f"{text} {unit}"


def display_metrics(metrics, units, digits=4):
    """Metrics in display units, for printing.

    Parameters
    ----------
    metrics : dict name -> float, SI (as :func:`dqspace.scenarios.metrics.summarize` gives)
    units : dict name -> SI unit (e.g. ``{n: u for n, (u, _) in METRICS.items()}``);
        a metric missing from it is a pure number (``"-"``)

    Returns
    -------
    list of (name, value text, display unit), in the order of ``metrics``; a metric
    without a value (NaN) is :data:`NOT_MEASURED`
    """
    rows = []
    for name, value in metrics.items():
        if _missing(value):
            unit = to_display(1.0, units.get(name, "-"), kind=name)[1]
            rows.append((name, NOT_MEASURED, unit))
            continue
        v, unit = to_display(float(value), units.get(name, "-"), kind=name)
        rows.append((name, format_number(v, digits), unit))
    return rows


# ------------------------------------------------------------------ sweep table

#: metrics a sweep table shows first (as many as fit), and their short headers
_KEY_METRICS = {
    "base_pos_err_max": "base pos max",
    "base_att_err_max": "base att max",
    "ee_rms": "ee rms",
    "total_impulse": "impulse",
    "peak_gimbal_rate": "gimbal rate max",
    "ee_max": "ee max",
    "vscmg_effort": "gimbal travel",
    "min_det_GGt": "min det GGt",
    "alloc_not_optimal": "alloc not opt",
}
_META = ("variant", "run_time", "error", "cached")
_GAP = "  "
_CELL = 18  # widest override value or header shown [characters]


def _is_override(column):
    return "." in column or "[" in column or column == "faults"


def _missing(v):
    return v is None or (isinstance(v, float) and math.isnan(v))


def format_compact(v, digits=4):
    """A short text for an override value (a scenario value, in the scenario's units):
    ``600×3`` for a repeated vector, ``failed_off #0 t=2`` for a thruster fault, ``none``
    for an empty list, ``-`` for a missing value; numbers in ``digits`` significant digits."""
    if _missing(v):
        return "-"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, (int, float)):
        return format_number(v, digits)
    if isinstance(v, dict):
        if {"time", "thruster", "kind"} <= set(v) <= {"time", "thruster", "kind", "scale"}:
            scale = v.get("scale", 1.0)
            return f"{v['kind']} #{v['thruster']} t={format_compact(v['time'], digits)}" + (
                f" ×{format_compact(scale, digits)}" if scale != 1.0 else ""
            )  # a thruster fault
        return " ".join(f"{k}={format_compact(x, digits)}" for k, x in v.items())
    if isinstance(v, (list, tuple)):
        if not v:
            return "none"
        parts = [format_compact(x, digits) for x in v]
        if all(not isinstance(x, (list, tuple, dict)) for x in v) and len(set(parts)) == 1:
            return f"{parts[0]}×{len(parts)}"
        return ("; " if isinstance(v[0], dict) else ",").join(parts)
    return str(v)


def _clip(text, width=_CELL):
    return text if len(text) <= width else text[: width - 1] + "…"


def _short_names(keys):
    """Override keys shortened to their last part (``kp_trans``) unless that is ambiguous."""
    short = {k: k if "[" in k else k.rsplit(".", 1)[-1] for k in keys}
    counts = {}
    for s in short.values():
        counts[s] = counts.get(s, 0) + 1
    return {k: _clip(s if counts[s] == 1 else k) for k, s in short.items()}


def _metric_column(df, name, metric_units, digits):
    unit = metric_units.get(name, "-")
    header = _KEY_METRICS.get(name, name.replace("_", " "))
    cells = []
    for v in df[name]:
        if _missing(v):
            cells.append("n/a")
        else:
            cells.append(format_number(to_display(float(v), unit, kind=name)[0], digits))
    shown = to_display(1.0, unit, kind=name)[1]
    return f"{header} [{shown}]", cells, True


def format_sweep_table(df, metric_units, max_width=100, max_rows=20, digits=4):
    """A readable summary of a sweep's DataFrame (the full table stays in metrics.csv).

    Columns, left to right while they fit in ``max_width``: the row number, ``status``
    (only when a variant failed), the override keys that vary between variants (all of
    them when none varies; names shortened to their last part, values compact, in the
    scenario's units), then the key metrics in display units with the unit in the header
    (``base pos max [mm]``), then the other metrics.  With more than ``max_rows`` rows
    the first and last ones are shown around a ``…`` line.  No line is wider than
    ``max_width``; a last line names what was left out.  A metric without a value (a failed
    run, or a metric not measured: no sample in its window) is ``n/a``, never a number,
    and a line says so.

    Parameters
    ----------
    df : pandas.DataFrame of :func:`dqspace.scenarios.sweep.sweep` (SI units)
    metric_units : dict metric name -> SI unit; a metric missing from it is a pure number
    max_width : int, characters per line (at least 20)
    max_rows : int, rows shown (at least 2)
    digits : int, significant digits of the numbers

    Returns
    -------
    str (lines joined with newlines, no trailing newline)
    """
    if max_width < 20 or max_rows < 2:
        raise ValueError(f"max_width must be >= 20 and max_rows >= 2, got {max_width}, {max_rows}")
    if len(df) == 0:
        return "(no variants)"
    fixed = [("#", [str(i) for i in range(len(df))], True)]
    errors = df["error"] if "error" in df else [None] * len(df)
    if any(isinstance(e, str) for e in errors):
        fixed.append(("status", ["FAILED" if isinstance(e, str) else "ok" for e in errors], False))
    keys = [c for c in df.columns if c not in _META and _is_override(c)]
    varying = [k for k in keys if len({repr(v) for v in df[k]}) > 1] or keys
    names = _short_names(varying)
    overrides = [
        (names[k], [_clip(format_compact(v, digits)) for v in df[k]], False) for k in varying
    ]
    metrics = [c for c in df.columns if c not in _META and not _is_override(c)]
    metrics = [m for m in _KEY_METRICS if m in metrics] + [
        m for m in metrics if m not in _KEY_METRICS
    ]
    metrics = [_metric_column(df, m, metric_units, digits) for m in metrics]
    rows = _row_selection(len(df), max_rows)

    def width_of(col):
        return max(len(col[0]), *(len(col[1][i]) for i in rows if i is not None))

    # the overrides leave room for the first metric; each group stops at its first misfit
    reserve = len(_GAP) + width_of(metrics[0]) if metrics else 0
    shown, width = [], -len(_GAP)
    for group, budget in (
        (fixed, max_width),
        (overrides, max_width - reserve),
        (metrics, max_width),
    ):
        for col in group:
            w = width_of(col)
            if width + len(_GAP) + w > budget:
                break
            shown.append((col, w))
            width += len(_GAP) + w
    columns = fixed + overrides + metrics
    lines = [_line([(c[0], w, c[2]) for c, w in shown])]
    for i in rows:
        if i is None:
            lines.append(f"… {len(df) - (len(rows) - 1)} rows not shown …")
        else:
            lines.append(_line([(c[1][i], w, c[2]) for c, w in shown]))
    left_out = [c[0] for c in columns if all(c is not s for s, _ in shown)]
    if left_out:
        lines.append(f"not shown: {', '.join(left_out)} (every column: metrics.csv)")
    metric_ids = {id(c) for c in metrics}
    if any(id(c) in metric_ids and "n/a" in c[1] for c, _ in shown):
        lines.append("n/a: no value (the run failed, or the metric was not measured)")
    return "\n".join(_clip(line.rstrip(), max_width) for line in lines)


def _row_selection(n, max_rows):
    """Row indices to show, ``None`` where rows are left out."""
    if n <= max_rows:
        return list(range(n))
    head = (max_rows + 1) // 2
    return [*range(head), None, *range(n - (max_rows - head), n)]


def _line(cells):
    return _GAP.join(text.rjust(w) if right else text.ljust(w) for text, w, right in cells)
