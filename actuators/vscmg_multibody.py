"""A VSCMG cluster as real bodies of a multibody model (paper eq. 36-37 exactly).

:func:`attach_cluster` appends a gimbal body and a wheel body per unit of a
:class:`~dqspace.actuators.vscmg.VSCMGCluster` (the device and cluster model, eq. 40-41);
:class:`ClusterModel` reads the cluster's state from, and writes its motor torques into, the
multibody state ``(q, v)`` and generalized forces.  Derivation and checks: ``docs/vscmg.md``.
"""

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..dq import dq_from_rotation_translation, dq_identity
from ..multibody import Body, Joint, JointType, Model, forward_kinematics
from ._checks import finite_vector
from .vscmg import VSCMGCluster

__all__ = ["ClusterIndex", "ClusterModel", "ClusterState", "attach_cluster"]


@dataclass(frozen=True)
class ClusterState:
    """The cluster's state read from a multibody state.

    Attributes
    ----------
    gamma : (K,) gimbal angles [rad]
    gamma_dot : (K,) gimbal rates [rad/s]
    wheel_speed : (K,) wheel speeds relative to the gimbals [rad/s]
    w_IB_B : (3,) angular velocity of the carrying body, its coordinates [rad/s]
    """

    gamma: NDArray[np.float64]
    gamma_dot: NDArray[np.float64]
    wheel_speed: NDArray[np.float64]
    w_IB_B: NDArray[np.float64]


@dataclass(frozen=True)
class ClusterIndex:
    """Where a cluster's coordinates sit in the extended model.

    Attributes
    ----------
    parent : int, body carrying the cluster (its frame is the cluster's "base frame")
    gimbal_body, wheel_body : (K,) body indices
    gimbal_q, wheel_q : (K,) q entries: gimbal angle gamma_i, wheel angle phi_i [rad]
    gimbal_v, wheel_v : (K,) v entries: gimbal rate gamma_dot_i, wheel speed Omega_i [rad/s]
    """

    parent: int
    gimbal_body: NDArray[np.int64]
    wheel_body: NDArray[np.int64]
    gimbal_q: NDArray[np.int64]
    wheel_q: NDArray[np.int64]
    gimbal_v: NDArray[np.int64]
    wheel_v: NDArray[np.int64]


