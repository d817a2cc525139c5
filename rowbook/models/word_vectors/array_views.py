"""Array views that numba does not reference-count, for the hot loops of the training kernels.

Numba counts the references to every array it handles: each view (``W[t]``), each array
passed to an inlined helper, each array argument at a function's entry adds one to the
count of the array's memory and takes it away after, and both are atomic read-modify-write
instructions on one shared cache line. The minibatched skip-gram kernel made about a
hundred of them a window (its rows as views, its helpers inlined in loops): more than the
window's three products themselves (``docs/cores.md``). :func:`borrowed` gives a view of an
array with no memory to count (a null ``meminfo``, as numba's views of foreign memory have),
so that every count update on it is a test of a null pointer.

It is safe only for an array that the caller keeps alive for the whole call: a compiled
function's arguments (its caller holds them), never an array the function allocated, whose
last counted reference may be released as soon as it is borrowed.
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

__all__ = ["borrowed"]


@intrinsic
def borrowed(typingctx, array):  # pragma: no cover - compiled
    """``array`` (the same data, shape and strides) without a reference count: numba only.

    Only for an argument of the compiled function that borrows it (see the module's
    docstring); the view must not outlive the call (never returned or stored).
    """
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, signature, args):
        source = context.make_array(signature.args[0])(context, builder, args[0])
        view = context.make_array(signature.return_type)(context, builder)
        for field in ("nitems", "itemsize", "data", "shape", "strides"):
            setattr(view, field, getattr(source, field))
        view.meminfo = ir.Constant(source.meminfo.type, None)
        view.parent = ir.Constant(source.parent.type, None)
        return view._getvalue()

    return array(array), codegen
