"""Every load of a received directory is bounded absolutely (issue 25): "a 2 MB series.npz
in a Monte Carlo directory inflated to 22 GB when plotted; the cap on inflation trusted
the manifest, which is part of the same directory".

A zip bomb in each entry point (``dqspace plot``, ``dqspace report``, ``dqspace animate``,
``Results.load``, a Monte Carlo directory's loaders): an archive whose header announces
its true, huge size; one whose header announces less than it holds; one whose header
announces more than the limit.  The limit (``DQSPACE_MAX_LOAD_BYTES``) comes from nothing
in the directory, and the error names the file, the limit and the variable."""

import shutil
import struct
import tracemalloc
import zipfile

import _fault_helpers as fh
import numpy as np
import pytest

from dqspace import _env
from dqspace.scenarios import Results, load_scenario
from dqspace.scenarios.campaigns.montecarlo import load_envelope_series, montecarlo
from dqspace.scenarios.cli import main
from dqspace.scenarios.figures.campaign_plots import plot_montecarlo
from dqspace.scenarios.store import received
from dqspace.scenarios.store.received import (
    DEFAULT_MAX_LOAD_BYTES,
    LOAD_LIMIT_VARIABLE,
    MAX_MEMBERS,
    LoadLimitError,
    ResultError,
    max_load_bytes,
    read_npz,
)

VAR = LOAD_LIMIT_VARIABLE
MIB = 1 << 20
WIDE = 838_861  # columns of the bomb's series: 10 samples of it are 64 MiB


def declare_size(path, member, size):
    """Make the archive's central directory announce ``size`` bytes for ``member`` (its
    data unchanged): a header that lies."""
    raw = bytearray(path.read_bytes())
    i = raw.find(b"PK\x01\x02")
    while i >= 0:
        n, m, k = struct.unpack_from("<HHH", raw, i + 28)
        if raw[i + 46 : i + 46 + n].decode() == member:
            struct.pack_into("<I", raw, i + 24, size)
            path.write_bytes(bytes(raw))
            return
        i = raw.find(b"PK\x01\x02", i + 46 + n + m + k)
    raise AssertionError(f"no member {member}")


def _header_bytes(shape):
    import io

    buf = io.BytesIO()
    header = np.lib.format.header_data_from_array_1_0(np.zeros((0,), "<f8"))
    header["shape"] = tuple(shape)
    np.lib.format.write_array_header_1_0(buf, header)
    return len(buf.getvalue())


def bomb(path, kind, t, name="x", width=WIDE):
    """An archive of ``t`` and a series ``name`` of ``len(t)`` samples of ``width`` values:

    * ``"honest"``: 64 MiB of zeros in ~64 kB, the header announcing its true size;
    * ``"announces less"``: the header of a series of 4 values, announcing its size, over
      64 MiB of zeros (the data hold more than the header says);
    * ``"announces 4 GiB"``: a series of 4 values whose header announces 4 GiB;
    * ``"announces 100 GiB"``: the same announcing 100 GiB (beyond the default limit).
    """
    n = len(t)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        fh.write_npy_member(zf, "t", (n,), data=np.asarray(t, "<f8").tobytes())
        if kind == "honest":
            fh.write_npy_member(zf, name, (n, width), nbytes=n * width * 8)
        elif kind == "announces less":
            fh.write_npy_member(zf, name, (n, 4), nbytes=64 * MIB)
        else:
            fh.write_npy_member(zf, name, (n, 4), nbytes=n * 4 * 8)
        if kind == "announces 100 GiB":  # in the central directory (zip64), what is read
            zf.getinfo(f"{name}.npy").file_size = 100 << 30
    if kind == "announces less":
        declare_size(path, f"{name}.npy", _header_bytes((n, 4)) + n * 4 * 8)
    elif kind == "announces 4 GiB":
        declare_size(path, f"{name}.npy", 0xFFFFFFFE)


