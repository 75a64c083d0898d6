"""Table rows (``[[section]]``) as a resolved scenario has them, for tests that build a
scenario's configuration without a file."""

import copy

from dqspace.scenarios.spec.schema import SCHEMA


def schema_row(section, row):
    """``row`` completed with the schema's defaults for the keys it leaves out (a new
    optional key of the section then needs no change in the tests)."""
    fields = SCHEMA[section].fields
    return {**{k: copy.deepcopy(f.default) for k, f in fields.items() if not f.required}, **row}


def wheel_row(axis, position=(0.0, 0.0, 0.0)):
    """A ``[[wheel]]`` row: a 0.02 kg m^2, 1 kg wheel of 0.5 N m and 6000 rpm on ``axis``
    at ``position`` [m] (base frame)."""
    return schema_row(
        "wheel",
        {
            "axis": [float(x) for x in axis],
            "position": [float(x) for x in position],
            "spin_inertia": 0.02,
            "transverse_inertia": 0.0,
            "mass": 1.0,
            "max_torque": 0.5,
            "max_speed_rpm": 6000.0,
        },
    )
