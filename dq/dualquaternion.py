"""A small value class over the functional API, for notebooks and readable user code.

>>> from dqspace.dq import DualQuaternion
>>> T = DualQuaternion.from_rpy_deg([0, 0, 90], [1.0, 0, 0])
>>> (T * T.conj()).allclose(DualQuaternion.identity())
True
>>> T.apply([1.0, 0, 0]).round(12)
array([1., 1., 0.])

Every method calls the functions of :mod:`dqspace.dq` (one implementation);
the class only holds an ``(..., 8)`` array and gives operators.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import algebra as A
from . import conversions as C
from . import screw as S
from .checks import as_float_array


class DualQuaternion:
    """Dual quaternion(s) ``q_r + eps q_d`` held as an ``(..., 8)`` float array.

    ``a * b`` is the product (pose composition), ``a ** t`` the screw power,
    ``a.conj()`` the conjugate (inverse of a unit pose).  Batches behave like
    numpy arrays: ``len``, indexing and broadcasting over leading axes.
    """

    __slots__ = ("_a",)
    __array_priority__ = 20

    def __init__(self, array: ArrayLike) -> None:
        self._a = as_float_array(array, "array", (8,)).copy()
        self._a.setflags(write=False)

    @classmethod
    def _wrap(cls, fresh):
        """Hold a freshly computed, already valid (..., 8) array (no copy, no check)."""
        obj = cls.__new__(cls)
        fresh.setflags(write=False)
        obj._a = fresh
        return obj

    # --------------------------------------------------------- constructors
    @classmethod
    def identity(cls, shape: int | tuple[int, ...] = ()) -> DualQuaternion:
        """The identity pose (or a batch of them)."""
        return cls(A.dq_identity(shape))

    @classmethod
    def from_quat_translation(
        cls, q: ArrayLike, translation: ArrayLike = (0.0, 0.0, 0.0)
    ) -> DualQuaternion:
        """Pose from a unit quaternion ``[w, x, y, z]`` and a position [m] (reference frame)."""
        return cls(C.dq_from_quat_translation(q, translation))

    @classmethod
    def from_transform(cls, T: ArrayLike) -> DualQuaternion:
        """Pose from a 4x4 homogeneous transform."""
        return cls(C.dq_from_transform(T))

    @classmethod
    def from_rpy_deg(
        cls, rpy_deg: ArrayLike, translation: ArrayLike = (0.0, 0.0, 0.0)
    ) -> DualQuaternion:
        """Pose from roll, pitch, yaw [deg] (URDF convention) and a position [m]."""
        return cls(C.dq_from_rpy_deg(rpy_deg, translation))

    @classmethod
    def from_axis_angle(
        cls, axis: ArrayLike, angle: ArrayLike, translation: ArrayLike = (0.0, 0.0, 0.0)
    ) -> DualQuaternion:
        """Pose from a rotation ``angle`` [rad] about ``axis`` and a position [m]."""
        return cls(C.dq_from_quat_translation(C.quat_from_axis_angle(axis, angle), translation))

    @classmethod
    def exp(cls, x: ArrayLike) -> DualQuaternion:
        """Inverse of :meth:`log` (Table 1 pose exponential) of (..., 6) arrays."""
        return cls(A.dq_exp(x))

    # ------------------------------------------------------------ accessors
    @property
    def array(self) -> NDArray[np.float64]:
        """The underlying read-only (..., 8) array."""
        return self._a

    @property
    def shape(self) -> tuple[int, ...]:
        """Leading (batch) shape."""
        return self._a.shape[:-1]

    @property
    def real(self) -> NDArray[np.float64]:
        """Real part q_r (..., 4)."""
        return self._a[..., :4]

    @property
    def dual(self) -> NDArray[np.float64]:
        """Dual part q_d (..., 4)."""
        return self._a[..., 4:]

    @property
    def rotation(self) -> NDArray[np.float64]:
        """Rotation quaternion q_ba (..., 4)."""
        return C.quat_from_dq(self._a)

    @property
    def translation(self) -> NDArray[np.float64]:
        """Position of the frame origin in the reference frame (..., 3) [m]."""
        return C.translation_from_dq(self._a)

    @property
    def rotation_matrix(self) -> NDArray[np.float64]:
        """Rotation matrix (..., 3, 3)."""
        return C.rotation_matrix_from_dq(self._a)

    @property
    def matrix(self) -> NDArray[np.float64]:
        """Homogeneous transform (..., 4, 4)."""
        return C.transform_from_dq(self._a)

    def rpy_deg(self) -> NDArray[np.float64]:
        """Roll, pitch, yaw [deg] (..., 3)."""
        return C.rpy_deg_from_quat(self.rotation)

    # ----------------------------------------------------------- operations
    def __mul__(self, other: DualQuaternion) -> DualQuaternion:
        if not isinstance(other, DualQuaternion):
            return NotImplemented
        return DualQuaternion._wrap(A.dq_mul(self._a, other._a))

    def __pow__(self, t: ArrayLike) -> DualQuaternion:
        return DualQuaternion._wrap(S.dq_pow(self._a, t))

    def conj(self) -> DualQuaternion:
        """Conjugate ``q_r* + eps q_d*``; the inverse of a unit pose."""
        return DualQuaternion._wrap(A.dq_conj(self._a))

    def inv(self) -> DualQuaternion:
        """Inverse ``a* / |a|^2``."""
        return DualQuaternion._wrap(A.dq_inv(self._a))

    def norm(self) -> NDArray[np.float64]:
        """Dual-number norm (..., 2) ``[real, dual]``."""
        return A.dq_norm(self._a)

    def normalized(self) -> DualQuaternion:
        """The nearest unit dual quaternion."""
        return DualQuaternion._wrap(A.dq_normalize(self._a))

    def log(self) -> NDArray[np.float64]:
        """Pose logarithm of Table 1, (..., 6): ``[1/2 theta n, 1/2 r^b]``."""
        return A.dq_log(self._a)

    def screw_log(self) -> NDArray[np.float64]:
        """Group (screw) logarithm (..., 6)."""
        return S.dq_screw_log(self._a)

    def screw(
        self,
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """Screw parameters (theta, d, l, m)."""
        return S.screw_parameters(self._a)

    def sclerp(self, other: DualQuaternion, t: ArrayLike) -> DualQuaternion:
        """Screw interpolation from self (t=0) to other (t=1)."""
        return DualQuaternion._wrap(S.sclerp(self._a, other._a, t))

    def apply(self, points: ArrayLike) -> NDArray[np.float64]:
        """Map points (..., 3) from the moving frame to the reference frame: ``R p + r``."""
        p = as_float_array(points, "points", (3,))
        R = C.rotation_matrix_from_dq(self._a)
        return (R @ p[..., None])[..., 0] + self.translation

    def frame_change(self, x_a: ArrayLike) -> NDArray[np.float64]:
        """Express dual vectors (..., 6) of the reference frame in the moving frame."""
        return A.frame_change(self._a, x_a)

    def adjoint(self) -> NDArray[np.float64]:
        """6x6 matrix of :meth:`frame_change`."""
        return A.adjoint_matrix(self._a)

    # ---------------------------------------------------------- comparisons
    def allclose(self, other: DualQuaternion, atol: float = 1e-12, same_pose: bool = True) -> bool:
        """Element-wise closeness; with ``same_pose`` a and -a compare equal (same pose)."""
        o = other._a if isinstance(other, DualQuaternion) else as_float_array(other, "other", (8,))
        close = np.isclose(self._a, o, atol=atol, rtol=0).all(axis=-1)
        if same_pose:
            close |= np.isclose(self._a, -o, atol=atol, rtol=0).all(axis=-1)
        return bool(np.all(close))

    # -------------------------------------------------------- array protocol
    def __array__(self, dtype=None, copy=None):
        return np.asarray(self._a, dtype=dtype)

    def __len__(self):
        if self._a.ndim == 1:
            raise TypeError("a single DualQuaternion has no len()")
        return self._a.shape[0]

    def __getitem__(self, index):
        if self._a.ndim == 1:
            raise TypeError("a single DualQuaternion cannot be indexed; use .array")
        return DualQuaternion(self._a[index])

    def __repr__(self):
        if self._a.ndim == 1:
            r = np.array2string(self._a[:4], precision=6, suppress_small=True)
            d = np.array2string(self._a[4:], precision=6, suppress_small=True)
            return f"DualQuaternion(real={r}, dual={d})"
        return f"DualQuaternion(shape={self.shape})"
