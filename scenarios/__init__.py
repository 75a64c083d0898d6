"""dqspace.scenarios."""
