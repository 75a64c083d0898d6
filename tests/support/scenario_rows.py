"""Table rows (``[[section]]``) as a resolved scenario has them, for tests that build a
scenario's configuration without a file."""

import copy

from dqspace.scenarios.spec.schema import SCHEMA


def schema_row(section, row):
    """``row`` completed with the schema's defaults for the keys it leaves out (a new
    optional key of the section then needs no change in the tests)."""
    fields = SCHEMA[section].fields
    return {**{k: copy.deepcopy(f.default) for k, f in fields.items() if not f.required}, **row}
