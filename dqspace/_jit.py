"""Kernels with explicit signatures, compiled at their first use instead of at import.

``numba.njit(signature)`` compiles (or loads from the on-disk cache) when the module
defining the kernel is imported.  The first such load also starts numba's code
generator and its linear-algebra support, about a second on a small machine, which
every ``import dqspace.dq`` or ``import dqspace.multibody`` would pay even when it
never runs a kernel.  :func:`lazy_njit` keeps the explicit signature (the dispatch
rules and read-only argument types it gives) and moves that cost to the first call.

On first use the kernel is compiled and the module attribute that held the lazy
wrapper is replaced by numba's own dispatcher, so later calls through that module
go straight to numba.  Compiled code that references a lazy kernel as a global
(one kernel calling another) sees the dispatcher: the wrapper types as it.
"""

import functools
import sys
from collections import OrderedDict

import numpy as np
from numba import njit, typeof, types
from numba.core import cgutils
from numba.core.typing.typeof import typeof_impl
from numba.experimental.function_type import (
    FunctionModel,
    _get_jit_address,
    _get_wrapper_address,
    lower_get_wrapper_address,
)
from numba.extending import NativeValue, register_model, unbox

from ._numba_cache import kernel_lock

__all__ = [
    "LazyKernel",
    "lazy_njit",
    "compiled",
    "KernelPointer",
    "NativeFunctionType",
    "dispatcher_for",
    "SignatureOnFirstCall",
    "signature_on_first_call",
    "TypedCall",
    "param_array",
]

_OWN = frozenset({"py_func", "_signature", "_options", "_dispatcher"})


class LazyKernel:
    """A function to be compiled by ``njit(signature, **options)`` when first used."""

    def __init__(self, py_func, signature, options):
        self.py_func = py_func
        self._signature = signature
        self._options = options
        self._dispatcher = None
        functools.update_wrapper(self, py_func)

    @property
    def dispatcher(self):
        """numba's dispatcher for this kernel (compiled, or loaded from the cache, now)."""
        d = self._dispatcher
        if d is None:
            with kernel_lock(_kernel_name(self.py_func, self._signature)):
                d = njit(self._signature, **self._options)(self.py_func)
            self._dispatcher = d
            module = sys.modules.get(self.py_func.__module__)
            name = self.py_func.__name__
            if module is not None and getattr(module, name, None) is self:
                setattr(module, name, d)
        return d

    def __call__(self, *args):
        return self.dispatcher(*args)

    def __getattr__(self, name):
        # only reached for attributes the wrapper lacks: numba's (signatures, overloads, ...)
        if name in _OWN or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.dispatcher, name)

    def __repr__(self):
        state = "compiled" if self._dispatcher is not None else "not compiled yet"
        return f"<lazy kernel {self.py_func.__module__}.{self.py_func.__qualname__} ({state})>"


def _kernel_name(py_func, sig):
    """A kernel's name for :func:`~dqspace._numba_cache.kernel_lock`: its function and
    signature (two processes compiling one kernel for the same types wait for each
    other; for other types they do not)."""
    return f"{py_func.__module__}.{py_func.__qualname__}{sig}"


def lazy_njit(signature, **options):
    """Decorator: ``numba.njit(signature, **options)`` deferred to the kernel's first use."""

    def wrap(py_func):
        return LazyKernel(py_func, signature, options)

    return wrap


def compiled(fn):
    """The numba dispatcher behind ``fn`` (``fn`` itself when it is not a lazy kernel)."""
    return fn.dispatcher if isinstance(fn, LazyKernel) else fn


@typeof_impl.register(LazyKernel)
def _typeof_lazy(val, c):
    return typeof_impl(val.dispatcher, c)


class NativeFunctionType(types.FunctionType):
    """numba's ``FunctionType`` whose values always carry the kernel's native entry.

    numba calls a ``FunctionType`` value through its native entry (numba's own calling
    convention: arguments passed as they are between compiled functions, exceptions
    propagated) when the value holds one, and otherwise through the C wrapper, which
    copies every argument into a C structure and back and drops exceptions.  numba fills
    the native entry only for its own dispatchers; a :class:`KernelPointer` is typed as
    this type, whose unboxing fills it from :meth:`KernelPointer.jit_address`.  Measured
    on the closed loop: the C wrapper cost about 22 us a tick for three stages whose
    arguments are named tuples of hundreds of arrays.
    """


register_model(NativeFunctionType)(FunctionModel)


