"""Presentation: figures of a run and of campaigns, the animation, the HTML report and the
display units.  Reads what was recorded; never rebuilds the system."""
