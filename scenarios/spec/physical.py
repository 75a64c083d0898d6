"""Physical checks of the system a scenario file describes, at load.

**Axes.** The device tables' axes and directions go through one helper,
:func:`unit_axis`.  A VSCMG unit's ``gimbal_axis`` and ``spin_axis`` are unit vectors: one
within :data:`AXIS_WARN` of unit length is taken as it is, one within :data:`AXIS_REFUSE`
(a unit vector rounded, typed to 4 digits) is normalised with a warning, one further off is
refused; a spin axis within :data:`ORTHOGONAL_REFUSE` of orthogonal to its gimbal axis
(``|g . s|``) is made orthogonal with a warning (its component along ``g`` removed), one
further off is refused.  A wheel's ``axis`` and a thruster's ``direction`` are directions
given up to scale (any non-zero length, normalised when the system is built): only a zero
vector is refused.  The section's ``enabled = false`` skips its table.

**Plausibility.** :func:`plausibility_warnings` compares the masses and inertias with the
sizes they imply (a mass in grams makes a body a thousand times too dense):

* the base: its density ``base.mass / base.size^3`` within :data:`DENSITY_RANGE`, and with
  ``base.inertia`` given, its rms radius of gyration ``sqrt(trace(J) / 2 m)`` within
  :data:`GYRATION_RANGE` times the uniform cube's (``base.size / 2``);
* the payload (``arm.payload_mass > 0``), the ``[[dh]]`` links and the momentum devices
  (``[wheels]``, ``[[wheel]]``, ``[[vscmg_unit]]`` wheel and gimbal, when enabled): the
  density of the uniform sphere with the body's mass and rms radius of gyration (radius
  ``sqrt(trace(J) / 2 m / 0.6)``) within :data:`DENSITY_RANGE`.

Each departure is one warning (logger ``dqspace.scenario``) naming the file and the keys;
``scenario.plausibility_warnings = false`` silences them.  An inertia no rigid body has
(triangle inequality) is an error, raised when the system is built
(:mod:`dqspace.scenarios.build.arm`, naming the key).

This module imports numpy only (loading a scenario does not load the kernels).
"""

from __future__ import annotations

import logging
import math

import numpy as np

from .config import ScenarioError

__all__ = [
    "AXIS_WARN",
    "AXIS_REFUSE",
    "ORTHOGONAL_WARN",
    "ORTHOGONAL_REFUSE",
    "DENSITY_RANGE",
    "GYRATION_RANGE",
    "unit_axis",
    "check_device_axes",
    "plausibility_warnings",
]

log = logging.getLogger("dqspace.scenario")

#: ``| |a| - 1 |`` up to which an axis is taken as it is (the devices' own tolerance,
#: :data:`dqspace.dq.AXIS_TOL`; a test keeps them equal)
AXIS_WARN = 1e-9
#: ``| |a| - 1 |`` beyond which an axis is refused (not a rounded unit vector)
AXIS_REFUSE = 1e-2
#: ``|g . s|`` up to which a spin axis is taken as orthogonal to its gimbal axis
ORTHOGONAL_WARN = 1e-9
#: ``|g . s|`` beyond which a spin axis is refused (about 0.57 deg from orthogonal)
ORTHOGONAL_REFUSE = 1e-2
#: shortest direction accepted up to scale (:data:`dqspace.dq.checks.MIN_AXIS_NORM`)
MIN_NORM = 1e-12
#: [kg/m^3] plausible densities: below, lighter than any spacecraft part (a mass in
#: tonnes?); above, denser than tungsten (a mass in grams?)
DENSITY_RANGE = (1.0, 20000.0)
#: the base's rms radius of gyration over its uniform cube's (``base.size / 2``)
GYRATION_RANGE = (0.1, 10.0)
#: the rms radius of gyration of a uniform sphere over its radius, squared (``3 * 0.4 / 2``)
_SPHERE_RMS2 = 0.6


def _vec(v):
    return "[" + ", ".join(f"{x:.6g}" for x in v) + "]"


