"""Side-by-side timing on a shared, noisy machine (used by the benchmark scripts).

Every candidate is a Python statement timed with :class:`timeit.Timer` (no
lambda in the loop, so a single call is timed as a user would write it).  The
loop count of each candidate is calibrated once so that one block lasts about
``block_s`` seconds; then ``repeats`` rounds are run, each round timing one
block of every candidate in a rotated order, so that slow phases of the
machine hit all candidates alike.  The figure reported is the median over the
rounds of the per-call time; the spread is the interquartile range relative to
the median.
"""

import platform
import subprocess
import timeit

import numpy as np


def measure(cases, namespace, *, repeats=31, block_s=0.002, per=None):
    """Median per-call time of each statement, measured interleaved.

    Parameters
    ----------
    cases : dict[str, str]
        Label -> statement (evaluated in ``namespace``).
    namespace : dict
        Globals of the statements.
    repeats : int
        Interleaved rounds; the median over them is reported.
    block_s : float
        Target duration of one timed block [s].
    per : dict[str, int], optional
        Label -> number of elements one statement processes; the result is
        divided by it (time per element of a batch).

    Returns
    -------
    dict[str, tuple[float, float, float]]
        Label -> (median time per call (or per element) [s], relative IQR,
        fastest round [s]).
    """
    per = per or {}
    timers = {k: timeit.Timer(s, globals=namespace) for k, s in cases.items()}
    numbers = {}
    for k, t in timers.items():
        t.timeit(1)  # warm-up (first-call costs, caches)
        n = 1
        while True:
            dt = t.timeit(n)
            if dt >= block_s / 5 or n >= 10**7:
                break
            n *= 4
        numbers[k] = max(1, int(n * block_s / max(dt, 1e-9)))
    samples = {k: [] for k in cases}
    labels = list(cases)
    for r in range(repeats):
        order = labels[r % len(labels) :] + labels[: r % len(labels)]
        for k in order:
            samples[k].append(timers[k].timeit(numbers[k]) / numbers[k] / per.get(k, 1))
    out = {}
    for k, s in samples.items():
        q25, med, q75 = np.percentile(s, [25, 50, 75])
        out[k] = (float(med), float((q75 - q25) / med), float(min(s)))
    return out


def fmt_time(t):
    """Seconds as a short string in ns / us / ms."""
    if t < 1e-6:
        return f"{t * 1e9:.1f} ns"
    if t < 1e-3:
        return f"{t * 1e6:.2f} us"
    return f"{t * 1e3:.2f} ms"


def table(rows, header):
    """Plain-text table (also valid Markdown) from a list of tuples of strings."""
    rows = [tuple(str(c) for c in r) for r in rows]
    w = [max(len(header[i]), *(len(r[i]) for r in rows)) for i in range(len(header))]
    line = "| " + " | ".join(h.ljust(w[i]) for i, h in enumerate(header)) + " |"
    sep = "|" + "|".join("-" * (x + 2) for x in w) + "|"
    body = ["| " + " | ".join(c.ljust(w[i]) for i, c in enumerate(r)) + " |" for r in rows]
    return "\n".join([line, sep, *body])


def machine():
    """One line naming the CPU, the core count and Python."""
    cpu = platform.processor() or platform.machine()
    try:
        info = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        fields = dict(
            (a.strip(), b.strip()) for a, _, b in (ln.partition(":") for ln in info.splitlines())
        )
        cpu = f"{fields.get('Model name', cpu)}, {fields.get('CPU(s)', '?')} CPUs"
    except (OSError, subprocess.CalledProcessError):
        pass
    return f"{cpu}; Python {platform.python_version()}"


def verdict(ratio, limit):
    """'PASS' when ratio <= limit, else 'FAIL'."""
    return "PASS" if ratio <= limit else "FAIL"