@dataclass(frozen=True)
class ClusterModel:
    """A multibody model with a VSCMG cluster attached (from :func:`attach_cluster`).

    Attributes
    ----------
    model : Model, the extended model
    cluster : VSCMGCluster
    index : ClusterIndex
    """

    model: Model
    cluster: VSCMGCluster
    index: ClusterIndex

    def state(self, q: ArrayLike, v: ArrayLike) -> ClusterState:
        """The cluster's :class:`ClusterState` at ``(q, v)``."""
        q = np.asarray(q, dtype=float)
        v = np.asarray(v, dtype=float)
        ix = self.index
        if ix.parent == 0 and self.model.floating:
            w = v[:3].copy()
        else:
            w = forward_kinematics(self.model, q, v).twist[ix.parent, :3].copy()
        return ClusterState(q[ix.gimbal_q].copy(), v[ix.gimbal_v].copy(), v[ix.wheel_v].copy(), w)

    def with_state(
        self,
        q: ArrayLike,
        v: ArrayLike,
        *,
        gamma: ArrayLike | None = None,
        gamma_dot: ArrayLike | None = None,
        wheel_speed: ArrayLike | str | None = None,
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Copies of ``(q, v)`` with the cluster's entries replaced where given.

        ``wheel_speed="nominal"`` sets every wheel to its nominal speed.
        """
        q = np.array(q, dtype=float)
        v = np.array(v, dtype=float)
        K, ix = self.cluster.K, self.index
        if gamma is not None:
            q[ix.gimbal_q] = finite_vector(gamma, "gamma", K)
        if gamma_dot is not None:
            v[ix.gimbal_v] = finite_vector(gamma_dot, "gamma_dot", K)
        if isinstance(wheel_speed, str):
            if wheel_speed != "nominal":
                raise ValueError(f"wheel_speed must be an array or 'nominal', got {wheel_speed!r}")
            wheel_speed = self.cluster.nominal_wheel_speed
        if wheel_speed is not None:
            v[ix.wheel_v] = finite_vector(wheel_speed, "wheel_speed", K)
        return q, v

    def joint_torques(self, gimbal: ArrayLike, wheel: ArrayLike) -> NDArray[np.float64]:
        """Generalized-force vector (nv,) with gimbal and wheel motor torques [N m], zeros else."""
        K, ix = self.cluster.K, self.index
        tau = np.zeros(self.model.nv)
        tau[ix.gimbal_v] = finite_vector(gimbal, "gimbal torques", K)
        tau[ix.wheel_v] = finite_vector(wheel, "wheel torques", K)
        return tau


def attach_cluster(
    model: Model, cluster: VSCMGCluster, *, parent: str | int = "base", prefix: str = "vscmg"
) -> ClusterModel:
    """Add the cluster to a multibody model as real bodies (paper eq. 36-37 exactly).

    Per unit i two bodies are appended: ``{prefix}{i}_gimbal`` on a REVOLUTE joint about
    g, placed at ``p_i`` in the parent with axes ``[s0, t0, g]`` (so its joint axis is z),
    and ``{prefix}{i}_wheel`` on a REVOLUTE joint about s0 (x in the gimbal frame) at the
    gimbal's origin.  The gimbal joint's angle is gamma_i and the wheel joint's rate is
    Omega_i; motor torques at these joints are internal (they act on the parent too).

    Parameters
    ----------
    model : Model, e.g. ``models.space_manipulator()`` or a bare base
    cluster : VSCMGCluster, axes and positions in the frame of ``parent``
    parent : str or int, the carrying body
    prefix : str, body-name prefix

    Returns
    -------
    ClusterModel
    """
    if not isinstance(cluster, VSCMGCluster):
        raise ValueError(f"cluster must be a VSCMGCluster, got {type(cluster).__name__}")
    p = model.body_index(parent)
    bodies = []
    for i, u in enumerate(cluster.units, start=1):
        gname, wname = f"{prefix}{i}_gimbal", f"{prefix}{i}_wheel"
        Ig, Iw = u.gimbal_inertia, u.wheel_inertia
        bodies.append(
            Body(
                gname,
                p,
                Joint(
                    JointType.REVOLUTE,
                    np.array([0.0, 0.0, 1.0]),
                    dq_from_rotation_translation(u.frame_rotation, u.position),
                    f"{prefix}{i}_gimbal",
                ),
                u.gimbal_mass,
                np.zeros(3),
                np.diag(Ig),
            )
        )
        bodies.append(
            Body(
                wname,
                gname,
                Joint(
                    JointType.REVOLUTE,
                    np.array([1.0, 0.0, 0.0]),
                    dq_identity(),
                    f"{prefix}{i}_wheel",
                ),
                u.wheel_mass,
                np.zeros(3),
                np.diag([Iw[0], Iw[1], Iw[1]]),
            )
        )
    ext = model.with_bodies(bodies)
    nb0 = model.nb
    gb = nb0 + 2 * np.arange(cluster.K)
    wb = gb + 1
    index = ClusterIndex(
        parent=p,
        gimbal_body=gb,
        wheel_body=wb,
        gimbal_q=ext.q_index[gb].copy(),
        wheel_q=ext.q_index[wb].copy(),
        gimbal_v=ext.v_index[gb].copy(),
        wheel_v=ext.v_index[wb].copy(),
    )
    for a in (gb, wb, index.gimbal_q, index.wheel_q, index.gimbal_v, index.wheel_v):
        a.setflags(write=False)
    return ClusterModel(ext, cluster, index)
