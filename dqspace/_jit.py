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

from numba import njit
from numba.core.typing.typeof import typeof_impl

__all__ = ["LazyKernel", "lazy_njit", "compiled", "SignatureOnFirstCall", "signature_on_first_call"]

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
            d = self._dispatcher = njit(self._signature, **self._options)(self.py_func)
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


class SignatureOnFirstCall:
    """A kernel compiled with an explicit signature taken from the types of its first call's
    arguments, with some arguments typed as given (e.g. numba ``FunctionType`` for a
    callback), one compilation (or cache load) per distinct set of argument types.

    numba caches a kernel that takes a compiled callback only when the callback's argument
    has a ``FunctionType`` in an explicit signature (a dispatcher passed as a plain argument
    becomes a dynamic global, which cannot be cached); a kernel whose other arguments are
    named tuples of arrays is impractical to type by hand.  This types them from the call.
    """

    def __init__(self, py_func, fixed, options):
        self.py_func = py_func
        self.fixed = dict(fixed)
        self.options = options
        self._compiled = {}
        functools.update_wrapper(self, py_func)

    def dispatcher(self, *args):
        """numba's dispatcher for these arguments' types (compiled or loaded now).  Typing
        named tuples costs about a millisecond: a caller that calls often with arguments of
        the same types keeps the dispatcher and calls it directly."""
        from numba import typeof, types

        tys = tuple(self.fixed.get(i, None) or typeof(a) for i, a in enumerate(args))
        d = self._compiled.get(tys)
        if d is None:
            d = self._compiled[tys] = njit(types.none(*tys), **self.options)(self.py_func)
        return d

    def __call__(self, *args):
        return self.dispatcher(*args)(*args)


def signature_on_first_call(fixed, **options):
    """Decorator: :class:`SignatureOnFirstCall` with ``fixed`` ``{argument index: numba
    type}`` and ``numba.njit`` options."""

    def wrap(py_func):
        return SignatureOnFirstCall(py_func, fixed, options)

    return wrap
