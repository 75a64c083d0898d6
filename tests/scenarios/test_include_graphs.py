"""``include`` graphs that repeat files are read once per file, with a limit on the files
and the depth: a chain whose every level includes the next twice read 2^depth files."""

import pytest

from dqspace.scenarios import load_scenario
from dqspace.scenarios.spec import scenario as S
from dqspace.scenarios.spec.config import ScenarioError


def _chain(folder, depth, copies=2):
    """f0 includes f1 ``copies`` times, ... down to f<depth>, which sets a [scenario] key;
    the top file includes station-keeping, then f0 (a later include wins)."""
    (folder / f"f{depth}.toml").write_text('[scenario]\ndescription = "bottom"\n')
    for k in range(depth - 1, -1, -1):
        names = ", ".join([f'"f{k + 1}.toml"'] * copies)
        (folder / f"f{k}.toml").write_text(f"include = [{names}]\n[integrator]\ndt = 0.001\n")
    top = folder / "top.toml"
    top.write_text(
        'include = ["' + str(S.embedded_path("station-keeping")) + '", "f0.toml"]\n'
        '[scenario]\nname = "chain"\n'
    )
    return top


def test_a_file_included_on_many_paths_is_read_once(tmp_path, monkeypatch):
    reads = []
    real = S.load_toml
    monkeypatch.setattr(S, "load_toml", lambda p: (reads.append(p), real(p))[1])
    sc = load_scenario(_chain(tmp_path, 12))  # 2^12 paths to the bottom file
    assert sc.config["scenario"]["description"] == "bottom"
    assert len(reads) == len(set(reads)) == 12 + 1 + 2  # f0..f12, top, station-keeping


def test_includes_deeper_than_the_limit_are_refused(tmp_path):
    with pytest.raises(ScenarioError, match=f"nested deeper than {S.MAX_INCLUDE_DEPTH} levels"):
        load_scenario(_chain(tmp_path, 30, copies=1))


def test_more_included_files_than_the_limit_are_refused(tmp_path):
    n = S.MAX_INCLUDE_FILES + 1
    for k in range(n):
        (tmp_path / f"p{k}.toml").write_text(f"[x{k}]\n")
    names = ", ".join(f'"p{k}.toml"' for k in range(n))
    (tmp_path / "top.toml").write_text(f"include = [{names}]\n")
    with pytest.raises(ScenarioError, match=f"includes more than {S.MAX_INCLUDE_FILES} files"):
        load_scenario(tmp_path / "top.toml")
