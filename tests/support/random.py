"""Seeded random generators for quaternions and poses."""

import numpy as np


def random_unit_quat(rng, shape=()):
    q = rng.normal(size=(*shape, 4))
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def random_pose(rng, shape=(), scale=1.0):
    """Random unit dual quaternions (..., 8) with translations ~ N(0, scale)."""
    from dqspace.dq import dq_from_quat_translation

    return dq_from_quat_translation(
        random_unit_quat(rng, shape), scale * rng.normal(size=(*shape, 3))
    )
