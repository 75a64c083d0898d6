"""
Dual-quaternion basics: poses, twists and ScLERP
================================================

A pose of frame B in frame I is one unit dual quaternion ``q_IB``; composing poses is a
product, a twist ``[w, v]`` moves between frames with :func:`dqspace.dq.frame_change`,
and screw linear interpolation (:func:`dqspace.dq.sclerp`) moves a frame along one
constant screw: a rotation about an axis together with a slide along it.
"""

import matplotlib.pyplot as plt
import numpy as np

from dqspace.dq import DualQuaternion, frame_change

# %%
# Composing poses
# ---------------
# ``T_IB`` is the pose of the base B in the inertial frame I (yaw 90 deg, 1 m along x);
# ``T_BE`` the pose of an end-effector E in B. Their product is E in I.

T_IB = DualQuaternion.from_rpy_deg([0, 0, 90], [1.0, 0, 0])
T_BE = DualQuaternion.from_rpy_deg([0, 30, 0], [0, 0, 0.5])
T_IE = T_IB * T_BE
print("E in I: position [m]", T_IE.translation.round(6) + 0.0, "rpy [deg]", T_IE.rpy_deg().round(6))

# the same pose from homogeneous transforms, for comparison
T_hom = np.eye(4)
T_hom[:3, :3], T_hom[:3, 3] = T_IB.rotation_matrix, T_IB.translation
T_hom2 = np.eye(4)
T_hom2[:3, :3], T_hom2[:3, 3] = T_BE.rotation_matrix, T_BE.translation
print("4x4 product agrees:", np.allclose((T_hom @ T_hom2)[:3, 3], T_IE.translation))

# %%
# Changing the frame of a twist
# -----------------------------
# A body spinning at 1 rad/s about the z axis of I, seen at the origin of a frame F
# displaced by 2 m along x: the angular velocity is the same, and F's origin moves at
# ``w x r`` = 2 m/s along y. ``frame_change(q_IF, x)`` expresses the dual vector ``x``
# (given in I, about I's origin) in F, about F's origin.

T_IF = DualQuaternion.from_rpy_deg([0, 0, 0], [2.0, 0, 0])
twist_I = np.array([0, 0, 1.0, 0, 0, 0])  # [w, v]: rad/s, m/s
twist_F = frame_change(T_IF.array, twist_I)
print("twist in F [rad/s, m/s]:", twist_F.round(12) + 0.0)

# %%
# Screw linear interpolation
# --------------------------
# ScLERP from pose A to pose B follows the one screw that takes A to B: the rotation
# angle and the slide along the screw axis both grow linearly with the interpolation
# parameter ``s``, and the origin moves on a helix about the screw axis. A straight
# line between the two origins (dashed) is what interpolating position and attitude
# separately would give instead.

A = DualQuaternion.from_rpy_deg([0, 0, 0], [0.0, 0.0, 0.0])
B = DualQuaternion.from_rpy_deg([0, 0, 150], [0.2, 0.3, 1.0])
s = np.linspace(0.0, 1.0, 61)
path = A.sclerp(B, s)  # a batch of 61 poses
p = path.translation  # (61, 3) [m]
screw = (A.conj() * path).screw()  # screw parameters of the motion from A
theta, d = screw.theta, screw.d  # [rad], [m]

fig = plt.figure(figsize=(11.5, 4.6), layout="constrained")
fig.get_layout_engine().set(wspace=0.12)
ax3 = fig.add_subplot(1, 2, 1, projection="3d")
ax3.plot(*(1e3 * p.T), color="C0", label="ScLERP path of the origin")
ax3.plot(*(1e3 * p[[0, -1]].T), "k--", lw=1, label="straight line")
for k in range(0, len(s), 10):  # the moving frame's x axis every 10 samples
    x_axis = path[k].rotation_matrix[:, 0] * 150.0
    ax3.quiver(*(1e3 * p[k]), *x_axis, color="C3", lw=1)
ax3.set_xlabel("x [mm]")
ax3.set_ylabel("y [mm]")
ax3.set_zlabel("z [mm]", labelpad=8)
ax3.set_title("origin and x axis (red) along the screw")
ax3.legend(loc="upper left", fontsize="small")

ax = fig.add_subplot(1, 2, 2)
ax.plot(
    s,
    theta / theta[-1],
    color="C0",
    label=f"rotation θ(s) / θ(1), θ(1) = {np.degrees(theta[-1]):.0f} deg",
)
ax.plot(
    s[::4],
    d[::4] / d[-1],
    "o",
    mfc="none",
    color="C1",
    label=f"slide d(s) / d(1), d(1) = {1e3 * d[-1]:.0f} mm",
)
ax.set_xlabel("interpolation parameter s [-]")
ax.set_ylabel("fraction of the whole motion [-]")
ax.set_title("rotation and slide advance together")
ax.legend(loc="upper left", fontsize="small")
ax.grid(alpha=0.3)
plt.show()
