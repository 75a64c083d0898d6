"""dqspace.control."""
