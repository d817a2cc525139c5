"""Projections of a table to 2 or 3 dimensions: PCA (built in) and t-SNE (scikit-learn).

PCA centres the rows and takes the SVD ``X - mean = U S V^T``. The principal axes are
the rows of ``V^T`` (unit length, orthogonal, ordered by the variance they carry); a
row projects to ``(x - mean) V_k``. The variance along axis ``j`` is ``S_j^2 / (n - 1)``
and its share of the total is the *explained variance ratio*.

An axis is only defined up to sign. To make pictures repeatable each axis is flipped so
that its largest-magnitude loading is positive, the convention of scikit-learn's
``svd_flip(u_based_decision=False)``.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from rowbook.checks import ParameterHint
from rowbook.vectors.products import cross_product

__all__ = [
    "METHOD_NAMES",
    "PCA",
    "Method",
    "describe_projection",
    "flip_signs",
    "project",
    "tsne",
    "variance_shares",
]

Method = Literal["pca", "tsne", "none"]
METHOD_NAMES = {"pca": "PCA", "tsne": "t-SNE", "none": "raw coordinates"}  # for titles


def flip_signs(components: np.ndarray) -> np.ndarray:
    """Flip each row so that its largest-|value| entry is positive (first one on ties).

    Examples
    --------
    >>> flip_signs(np.array([[0.6, -0.8], [-0.8, -0.6]]))
    array([[-0.6,  0.8],
           [ 0.8,  0.6]])
    """
    components = np.asarray(components)  # (k, d)
    biggest = np.argmax(np.abs(components), axis=1)  # (k,)
    signs = np.sign(components[np.arange(len(components)), biggest])  # (k,)
    signs[signs == 0] = 1
    return components * signs[:, None]


class PCA:
    """Principal component analysis by SVD, with the scikit-learn fit contract.

    Parameters
    ----------
    n_components : int, default 2
        Number of axes to keep, ``1 <= n_components <= min(n_samples, n_features)``.

    Attributes
    ----------
    mean_ : (d,) column means of the fitted data.
    components_ : (k, d) principal axes, orthonormal rows, sign fixed by :func:`flip_signs`.
    explained_variance_ : (k,) variance along each axis, ``S^2 / (n - 1)``, descending.
    explained_variance_ratio_ : (k,) share of the total variance; sums to at most 1.
    singular_values_ : (k,) the singular values ``S`` of the centred data.

    Examples
    --------
    >>> X = np.array([[0.0, 0.0], [2.0, 0.0], [4.0, 0.0], [2.0, 1.0], [2.0, -1.0]])
    >>> pca = PCA(n_components=2).fit(X)
    >>> pca.components_
    array([[1., 0.],
           [0., 1.]])
    >>> pca.explained_variance_ratio_
    array([0.8, 0.2])
    >>> pca.transform([[3.0, 0.5]])
    array([[1. , 0.5]])
    """

    def __init__(self, n_components: int = 2) -> None:
        self.n_components = n_components

    def fit(self, X: np.ndarray) -> PCA:
        """Learn the mean and the principal axes of ``X`` (n, d); returns ``self``."""
        X = _as_matrix(X, "X")
        n, d = X.shape
        k = self.n_components
        if not isinstance(k, int | np.integer) or not 1 <= k <= min(n, d):
            raise ValueError(
                f"n_components must be an int in [1, min(n_samples, n_features)] = "
                f"[1, {min(n, d)}] for data of shape {X.shape}, got {k!r}"
            )
        if n < 2:
            raise ValueError(f"PCA needs at least 2 rows to measure variance, got {n}")
        mean = X.mean(axis=0)  # (d,)
        S, Vt = _singular(X - mean)  # S (r,), Vt (r, d)
        variance = S**2 / (n - 1)  # (r,)
        total = variance.sum()
        self.mean_ = mean
        self.components_ = flip_signs(Vt[:k])  # (k, d)
        self.singular_values_ = S[:k]
        self.explained_variance_ = variance[:k]
        self.explained_variance_ratio_ = variance[:k] / total if total > 0 else np.zeros(k)
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        """Coordinates of the rows of ``X`` (m, d) on the fitted axes: (m, k)."""
        if not hasattr(self, "components_"):
            raise RuntimeError("this PCA is not fitted yet; call fit(X) first")
        X = _as_matrix(X, "X")
        if X.shape[1] != self.mean_.shape[0]:
            raise ValueError(
                f"X has {X.shape[1]} features, but this PCA was fitted on {self.mean_.shape[0]}"
            )
        return (X - self.mean_) @ self.components_.T  # (m, k)

    def fit_transform(self, X: np.ndarray) -> np.ndarray:
        """``fit(X).transform(X)``."""
        return self.fit(X).transform(X)


#: Above this many rows (and at least 8 per column) the axes come from the d x d Gram matrix.
GRAM_ROWS = 20_000


def _singular(centred: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Singular values ``S`` and right vectors ``Vt`` of ``centred`` (n, d), largest first.

    A tall table (``n > GRAM_ROWS``, ``n >= 8 d``) takes them from the eigenvectors of the
    d x d matrix ``X^T X`` (eigenvalues ``S^2``, the product by
    :func:`rowbook.vectors.products.cross_product`): one pass over the rows, instead of an SVD
    that also builds the (n, d) left vectors (7.7 s against 0.3 s for 100,000 x 100 on this
    busy 2-core machine). Squaring costs precision only in the smallest components, which a
    picture never draws.
    """
    n, d = centred.shape
    if n <= GRAM_ROWS or n < 8 * d:
        _, S, Vt = np.linalg.svd(centred, full_matrices=False)
        return S, Vt
    values, vectors = np.linalg.eigh(cross_product(centred, centred))  # ascending, (d,), (d, d)
    order = np.argsort(values)[::-1]
    return np.sqrt(np.clip(values[order], 0.0, None)), vectors[:, order].T


