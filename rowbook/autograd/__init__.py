"""A small reverse-mode autograd engine on NumPy arrays."""

from rowbook.autograd import ops
from rowbook.autograd.engine import backward, grad
from rowbook.autograd.gradcheck import GradcheckError, gradcheck
from rowbook.autograd.sparse import RowSparse, gather_rows, scatter_add_rows
from rowbook.autograd.tensor import Tensor, as_tensor, is_grad_enabled, no_grad

__all__ = [
    "GradcheckError",
    "RowSparse",
    "Tensor",
    "as_tensor",
    "backward",
    "gather_rows",
    "grad",
    "gradcheck",
    "is_grad_enabled",
    "no_grad",
    "ops",
    "scatter_add_rows",
]
