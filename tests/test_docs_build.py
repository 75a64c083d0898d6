"""The documentation site builds with warnings as errors and documents every public name.

One build per test session: ``sphinx-build -W --keep-going -b html`` (the same Python) on a
copy of ``docs/`` and ``examples/`` in a temporary folder -- the build writes its generated
pages (``api/generated``, ``auto_examples``) next to its sources, and a copy keeps the
checkout clean and stale generated pages out.  The gallery's examples run during the build.

The built site is then read back as a visitor or a tool would: the pages of ``docs/*.md``,
the Sphinx inventory ``objects.inv`` (parsed here, format version 2) against each package's
``__all__``, the links of every page, and the gallery's PNG figures.
"""

import importlib
import inspect
import os
import re
import shutil
import subprocess
import sys
import types
import zlib
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import numpy as np
import pytest
from PIL import Image

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
EXAMPLES = ROOT / "examples"
#: the packages whose every ``__all__`` name the API reference documents
PACKAGES = (
    "dqspace.dq",
    "dqspace.multibody",
    "dqspace.multibody.kernels",
    "dqspace.actuators",
    "dqspace.control",
    "dqspace.scenarios",
)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source"}
VOID |= {"track", "wbr"}


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    """(completed process, html folder) of one build of a copy of docs/ and examples/."""
    work = tmp_path_factory.mktemp("site")
    generated = shutil.ignore_patterns("_build", "generated", "auto_examples", "*.pyc")
    shutil.copytree(DOCS, work / "docs", ignore=generated)
    shutil.copytree(EXAMPLES, work / "examples", ignore=generated)
    html = work / "html"
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html"]
    env = {**os.environ, "MPLBACKEND": "Agg"}
    proc = subprocess.run(
        [*cmd, str(work / "docs"), str(html)],
        capture_output=True,
        text=True,
        timeout=1800,
        env=env,
        cwd=work,
    )
    return proc, html


@pytest.fixture(scope="module")
def html(build):
    proc, html = build
    assert proc.returncode == 0, f"sphinx-build failed:\n{proc.stdout[-3000:]}\n{proc.stderr}"
    return html


def test_sphinx_build_passes_with_warnings_as_errors(build):
    proc, html = build
    assert proc.returncode == 0, f"sphinx-build failed:\n{proc.stdout[-3000:]}\n{proc.stderr}"
    assert "build succeeded" in proc.stdout
    assert "WARNING" not in proc.stderr and "ERROR" not in proc.stderr
    assert (html / "index.html").is_file()


# -- the pages ---------------------------------------------------------------------------


