"""Scenario specification: the schema, reading and validating scenario files, overrides,
variants and dispersions.  The only code that reads a scenario dict."""
