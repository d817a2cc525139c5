"""Pictures of embedding tables: projections, PNG plots and an interactive HTML view.

* :mod:`rowbook.viz.points` -- the input contract: an (n, d) array plus labels, or a
  :class:`~rowbook.vectors.Vectors` plus words; groups or colours per point;
* :mod:`rowbook.viz.project` -- PCA on NumPy's SVD (deterministic signs) and t-SNE
  through scikit-learn (``pip install "rowbook[viz]"``);
* :mod:`rowbook.viz.labels` -- labels people can read: invisible characters shown, PNG
  labels placed so that none overlap (leader lines, the hidden ones counted);
* :mod:`rowbook.viz.plots` -- labelled scatter, cosine heatmap, training curves and the cost
  of a vocabulary as PNG
  (matplotlib, Agg, written atomically);
* :mod:`rowbook.viz.row_stats` -- which rows trained: updates against frequency rank,
  distance travelled against updates, the rows never touched (:class:`~rowbook.optim.RowStats`);
* :mod:`rowbook.viz.compare` -- what moved between two tables (:func:`rowbook.vectors.compare`);
* :mod:`rowbook.viz.html` -- one self-contained HTML file to rotate, zoom and hover in 2-D
  or 3-D, search, list a point's cosine neighbours and colour by metadata, with no network
  and no server;
* TensorBoard's Embedding Projector folders, written and read (a table's file format, in
  :mod:`rowbook.vectors.projector`; re-exported here);
* teaching pictures: :mod:`rowbook.viz.lookup` (the one-hot product, the rows a batch's
  gradient touches), :mod:`rowbook.viz.bpe_animation` (the BPE merges as a GIF),
  :mod:`rowbook.viz.toy_space` (a 3-D toy space with semantic clusters).
"""

from rowbook.vectors.projector import read_projector, write_projector
from rowbook.viz.bpe_animation import merge_frames, write_merge_animation
from rowbook.viz.compare import moved_figure, plot_moved
from rowbook.viz.html import embedding_html, write_html
from rowbook.viz.lookup import plot_one_hot, plot_touched_rows, touched_rows
from rowbook.viz.plots import (
    plot_scatter,
    plot_similarity,
    plot_training,
    plot_vocab_sweep,
    scatter_figure,
    similarity_figure,
    training_figure,
    vocab_sweep_figure,
)
from rowbook.viz.points import as_points, cosine_matrix, hue_colors
from rowbook.viz.project import PCA, project, tsne
from rowbook.viz.row_stats import plot_row_stats, row_stats_figure
from rowbook.viz.toy_space import plot_toy_space, toy_space

__all__ = [
    "PCA",
    "as_points",
    "cosine_matrix",
    "embedding_html",
    "hue_colors",
    "merge_frames",
    "moved_figure",
    "plot_moved",
    "plot_one_hot",
    "plot_row_stats",
    "plot_scatter",
    "plot_similarity",
    "plot_touched_rows",
    "plot_toy_space",
    "plot_training",
    "plot_vocab_sweep",
    "project",
    "read_projector",
    "row_stats_figure",
    "scatter_figure",
    "similarity_figure",
    "touched_rows",
    "toy_space",
    "training_figure",
    "tsne",
    "vocab_sweep_figure",
    "write_html",
    "write_merge_animation",
    "write_projector",
]