@unbox(NativeFunctionType)
def _unbox_native_function(typ, obj, c):
    fn = cgutils.create_struct_proxy(typ)(c.context, c.builder)
    addr = lower_get_wrapper_address(
        c.context, c.builder, obj, typ.signature, failure_mode="return_null"
    )
    fn.c_addr = c.pyapi.long_as_voidptr(addr)
    c.pyapi.decref(addr)
    fn.py_addr = c.builder.ptrtoint(obj, c.context.get_value_type(types.voidptr))
    mod = c.pyapi.import_module(c.context.insert_const_string(c.builder.module, __name__))
    get = c.pyapi.object_getattr_string(mod, "_jit_address_of")
    c.pyapi.decref(mod)
    addr = c.pyapi.call_function_objargs(get, (obj,))
    c.pyapi.decref(get)
    with c.builder.if_then(cgutils.is_null(c.builder, addr), likely=False):
        c.builder.ret(c.pyapi.get_null_object())
    fn.jit_addr = c.pyapi.long_as_voidptr(addr)
    c.pyapi.decref(addr)
    return NativeValue(fn._getvalue())


def _jit_address_of(obj):
    """The native entry of a :class:`KernelPointer`; 0 (none: numba calls the C wrapper)
    for another object that gives a wrapper address."""
    return obj.jit_address() if isinstance(obj, KernelPointer) else 0


class KernelPointer(types.WrapperAddressProtocol):
    """A compiled kernel's entry for one signature, as a function pointer that compiled code
    takes as an argument (numba's ``FunctionType``) and calls indirectly.

    A kernel that calls another links the callee's code into its own and optimizes the
    whole again: a deep composition (loop -> tick -> laws -> IK) recompiles every level
    below it, and every new specialisation of the top recompiles all of it.  Called through
    a pointer, the callee is compiled (and cached) once on its own, and the caller compiles
    only a call.  The pointer carries the kernel's native entry (:class:`NativeFunctionType`):
    the call costs what a direct call between compiled functions costs.
    """

    def __init__(self, target, sig):
        self._target = target  # a SignatureOnFirstCall, a LazyKernel or a numba dispatcher
        self._sig = sig
        self._addr = None
        self._jit_addr = None
        self._type = NativeFunctionType(sig)

    def __wrapper_address__(self):
        # resolved at the first call (compiled, or loaded from the cache, then), not when
        # made: a caller can be typed, and compiled, before the kernel is
        if self._addr is None:
            self._addr = _get_wrapper_address(dispatcher_for(self._target, self._sig), self._sig)
        return self._addr

    def jit_address(self):
        """The kernel's native entry (numba's calling convention), resolved at the first
        call like :meth:`__wrapper_address__`."""
        if self._jit_addr is None:
            target = dispatcher_for(self._target, self._sig)
            self._jit_addr = _get_jit_address(target, self._sig)  # 0 unless numba's dispatcher
        return self._jit_addr

    def signature(self):
        return self._sig

    @property
    def kernel(self):
        """What the pointer calls (a ``SignatureOnFirstCall``, or a numba dispatcher)."""
        return self._target

    def __repr__(self):
        return f"<kernel pointer {self._target.py_func.__qualname__}{self._sig}>"


@typeof_impl.register(KernelPointer)
def _typeof_pointer(val, c):
    """Built once per pointer (numba's generic rule rebuilds the type at every call)."""
    return val._type


class SignatureOnFirstCall:
    """A kernel compiled with an explicit signature taken from the types of its arguments
    (some typed as given, e.g. numba ``FunctionType`` for a callback), one compilation (or
    cache load) per distinct set of argument types; ``returns`` the result's numba type.

    numba caches a kernel that takes a compiled callback only when the callback's argument
    has a ``FunctionType`` in an explicit signature (a dispatcher passed as a plain argument
    becomes a dynamic global, which cannot be cached); a kernel whose other arguments are
    named tuples of arrays is impractical to type by hand.  This types them from the call.
    :meth:`pointer` gives the kernel for given arguments as a :class:`KernelPointer`.
    """

    def __init__(self, py_func, fixed, options, returns=None):
        self.py_func = py_func
        self.fixed = dict(fixed)
        self.options = options
        self.returns = types.none if returns is None else returns
        self._compiled = {}
        functools.update_wrapper(self, py_func)

    def signature(self, *args):
        """numba's signature of the kernel for these arguments."""
        tys = tuple(self.fixed.get(i, None) or typeof(a) for i, a in enumerate(args))
        return self.returns(*tys)

    def compile(self, sig):
        """numba's dispatcher for ``sig`` (compiled, or loaded from the cache, now)."""
        d = self._compiled.get(sig.args)
        if d is None:
            with kernel_lock(_kernel_name(self.py_func, sig)):
                d = njit(sig, **self.options)(self.py_func)
            self._compiled[sig.args] = d
        return d

    def dispatcher(self, *args):
        """numba's dispatcher for these arguments' types (compiled or loaded now).  Typing
        named tuples costs about a millisecond: a caller that calls often with arguments of
        the same types keeps the dispatcher and calls it directly."""
        return self.compile(self.signature(*args))

    def pointer(self, *args) -> KernelPointer:
        """The kernel for these arguments' types as a :class:`KernelPointer` (compiled at
        its first call)."""
        return KernelPointer(self, self.signature(*args))

    def __call__(self, *args):
        return self.dispatcher(*args)(*args)


