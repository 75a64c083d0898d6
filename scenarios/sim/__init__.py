"""Simulation: the plant side of the closed loop (the plant boundary, the loop over ticks),
the runner, the recorded series and the metrics."""
