"""Loading scenarios: a file path or an embedded name, plus ``--set`` overrides."""

from dataclasses import dataclass
from pathlib import Path

from .config import (
    ScenarioError,
    apply_overrides,
    dumps_toml,
    embedded_path,
    load_toml,
    validate,
)
from .schema import SCHEMA

__all__ = ["Scenario", "load_scenario"]


@dataclass(frozen=True)
class Scenario:
    """A resolved scenario: every key present (defaults filled in) and validated.

    Attributes
    ----------
    config : dict section -> {key: value} (``faults``: a list of tables)
    source : str, the file it came from (with the overrides applied)
    """

    config: dict
    source: str

    @property
    def name(self):
        return self.config["scenario"]["name"]

    def to_toml(self):
        """The resolved scenario as TOML (what ``dqspace show`` prints)."""
        return dumps_toml(self.config, SCHEMA)


def load_scenario(name_or_path, overrides=()):
    """Load, override and validate a scenario.

    Parameters
    ----------
    name_or_path : str or Path, a TOML file or the name of an embedded scenario
        (``"station-keeping"``, ``"dynamics-check"``)
    overrides : sequence of ``"section.key=value"`` (TOML values)

    Raises
    ------
    ScenarioError (a ValueError) naming the file and the key.
    """
    p = Path(name_or_path)
    path = p if p.suffix == ".toml" or p.is_file() else embedded_path(str(name_or_path))
    doc = load_toml(path)
    source = str(path)
    if overrides:
        doc = apply_overrides(doc, overrides)
        source += " (with " + ", ".join(overrides) + ")"
    cfg = validate(doc, SCHEMA, source)
    _cross_checks(cfg, source)
    return Scenario(cfg, source)


def _cross_checks(cfg, source):
    """Constraints between keys."""
    dt = cfg["integrator"]["dt"]
    period = 1.0 / cfg["control"]["rate"]
    n = period / dt
    if abs(n - round(n)) > 1e-9 or round(n) < 1:
        raise ScenarioError(
            f"{source}: control.rate = {cfg['control']['rate']} Hz: the control "
            f"period must be a whole number of integrator.dt = {dt} s steps"
        )
    T = cfg["scenario"]["duration"]
    if abs(T / period - round(T / period)) > 1e-9:
        raise ScenarioError(
            f"{source}: scenario.duration = {T} s must be a whole number of "
            f"control periods ({period} s)"
        )
    tc = cfg["thrusters"]
    if tc["enabled"] and tc["pwm"] and tc["min_impulse_bit"] > tc["max_thrust"] * period:
        raise ScenarioError(
            f"{source}: thrusters.min_impulse_bit = {tc['min_impulse_bit']} N s "
            f"exceeds max_thrust * control period"
        )
    fmt = [f.strip() for f in cfg["outputs"]["formats"].split(",") if f.strip()]
    bad = [f for f in fmt if f not in ("png", "pdf")]
    if bad:
        raise ScenarioError(f"{source}: outputs.formats: unknown format {bad[0]!r} (png, pdf)")
    for i, f in enumerate(cfg["faults"]):
        if f["thruster"] >= 12:
            raise ScenarioError(
                f"{source}: faults[{i}].thruster = {f['thruster']} is out of "
                f"range (the thruster set has 12 thrusters: 0..11)"
            )