def unit_axis(value, where, *, up_to_scale=False):
    """A device axis or direction checked, as ``(axis, warning)``.

    Parameters
    ----------
    value : sequence of 3 floats
    where : str, ``"<file>: <key>"`` (named in the messages)
    up_to_scale : True: any non-zero length is accepted and ``value`` returned as it is
        (normalised when the system is built); False: a unit vector (module docstring)

    Returns
    -------
    (list of 3 floats, str or None) : the axis (``value`` itself unless normalised) and the
    warning to give (None: nothing changed)

    Raises
    ------
    ScenarioError naming ``where``: a zero vector; a length further than
    :data:`AXIS_REFUSE` from 1 (not ``up_to_scale``), the message stating the tolerances.
    """
    a = np.asarray(value, dtype=float)
    n = float(np.linalg.norm(a))
    if not n > MIN_NORM:
        raise ScenarioError(f"{where} = {_vec(a)} is zero: give a direction")
    if up_to_scale or abs(n - 1.0) <= AXIS_WARN:
        return value, None
    if abs(n - 1.0) > AXIS_REFUSE:
        raise ScenarioError(
            f"{where} = {_vec(a)} is not a unit vector (norm {n:.6g}): give one within "
            f"{AXIS_REFUSE:g} of unit length (within {AXIS_WARN:g} it is taken as it is, "
            f"beyond that normalised with a warning)"
        )
    unit = (a / n).tolist()
    return unit, (
        f"{where} = {_vec(a)} has norm {n:.9g} (more than {AXIS_WARN:g} from 1): "
        f"normalised to {_vec(unit)}"
    )


def _orthogonal_spin(g, s, where):
    """The spin axis ``s`` made orthogonal to the gimbal axis ``g`` (both unit), as
    ``(axis, warning)``, or a ScenarioError beyond :data:`ORTHOGONAL_REFUSE`."""
    g, s = np.asarray(g, float), np.asarray(s, float)
    d = float(g @ s)
    if abs(d) <= ORTHOGONAL_WARN:
        return None, None
    angle = math.degrees(math.acos(max(-1.0, min(1.0, d))))
    if abs(d) > ORTHOGONAL_REFUSE:
        raise ScenarioError(
            f"{where}: spin_axis {_vec(s)} is not orthogonal to gimbal_axis {_vec(g)} "
            f"(g . s = {d:.3g}, {angle:.3f} deg apart): give |g . s| <= {ORTHOGONAL_REFUSE:g} "
            f"(within {ORTHOGONAL_WARN:g} it is taken as it is, beyond that made orthogonal "
            f"with a warning)"
        )
    t = s - d * g
    unit = (t / np.linalg.norm(t)).tolist()
    return unit, (
        f"{where}: spin_axis is {angle:.6f} deg from gimbal_axis (g . s = {d:.3g}, more than "
        f"{ORTHOGONAL_WARN:g}): made orthogonal, {_vec(unit)}"
    )


def check_device_axes(cfg, source) -> list[str]:
    """Check the axes and directions of the enabled device tables of a validated scenario
    (module docstring), normalising in ``cfg`` (in place) what is normalised.

    Returns
    -------
    list of str : the warnings, one per axis changed (also logged, logger
    ``dqspace.scenario``)

    Raises
    ------
    ScenarioError naming ``source`` and the key.
    """
    notes = []
    if cfg["vscmg"]["enabled"] and cfg["vscmg"]["layout"] == "table":
        for i, row in enumerate(cfg["vscmg_unit"]):
            for key in ("gimbal_axis", "spin_axis"):
                row[key], note = unit_axis(row[key], f"{source}: vscmg_unit[{i}].{key}")
                notes.append(note)
            spin, note = _orthogonal_spin(
                row["gimbal_axis"], row["spin_axis"], f"{source}: vscmg_unit[{i}]"
            )
            if spin is not None:
                row["spin_axis"] = spin
            notes.append(note)
    if cfg["wheels"]["enabled"] and cfg["wheels"]["layout"] == "table":
        for i, row in enumerate(cfg["wheel"]):
            unit_axis(row["axis"], f"{source}: wheel[{i}].axis", up_to_scale=True)
    if cfg["thrusters"]["enabled"] and cfg["thrusters"]["layout"] == "table":
        for i, row in enumerate(cfg["thruster"]):
            unit_axis(row["direction"], f"{source}: thruster[{i}].direction", up_to_scale=True)
    notes = [n for n in notes if n]
    for n in notes:
        log.warning("%s", n)
    return notes


# ------------------------------------------------------------------ plausibility


def _moments_trace(six):
    """trace of the inertia ``[Ixx, Iyy, Izz, Ixy, Ixz, Iyz]`` (the sum of its principal
    moments)."""
    return float(six[0] + six[1] + six[2])


def _sphere_density(mass, trace):
    """The density of the uniform sphere of ``mass`` whose rms radius of gyration is the
    body's, ``sqrt(trace / 2 m)``; None when the trace is not positive (refused later)."""
    if not (mass > 0.0 and trace > 0.0):
        return None
    radius = math.sqrt(trace / (2.0 * mass) / _SPHERE_RMS2)
    return mass / (4.0 / 3.0 * math.pi * radius**3)