def bomb_result(d, kind):
    """A result directory whose ``result.npz`` is a bomb and whose manifest matches it
    (announces the series' true size: the manifest is no defence)."""
    d.mkdir(parents=True, exist_ok=True)
    bomb(d / "result.npz", kind, np.arange(10) * 0.1)
    width = WIDE if kind == "honest" else 4
    if kind == "announces 4 GiB":
        width = 53_687_091  # the manifest allows the 4 GiB too
    fh.write_result_manifest(d, {"x": [width]})
    return d / "result.npz"


KINDS = ["honest", "announces less", "announces 4 GiB", "announces 100 GiB"]
#: the limit each kind is read under (None: the default), and what the error says
EXPECT = {
    "honest": ("1M", ["would inflate to 64 MiB", "load limit of 1 MiB", VAR]),
    "announces less": (None, ["damaged"]),
    "announces 4 GiB": ("1G", ["would inflate to 4 GiB", "load limit of 1 GiB", VAR]),
    "announces 100 GiB": (None, ["would inflate to 100 GiB", "load limit of", VAR]),
}


def _limit(monkeypatch, kind):
    value = EXPECT[kind][0]
    if value is None:
        monkeypatch.delenv(VAR, raising=False)
    else:
        monkeypatch.setenv(VAR, value)


