"""dqspace.multibody."""
