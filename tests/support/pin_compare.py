"""Compare dqspace quantities with Pinocchio's at one state (relative errors).

Errors are ``||ours - reference|| / ||reference||`` (Frobenius / 2-norms),
with Pinocchio's quantities converted to dqspace's conventions: velocity
order (the free flyer's ``[v, w]`` becomes ``[w, v]``), Jacobian rows
``[v, w]`` -> ``[w, v]``, and ``crba``'s upper triangle symmetrized.  A zero
reference (the Jacobian of a frame on a fixed root) gives the absolute error.
"""

import numpy as np
import pinocchio as pin

from dqspace.dq import transform_from_dq
from dqspace.multibody import (
    Reference,
    forward_dynamics,
    frame_jacobian,
    frame_pose,
    inverse_dynamics,
    mass_matrix,
)
from support.pin_bridge import q_to_pin, v_to_pin

PIN_REFERENCE = {
    Reference.LOCAL: pin.ReferenceFrame.LOCAL,
    Reference.WORLD: pin.ReferenceFrame.WORLD,
    Reference.LOCAL_WORLD_ALIGNED: pin.ReferenceFrame.LOCAL_WORLD_ALIGNED,
}
QUANTITIES = (
    "mass_matrix",
    "inverse_dynamics",
    "forward_dynamics",
    "frame_pose",
    "jacobian_LOCAL",
    "jacobian_WORLD",
    "jacobian_LOCAL_WORLD_ALIGNED",
)


def rel_err(x, ref):
    n = np.linalg.norm(ref)
    d = np.linalg.norm(np.asarray(x) - ref)
    return d / n if n > 0 else d


def pin_model_from_urdf(xml, floating, gravity):
    """Pinocchio's own URDF parse (independent of dqspace's), with the given gravity."""
    pm = (
        pin.buildModelFromXML(xml, pin.JointModelFreeFlyer())
        if floating
        else (pin.buildModelFromXML(xml))
    )
    pm.gravity = pin.Motion(np.asarray(gravity, float), np.zeros(3))
    return pm


def velocity_permutation(model):
    """P (nv, nv) with ``v_pin = P v`` (dqspace -> Pinocchio velocity order)."""
    return v_to_pin(model, np.eye(model.nv))


def jacobian_from_pin(model, J_pin):
    """A Pinocchio frame Jacobian (rows [v, w], pin columns) in dqspace's layout."""
    J_pin = np.asarray(J_pin).reshape(6, model.nv)  # pin returns a 1-D array when nv = 1
    J = np.vstack([J_pin[3:], J_pin[:3]])
    return J @ velocity_permutation(model)


class Worst:
    """Running worst relative error per quantity."""

    def __init__(self):
        self.err = dict.fromkeys(QUANTITIES, 0.0)
        self.count = 0

    def update(self, errs):
        self.count += 1
        for k, e in errs.items():
            self.err[k] = max(self.err.get(k, 0.0), float(e))

    def report(self, title):
        lines = [f"\n{title}: worst relative error over {self.count} states"]
        lines += [f"  {k:<30s} {e:.2e}" for k, e in self.err.items()]
        print("\n".join(lines))


def compare_state(model, pm, pd, frame_ids, q, v, a, tau):
    """Relative errors of every compared quantity at (q, v, a) and (q, v, tau).

    ``frame_ids`` maps dqspace frame names to Pinocchio frame ids.
    """
    qp = q_to_pin(model, q)
    vp = v_to_pin(model, v)
    P = velocity_permutation(model)
    out = {}

    Mp = pin.crba(pm, pd, qp)
    Mp = np.triu(Mp) + np.triu(Mp, 1).T
    out["mass_matrix"] = rel_err(P @ mass_matrix(model, q) @ P.T, Mp)
    out["inverse_dynamics"] = rel_err(
        v_to_pin(model, inverse_dynamics(model, q, v, a)),
        pin.rnea(pm, pd, qp, vp, v_to_pin(model, a)),
    )
    out["forward_dynamics"] = rel_err(
        v_to_pin(model, forward_dynamics(model, q, v, tau)),
        pin.aba(pm, pd, qp, vp, v_to_pin(model, tau)),
    )

    pin.computeJointJacobians(pm, pd, qp)  # also runs the forward kinematics
    pin.updateFramePlacements(pm, pd)
    e_pose = 0.0
    e_jac = dict.fromkeys(PIN_REFERENCE, 0.0)
    for name, fid in frame_ids.items():
        T = transform_from_dq(frame_pose(model, q, name))
        e_pose = max(e_pose, rel_err(T, pd.oMf[fid].homogeneous))
        for ref, pref in PIN_REFERENCE.items():
            J_ref = jacobian_from_pin(model, pin.getFrameJacobian(pm, pd, fid, pref))
            e_jac[ref] = max(e_jac[ref], rel_err(frame_jacobian(model, q, name, ref), J_ref))
    out["frame_pose"] = e_pose
    for ref, e in e_jac.items():
        out[f"jacobian_{ref.name}"] = e
    return out


def random_state(model, rng):
    """(q, v, a, tau): a random configuration and normal(0, 1) velocity, acceleration, force."""
    q = model.random_configuration(rng)
    return q, rng.normal(size=model.nv), rng.normal(size=model.nv), rng.normal(size=model.nv)