class _Page(HTMLParser):
    """A built page: its ids, its links, its <h1> texts, its images, and the description
    of each documented object (the ``dd`` after a ``dt id=...``; a module's ``section``)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids, self.links, self.images, self.h1 = set(), [], [], []
        self.described = {}  # id -> text
        self._open = []  # [tag, key, parts] of the open elements
        self._after_dt = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])
        if tag == "img" and a.get("src"):
            self.images.append(a["src"])
        if tag in VOID:
            return
        key = None
        if tag == "dd" and self._after_dt:
            key = self._after_dt
        elif tag == "dt" and a.get("id"):
            key = "dt " + a["id"]
        elif tag == "h1":
            key = "h1 "
        elif tag == "section" and a.get("id"):
            key = "section " + a["id"]
        self._after_dt = None
        self._open.append([tag, key, []])

    def handle_endtag(self, tag):
        if tag in VOID or not any(t == tag for t, _, _ in self._open):
            return
        while self._open:
            t, key, parts = self._open.pop()
            text = "".join(parts)
            if key and key.startswith("dt "):
                self._after_dt = key[3:]
            elif key and key.startswith("h1 "):
                self.h1.append(text.replace("#", "").strip())
            elif key and key.startswith("section "):
                self.described[key[8:]] = text
            elif key:
                self.described[key] = text
            if t == tag:
                break

    def handle_data(self, data):
        for _, key, parts in self._open:
            if key:
                parts.append(data)


_pages = {}


def page(path):
    """The parsed page at ``path`` (cached)."""
    path = Path(path).resolve()
    if path not in _pages:
        p = _Page()
        p.feed(path.read_text(encoding="utf-8"))
        p.close()
        _pages[path] = p
    return _pages[path]


def _plain(text):
    """Heading text without Markdown code marks and with plain quotes and dashes."""
    table = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "–": "-", "—": "-"})
    return " ".join(text.replace("`", "").translate(table).split())


@pytest.mark.parametrize("md", sorted(p.name for p in DOCS.glob("*.md")))
def test_every_markdown_page_is_built_with_its_title(html, md):
    first_heading = next(
        line[2:] for line in (DOCS / md).read_text().splitlines() if line.startswith("# ")
    )
    built = html / md.replace(".md", ".html")
    assert built.is_file(), f"{md} was not built"
    assert _plain(page(built).h1[0]) == _plain(first_heading)


def test_the_index_links_the_guide_the_examples_and_the_api(html):
    links = {urlsplit(h).path for h in page(html / "index.html").links}
    assert {"guide.html", "auto_examples/index.html", "api/index.html"} <= links


def test_every_internal_link_resolves_to_a_page_and_anchor(html):
    broken = []
    for source in sorted(html.rglob("*.html")):
        for href in page(source).links:
            parts = urlsplit(href)
            if parts.scheme or parts.netloc or href.startswith(("mailto:", "javascript:")):
                continue  # outside the site (the build reaches no network to check them)
            target = (source.parent / unquote(parts.path)).resolve() if parts.path else source
            if not target.exists():
                broken.append(f"{source.relative_to(html)}: {href} (no such file)")
            elif parts.fragment and target.suffix == ".html":
                if unquote(parts.fragment) not in page(target).ids:
                    broken.append(f"{source.relative_to(html)}: {href} (no such anchor)")
    assert not broken, "\n".join(broken[:40])


# -- the API reference ----------------------------------------------------------------------


def read_inventory(path):
    """{name: (role, page, anchor)} of a Sphinx ``objects.inv`` (version 2)."""
    raw = path.read_bytes()
    header = raw.split(b"\n", 4)
    assert header[0] == b"# Sphinx inventory version 2", header[0]
    assert b"zlib" in header[3]
    text = zlib.decompress(header[4]).decode("utf-8")
    line_re = re.compile(r"(.+?)\s+(\S+)\s+(-?\d+)\s+?(\S*)\s+(.*)")
    out = {}
    for line in text.splitlines():
        m = line_re.match(line.rstrip())
        if not m:
            continue
        name, role, _, location, _ = m.groups()
        if location.endswith("$"):
            location = location[:-1] + name
        uri, _, anchor = location.partition("#")
        out.setdefault(name, []).append((role, uri, anchor))
    return out


def _roles(obj):
    """The inventory roles that document ``obj`` as what it is."""
    if isinstance(obj, types.ModuleType):
        return {"py:module"}
    if inspect.isclass(obj):
        return {"py:class", "py:exception"}
    if callable(obj):
        return {"py:function"}
    return {"py:data"}


def public_names():
    return [(pkg, name) for pkg in PACKAGES for name in importlib.import_module(pkg).__all__]


def test_the_api_reference_documents_every_public_name(html):
    inventory = read_inventory(html / "objects.inv")
    missing, wrong, undescribed = [], [], []
    for pkg, name in public_names():
        full = f"{pkg}.{name}"
        obj = getattr(importlib.import_module(pkg), name)
        entries = [e for e in inventory.get(full, []) if e[0] in _roles(obj)]
        if not entries:
            found = [e[0] for e in inventory.get(full, [])]
            (wrong if found else missing).append(f"{full} {found or ''}".strip())
            continue
        role, uri, anchor = entries[0]
        target = html / uri
        if not uri.startswith("api/") or not target.is_file():
            wrong.append(f"{full}: documented at {uri}, not in the API reference")
            continue
        built = page(target)
        text = built.described.get(anchor, "")
        if role == "py:module":
            text = text.replace(full, "").replace("#", "")
        if anchor not in built.ids or not text.strip():
            undescribed.append(f"{full} ({uri}#{anchor})")
    assert not missing, f"public names missing from the API reference: {missing}"
    assert not wrong, f"documented as the wrong kind or elsewhere: {wrong}"
    assert not undescribed, f"documented without a description: {undescribed}"


def test_the_api_reference_knows_a_function_class_module_and_constant(html):
    """The reader above, on known entries of each kind (an empty or misread inventory
    would fail here, not pass the check above vacuously)."""
    inventory = read_inventory(html / "objects.inv")
    expected = {
        "dqspace.dq.dq_mul": "py:function",
        "dqspace.dq.DualQuaternion": "py:class",
        "dqspace.multibody.models": "py:module",
        "dqspace.multibody.kernels.rnea": "py:function",
        "dqspace.actuators.PYRAMID_SKEW": "py:data",
        "dqspace.scenarios.RunFailed": "py:exception",
    }
    for name, role in expected.items():
        assert role in [e[0] for e in inventory[name]], (name, inventory.get(name))
    # a re-exported constant carries the comment written where it is defined
    described = page(html / "api/generated/dqspace.actuators.PYRAMID_SKEW.html").described
    assert "Skew angle of the standard pyramid" in described["dqspace.actuators.PYRAMID_SKEW"]


# -- the example gallery ------------------------------------------------------------------


def _png_is_a_figure(path):
    """A readable PNG of a real figure: a sensible size and not one flat colour."""
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE, f"{path.name} is not a PNG"
    with Image.open(path) as im:
        width, height = im.size
        grey = np.asarray(im.convert("L"), float)
    assert width >= 300 and height >= 200, f"{path.name}: {width}x{height}"
    # something is drawn: more than 1 % of the pixels differ from the background
    background = np.median(grey)
    assert np.mean(np.abs(grey - background) > 10) > 0.01, f"{path.name} is blank"


@pytest.mark.parametrize("example", sorted(p.stem for p in EXAMPLES.glob("plot_*.py")))
def test_every_example_page_shows_its_figures(html, example):
    built = html / "auto_examples" / f"{example}.html"
    assert built.is_file(), f"{example} has no gallery page"
    figures = [
        src for src in page(built).images if re.search(rf"sphx_glr_{example}_\d+\.png$", src)
    ]
    assert figures, f"{example}: no figure on its page"
    for src in figures:
        _png_is_a_figure((built.parent / src).resolve())
