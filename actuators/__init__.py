"""dqspace.actuators."""
