"""Campaigns: sweeps over variants, Monte Carlo over dispersions, gain tuning."""
