"""A user's base controller for ``bench_scenario.py``: the built-in dual PD with feedforward
as a class of the user's own (``base_controller.law = "bench_scenario_user:Base"``), which the
runner cannot compile, so the run takes its Python loop over the same kernels."""

from dqspace.control import BaseController


class Base(BaseController):
    """The built-in base law, behind a user's class."""