def _bounded(fn, *args):
    """(exception raised by ``fn(*args)``, peak traced memory [bytes])."""
    tracemalloc.start()
    try:
        try:
            fn(*args)
        except Exception as exc:  # noqa: BLE001 - handed to the test
            return exc, tracemalloc.get_traced_memory()[1]
        raise AssertionError(f"{fn.__name__} read a zip bomb")
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("kind", KINDS)
def test_results_load_refuses_a_zip_bomb_within_the_absolute_limit(tmp_path, monkeypatch, kind):
    npz = bomb_result(tmp_path / "r", kind)
    _limit(monkeypatch, kind)
    exc, peak = _bounded(Results.load, tmp_path / "r")
    assert isinstance(exc, ResultError), exc
    assert str(exc).startswith(f"{npz}: ")
    for needle in EXPECT[kind][1]:
        assert needle in str(exc), str(exc)
    assert peak < 16 * MIB, f"{peak / MIB:.0f} MiB allocated"


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("command", ["plot", "report", "animate"])
def test_the_read_commands_refuse_a_zip_bomb_in_a_result(
    tmp_path, monkeypatch, capsys, kind, command
):
    npz = bomb_result(tmp_path / "r", kind)
    _limit(monkeypatch, kind)
    code = main([command, str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert str(npz) in err and "unexpected" not in err and "Traceback" not in err
    for needle in EXPECT[kind][1]:
        assert needle in err, err


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    out = tmp_path_factory.mktemp("mc") / "mc"
    sc = load_scenario("station-keeping", ["scenario.duration=0.2", "outputs.plots=false"])
    montecarlo(sc, 3, seed=2, out=out, scheduler="synchronous", progress=False)
    return out


def _bombed_campaign(campaign, tmp_path, kind):
    d = tmp_path / "mc"
    shutil.copytree(campaign, d)
    target = sorted((d / "variants").glob("*/series.npz"))[1]
    with np.load(target) as z:
        t = z["t"].copy()
    target.unlink()
    bomb(target, kind, t, name="ee_max", width=WIDE // 20)
    return d, target


@pytest.mark.parametrize("kind", KINDS)
def test_a_campaign_with_a_zip_bomb_series_is_refused_by_every_reader(
    campaign, tmp_path, monkeypatch, capsys, kind
):
    d, target = _bombed_campaign(campaign, tmp_path, kind)
    _limit(monkeypatch, kind)
    for load in (load_envelope_series, lambda d: plot_montecarlo(d, ("png",), tmp_path / "f")):
        exc, peak = _bounded(load, d)
        assert isinstance(exc, ResultError) and str(exc).startswith(f"{target}: "), exc
        for needle in EXPECT[kind][1]:
            assert needle.replace("64 MiB", "") in str(exc), str(exc)
        assert peak < 32 * MIB, f"{peak / MIB:.0f} MiB allocated"
    for command in ("plot", "report"):
        code = main([command, str(d), "--out", str(tmp_path / command / "x.html")])
        err = capsys.readouterr().err
        assert code == 2 and str(target) in err and VAR * (kind != "announces less") in err, err
        assert "unexpected" not in err and "Traceback" not in err


def test_the_limit_holds_for_a_whole_campaign_not_each_file(campaign, tmp_path, monkeypatch):
    """Many small archives add up: the limit is on one load."""
    sizes = [
        sum(i.file_size for i in zipfile.ZipFile(p).infolist())
        for p in sorted((campaign / "variants").glob("*/series.npz"))
    ]
    monkeypatch.setenv(VAR, str(sizes[0] + sizes[1] // 2))
    with pytest.raises(LoadLimitError, match=rf"already read\): more than the load limit .*{VAR}"):
        load_envelope_series(campaign)
    monkeypatch.setenv(VAR, str(sum(sizes)))
    assert len(load_envelope_series(campaign)[1]) == 3


def test_archives_of_too_many_or_too_deep_arrays_are_refused(tmp_path):
    many = tmp_path / "many.npz"
    with zipfile.ZipFile(many, "w") as zf:
        for i in range(MAX_MEMBERS + 1):
            zf.writestr(f"a{i}.npy", b"")
    with pytest.raises(LoadLimitError, match=f"holds {MAX_MEMBERS + 1} arrays, more than"):
        read_npz(many)
    deep = tmp_path / "deep.npz"
    np.savez(deep, t=np.zeros((1,) * 9))
    with pytest.raises(ResultError, match=r"series 't' has the shape \(1, 1, 1"):
        read_npz(deep)
    text = tmp_path / "text.npz"
    np.savez(text, t=np.array(["a", "b"]))
    with pytest.raises(ResultError, match="series 't' is <U1, not numbers"):
        read_npz(text)


def test_the_default_limit_is_documented_and_the_variable_raises_it(monkeypatch):
    monkeypatch.delenv(VAR, raising=False)
    limit, where = max_load_bytes()
    assert DEFAULT_MAX_LOAD_BYTES == 8 << 30
    assert (limit, where) == (DEFAULT_MAX_LOAD_BYTES, "the default") or (
        where == "half the physical memory" and limit < DEFAULT_MAX_LOAD_BYTES
    )
    monkeypatch.setenv(VAR, " 16G ")
    assert max_load_bytes() == (16 << 30, VAR)
    monkeypatch.setenv(VAR, "123456")
    assert max_load_bytes() == (123456, VAR)
    assert received.LoadBudget().limit == 123456


@pytest.mark.parametrize("text", ["abc", "nan", "-1", "0", "inf", "1e400", "12 parsecs"])
def test_a_bad_limit_is_refused_naming_the_variable(tmp_path, monkeypatch, capsys, text):
    bomb_result(tmp_path / "r", "announces 4 GiB")
    monkeypatch.setenv(VAR, text)
    with pytest.raises(ValueError, match=rf"{VAR} = .*expected a positive number of bytes"):
        Results.load(tmp_path / "r")
    assert main(["plot", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert f"{VAR} = " in err and "unexpected" not in err


@pytest.mark.parametrize(
    "text, value",
    [("4000000000", 4_000_000_000), ("512M", 512 << 20), ("1.5GiB", 3 << 29), ("2k", 2048)],
)
def test_byte_counts_are_read_with_binary_multiples(text, value):
    assert _env.parse_bytes(text) == value


def test_an_array_that_does_not_fit_in_memory_is_one_error(tmp_path, monkeypatch):
    path = tmp_path / "a.npz"
    np.savez(path, t=np.arange(4.0))

    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(received.np, "empty", no_memory)
    with pytest.raises(LoadLimitError, match=rf"do not fit in the memory left .*{VAR} lowers"):
        read_npz(path)
