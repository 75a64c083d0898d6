"""The flight software of one control tick: what runs on board between two plant periods.

* :mod:`~dqspace.control.flight.law` -- the controllers of a tick composed (arm law, base law
  with the arm-reaction feedforward, arm torques);
* :mod:`~dqspace.control.flight.actuation` -- the actuator decisions (momentum management,
  thruster allocation and pulse modulation, VSCMG steering, wheel distribution);
* :mod:`~dqspace.control.flight.navigation` -- sensors and filters: the state the
  controllers see.
"""