def _density_note(where, keys, density, body):
    lo, hi = DENSITY_RANGE
    if density is None or lo <= density <= hi:
        return None
    hint = " (a mass in grams?)" if density > hi else " (a mass in tonnes, a size too large?)"
    return (
        f"{where}: {keys}: {body} has a density of {density:.3g} kg/m^3, outside the "
        f"plausible {lo:g} to {hi:g} kg/m^3{hint}"
    )


def _base_notes(cfg, source):
    b = cfg["base"]
    m, s = b["mass"], b["size"]
    notes = [
        _density_note(
            source,
            f"base.mass = {m:g} kg, base.size = {s:g} m",
            m / s**3,
            "the base (a cube of edge base.size)",
        )
    ]
    if b["inertia"]:
        tr = _moments_trace(b["inertia"])
        if tr > 0.0:
            ratio = math.sqrt(tr / (2.0 * m)) / (0.5 * s)
            lo, hi = GYRATION_RANGE
            if not lo <= ratio <= hi:
                notes.append(
                    f"{source}: base.inertia = {_vec(b['inertia'])} kg m^2 with base.mass = "
                    f"{m:g} kg: its rms radius of gyration, {math.sqrt(tr / (2.0 * m)):.3g} m, "
                    f"is {ratio:.3g} times the uniform cube's (base.size / 2 = {0.5 * s:g} m), "
                    f"outside the plausible {lo:g} to {hi:g} (an inertia or a mass in another "
                    f"unit?)"
                )
    return notes


def _body_notes(cfg, source):
    """(keys, mass, trace of the inertia, what) of the payload, the DH links and the
    enabled momentum devices."""
    bodies = []
    a = cfg["arm"]
    if a["payload_mass"] > 0.0:
        m = a["payload_mass"]
        if a["payload_inertia"]:
            keys = f"arm.payload_mass = {m:g} kg, arm.payload_inertia"
            tr = _moments_trace(a["payload_inertia"])
        else:
            keys = f"arm.payload_mass = {m:g} kg, arm.payload_inertia empty (a 0.05 m sphere)"
            tr = 3.0 * 0.4 * m * 0.05**2
        bodies.append((keys, m, tr, "the payload"))
    if a["model"] == "dh":
        for i, r in enumerate(cfg["dh"]):
            keys = f"dh[{i}].mass = {r['mass']:g} kg, dh[{i}].inertia"
            bodies.append((keys, r["mass"], _moments_trace(r["inertia"]), "the link"))
    w = cfg["wheels"]
    if w["enabled"] and w["layout"] != "table":
        keys = f"wheels.mass = {w['mass']:g} kg, wheels.spin_inertia"
        bodies.append((keys, w["mass"], 2.0 * w["spin_inertia"], "each wheel"))
    if w["enabled"] and w["layout"] == "table":
        for i, r in enumerate(cfg["wheel"]):
            trans = r["transverse_inertia"] or 0.5 * r["spin_inertia"]
            keys = f"wheel[{i}].mass = {r['mass']:g} kg, wheel[{i}].spin_inertia"
            bodies.append((keys, r["mass"], r["spin_inertia"] + 2.0 * trans, "the wheel"))
    v = cfg["vscmg"]
    if v["enabled"] and v["layout"] == "table":
        for i, r in enumerate(cfg["vscmg_unit"]):
            iw, ig = r["wheel_inertia"], r["gimbal_inertia"]
            keys = f"vscmg_unit[{i}].wheel_mass = {r['wheel_mass']:g} kg, wheel_inertia"
            bodies.append((keys, r["wheel_mass"], iw[0] + 2.0 * iw[1], "the VSCMG wheel"))
            keys = f"vscmg_unit[{i}].gimbal_mass = {r['gimbal_mass']:g} kg, gimbal_inertia"
            bodies.append((keys, r["gimbal_mass"], float(sum(ig)), "the VSCMG gimbal"))
    return [
        _density_note(source, keys, _sphere_density(m, tr), f"{what} (as a uniform sphere)")
        for keys, m, tr, what in bodies
    ]


def plausibility_warnings(cfg, source) -> list[str]:
    """The plausibility warnings of a validated scenario (module docstring): one line per
    mass or inertia out of its plausible range, naming ``source`` and the keys; none when
    ``scenario.plausibility_warnings`` is false.  Not logged here (:func:`load_scenario
    <dqspace.scenarios.spec.scenario.load_scenario>` logs them)."""
    if not cfg["scenario"]["plausibility_warnings"]:
        return []
    notes = _base_notes(cfg, source) + _body_notes(cfg, source)
    return [n for n in notes if n]
