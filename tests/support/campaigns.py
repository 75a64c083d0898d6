"""Scenario files for campaign tests that need a fast system with dispersions."""

from importlib import resources
from pathlib import Path


def ur5_with_dispersions(folder):
    """A scenario file in ``folder``: the embedded ur5-waypoints (its kernels are the fast
    ones) with a disturbance force and the base's mass dispersed."""
    base = resources.files("dqspace.scenarios") / "data" / "ur5-waypoints.toml"
    f = Path(folder) / "ur5-dispersed.toml"
    f.write_text(
        f'include = "{Path(str(base)).as_posix()}"\n[scenario]\nname = "ur5-dispersed"\n'
        "[dispersions]\n"
        '"disturbance.force" = { dist = "uniform", low = -0.5, high = 0.5 }\n'
        '"plant.base_mass_error" = { dist = "normal", sigma = 0.05 }\n'
    )
    return f