def dispatcher_for(kernel, sig):
    """numba's dispatcher of ``kernel`` for ``sig``, compiled or loaded from the cache now:
    a :class:`SignatureOnFirstCall` compiles for ``sig``; a :class:`LazyKernel` (its
    signature fixed) or a numba dispatcher is what it is."""
    return kernel.compile(sig) if isinstance(kernel, SignatureOnFirstCall) else compiled(kernel)


def param_array(x, dtype=float):
    """``x`` as a C-contiguous, read-only array of ``dtype``, for a kernel's parameter block.

    numba types a read-only array apart from a writable one, and a kernel taking a block
    is compiled once per distinct set of its members' types.  Whether
    ``np.ascontiguousarray`` of a model's array is read-only depends on where that array
    came from (a frozen model's own array is returned as is; a converted one is a fresh,
    writable copy), so the same system built two ways compiled the closed loop twice.
    Every array of a parameter block goes through here: the block's type then depends on
    the system's structure only.  A view is returned when ``x`` already qualifies (its
    owner may still update it)."""
    a = np.ascontiguousarray(x, dtype=dtype)
    if a.flags.writeable:
        a = a.view()
        a.flags.writeable = False
    return a


def signature_on_first_call(fixed, returns=None, **options):
    """Decorator: :class:`SignatureOnFirstCall` with ``fixed`` ``{argument index: numba
    type}``, the result type ``returns`` (None: no result) and ``numba.njit`` options."""

    def wrap(py_func):
        return SignatureOnFirstCall(py_func, fixed, options, returns)

    return wrap


class TypedCall:
    """A :class:`SignatureOnFirstCall` kernel called often with the same large tuples,
    without numba typing every argument at every call.

    numba's dispatcher types each argument at each call to choose the compiled version:
    arrays and scalars quickly (in C), but a named tuple in Python, element by element: the
    closed loop's blocks (hundreds of arrays) cost about 2 ms a call.  A tuple cannot be
    changed, and neither can the type of an array in it (its dtype, dimensions and layout),
    so a tuple object's type is fixed for its life: each is typed once (the last
    ``keep`` tuples are remembered, with a reference so that their ``id`` stays theirs),
    the other arguments at every call, and the compiled version for the resulting types is
    called through numba's entry point (compiled, or loaded from the cache, at the first
    call with those types: :meth:`SignatureOnFirstCall.compile`).
    """

    def __init__(self, kernel: SignatureOnFirstCall, keep: int = 32):
        self._kernel = kernel
        self._keep = int(keep)
        self._tuples = OrderedDict()  # id -> (the tuple, its numba type)
        self._entries = {}  # argument types -> numba's entry point

    def _type(self, i, arg):
        fixed = self._kernel.fixed.get(i)
        if fixed is not None:
            return fixed
        if not isinstance(arg, tuple):
            return typeof(arg)
        hit = self._tuples.get(id(arg))
        if hit is None or hit[0] is not arg:
            hit = self._tuples[id(arg)] = (arg, typeof(arg))
            if len(self._tuples) > self._keep:
                self._tuples.popitem(last=False)
        else:
            self._tuples.move_to_end(id(arg))
        return hit[1]

    def signature(self, *args):
        """numba's signature of the kernel for these arguments (as
        :meth:`SignatureOnFirstCall.signature`, the tuples typed once)."""
        return self._kernel.returns(*(self._type(i, a) for i, a in enumerate(args)))

    def __call__(self, *args):
        tys = tuple(self._type(i, a) for i, a in enumerate(args))
        entry = self._entries.get(tys)
        if entry is None:
            sig = self._kernel.returns(*tys)
            entry = self._entries[tys] = self._kernel.compile(sig).overloads[tys].entry_point
        return entry(*args)
