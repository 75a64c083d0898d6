"""Sphinx configuration of the dqspace documentation site.

Build from the repository root (``pip install -e ".[docs]"`` first)::

    sphinx-build -b html docs docs/_build/html

The pages are the Markdown files of this folder (MyST), the API reference under ``api/``
(autosummary pages generated into ``api/generated/``) and the example gallery built from
``../examples`` into ``auto_examples/`` (the examples run during the build).  Generated
folders and ``_build`` are not kept in git.
"""

import os
import sys
from pathlib import Path

import matplotlib
from sphinx.errors import PycodeError
from sphinx.pycode import ModuleAnalyzer

import dqspace

matplotlib.use("Agg")  # the gallery's examples draw without a display
sys.path.insert(0, str(Path(__file__).parent / "_ext"))  # gallery_figures

project = "dqspace"
author = "dqspace developers"
copyright = "2026, dqspace developers"
release = dqspace.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = [
    "_build",
    "**.ipynb_checkpoints",
    # sphinx-gallery's own outputs that are not pages
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "auto_examples/*.zip",
    "auto_examples/*.md5",
    "auto_examples/*.codeobj.json",
]

# -- MyST: the Markdown pages also read as plain Markdown on GitHub --------------------------
# ``[text](page.md#some-heading)`` links resolve: headings h1-h3 get GitHub-style anchors
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

# -- API reference: autosummary + autodoc + numpydoc -----------------------------------------
autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"member-order": "bysource"}
# types are in the numpydoc "Parameters" sections; hints in signatures only add noise
autodoc_typehints = "none"
autodoc_inherit_docstrings = True
# the page's table of contents lists ``identity()``, not ``DualQuaternion.identity()``
toc_object_entries_show_parents = "hide"
# numpydoc renders the docstrings' sections; members come from the class template
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_show_inherited_class_members = False
numpydoc_xref_param_type = False
numpydoc_validation_checks = set()
numpydoc_attributes_as_param_list = True

# -- HTML: the PyData theme --------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"dqspace {release}"
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_depth": 3,
    "header_links_before_dropdown": 4,
    "show_prev_next": True,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version", "theme-version"],
    "secondary_sidebar_items": ["page-toc", "sourcelink"],
}
html_show_sourcelink = False
html_last_updated_fmt = None
html_static_path = ["_static"]
html_css_files = ["dqspace.css"]

# -- Example gallery: ../examples/plot_*.py run during the build -------------------------
sphinx_gallery_conf = {
    "examples_dirs": os.path.join("..", "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "within_subsection_order": "FileNameSortKey",
    "remove_config_comments": True,
    "download_all_examples": False,
    "show_signature": False,
    # a failing example fails the build
    "abort_on_example_error": False,
    "only_warn_on_example_error": False,
    "matplotlib_animations": False,
    # the bare Figures that dqspace.scenarios.figures.plots returns, then pyplot's figures
    "image_scrapers": ("gallery_figures.bare_figure_scraper", "matplotlib"),
    "capture_repr": ("_repr_html_", "__repr__"),
    "reset_modules": ("matplotlib",),
    "min_reported_time": 0,
    "write_computation_times": False,
}


# -- Constants: their ``#:`` comment where they are defined --------------------------------
# A package re-exports a constant (``dqspace.control.IIWA_JOINT_LIMITS`` is defined in
# ``dqspace.control.ik``); autodoc looks for its ``#:`` comment in the package, finds
# none and falls back to the docstring of the value's type (numpy.ndarray, float).


def _defining_comment(short_name, value):
    """The ``#:`` comment of ``short_name`` in the dqspace module that assigns it, or []."""
    for modname in sorted(sys.modules):
        module = sys.modules[modname]
        if not modname.startswith("dqspace.") or module is None:
            continue
        if getattr(module, short_name, None) is not value:
            continue
        try:
            docs = ModuleAnalyzer.for_module(modname).find_attr_docs()
        except PycodeError:
            continue
        if ("", short_name) in docs:
            return [line for line in docs[("", short_name)] if line is not None]
    return []


def _constant_docstring(app, what, name, obj, options, lines):
    if what != "data" or not name.startswith("dqspace."):
        return
    lines[:] = _defining_comment(name.rsplit(".", 1)[1], obj)


def setup(app):
    # before numpydoc (priority 500) reformats the lines
    app.connect("autodoc-process-docstring", _constant_docstring, priority=400)