def tsne(
    X: np.ndarray, n_components: int = 2, *, perplexity: float | None = None, seed: int = 0
) -> np.ndarray:
    """t-SNE coordinates (n, n_components) via scikit-learn (the ``viz`` extra).

    ``perplexity`` defaults to ``min(30, (n - 1) / 3)`` (at least 1), which keeps it below
    ``n`` as t-SNE requires; initialisation is PCA and ``seed`` fixes the result.
    """
    try:
        from sklearn.manifold import TSNE
    except ImportError:
        raise ImportError(
            't-SNE needs scikit-learn; install it with: pip install "rowbook[viz]" '
            "(or use method='pca')"
        ) from None
    X = _as_matrix(X, "X")
    n = len(X)
    if n < 3:
        raise ParameterHint("method", "pca", f"t-SNE needs at least 3 rows, got {n}")
    if perplexity is None:
        perplexity = max(1.0, min(30.0, (n - 1) / 3))
    if not 0 < perplexity < n:
        raise ValueError(f"perplexity must be in (0, n_samples={n}), got {perplexity}")
    model = TSNE(n_components=n_components, perplexity=perplexity, init="pca", random_state=seed)
    return model.fit_transform(X).astype(np.float64)  # (n, k)


def project(
    X: np.ndarray, n_components: int = 2, *, method: Method = "pca", seed: int = 0
) -> tuple[np.ndarray, list[str]]:
    """Project ``X`` (n, d) to ``n_components`` axes; returns ``(coords, axis_names)``.

    ``method="pca"`` names the axes ``"PC1 (62.5%)"`` etc. (share of variance),
    ``"tsne"`` calls :func:`tsne`, and ``"none"`` uses the columns as they are (``d``
    must equal ``n_components``).

    Examples
    --------
    >>> coords, names = project(np.array([[0.0, 0.0], [2.0, 0.0], [1.0, 1.0]]), 1)
    >>> coords.ravel(), names
    (array([-1.,  1.,  0.]), ['PC1 (75.0%)'])
    """
    X = _as_matrix(X, "X")
    if method == "pca":
        pca = PCA(n_components=n_components).fit(X)
        names = [f"PC{j + 1} ({100 * r:.1f}%)" for j, r in enumerate(pca.explained_variance_ratio_)]
        return pca.transform(X), names
    if method == "tsne":
        return tsne(X, n_components, seed=seed), [f"t-SNE {j + 1}" for j in range(n_components)]
    if method == "none":
        if X.shape[1] != n_components:
            raise ValueError(
                f"method='none' draws the columns as they are, so the data needs {n_components} "
                f"columns, got {X.shape[1]}; use method='pca'"
            )
        return X.copy(), [f"x{j + 1}" for j in range(n_components)]
    raise ValueError(f"method must be 'pca', 'tsne' or 'none', got {method!r}")


def _as_matrix(X: np.ndarray, name: str) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D (n_samples, n_features) array, got shape {X.shape}")
    return X


def variance_shares(X: np.ndarray, coords: np.ndarray) -> list[float]:
    """Share of the total variance of ``X`` (n, d) along each column of ``coords`` (n, k).

    For PCA coordinates this is the explained variance ratio of each axis.

    Examples
    --------
    >>> X = np.array([[0.0, 0.0], [2.0, 0.0], [4.0, 0.0], [2.0, 1.0], [2.0, -1.0]])
    >>> variance_shares(X, project(X, 2)[0])
    [0.8, 0.2]
    """
    total = float(np.asarray(X, dtype=np.float64).var(axis=0).sum())
    spread = np.asarray(coords, dtype=np.float64).var(axis=0)  # (k,)
    return [round(float(v) / total, 12) if total > 0 else 0.0 for v in spread]


def describe_projection(method: Method, dims: int, shares: list[float] | None = None) -> str:
    """What a picture's axes are, for its title: the method, the axes and the variance shown.

    Examples
    --------
    >>> describe_projection("pca", 2, [0.3, 0.11, 0.05])
    'PCA 2-D, 41% variance'
    >>> describe_projection("tsne", 3)
    't-SNE 3-D'
    """
    text = f"{METHOD_NAMES[method]} {dims}-D"
    if method == "pca" and shares is not None:
        text += f", {100 * sum(shares[:dims]):.0f}% variance"
    return text
