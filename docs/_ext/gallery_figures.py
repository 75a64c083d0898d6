"""A sphinx-gallery image scraper for figures made without pyplot.

``dqspace.scenarios.figures.plots`` returns bare :class:`matplotlib.figure.Figure` objects (no
pyplot, so no backend is chosen for the caller); sphinx-gallery's own matplotlib scraper
only sees pyplot's figures.  This one saves the bare figures an example keeps in a
variable (``fig = plot_tracking(res)``), each once, after the code block that made it.

It runs before the matplotlib scraper (``image_scrapers`` order): pyplot's figures still
have their manager then, so they are recognised and left to that scraper, also in later
blocks after pyplot has closed them.
"""

from matplotlib.figure import Figure
from sphinx_gallery.scrapers import figure_rst


def bare_figure_scraper(block, block_vars, gallery_conf):
    """Save the example's new bare figures; return their reST (sphinx-gallery's API)."""
    seen = block_vars.setdefault("dqspace_seen_figures", [])  # saved here, or pyplot's
    new = []
    for value in block_vars["example_globals"].values():
        if not isinstance(value, Figure) or any(value is fig for fig in seen):
            continue
        if value.canvas.manager is not None:  # pyplot's: the matplotlib scraper saves it
            seen.append(value)
        else:
            new.append(value)
    paths = []
    for fig, path in zip(new, block_vars["image_path_iterator"], strict=False):
        fig.savefig(path, dpi=100)
        seen.append(fig)
        paths.append(path)
    return figure_rst(paths, gallery_conf["src_dir"])
