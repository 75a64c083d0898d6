"""How the ``dqspace`` command ends: its exit codes and the user's errors (one line, exit 2).
Shared by the command line and the commands.

Exit codes: :data:`OK` 0 (success: every requirement MET, or none judged); :data:`RUN_FAILED`
1 (a run failed or was interrupted, a campaign with failed runs); :data:`USER_ERROR` 2 (bad
input); :data:`NOT_MET` 3 (``run`` and ``montecarlo``: a requirement is NOT MET);
:data:`UNDECIDED` 4 (no requirement NOT MET, but one UNDECIDED: the campaign's runs do not
decide it at its confidence, or a single run has no value of the metric).  ``--no-fail``
turns 3 and 4 into 0; 1 comes before 3 and 4.
"""

import sys

__all__ = ["OK", "RUN_FAILED", "USER_ERROR", "NOT_MET", "UNDECIDED", "UserError", "fail"]

#: exit codes (3: a requirement NOT MET, or ``dqspace tune`` found no feasible candidate)
OK, RUN_FAILED, USER_ERROR, NOT_MET, UNDECIDED = 0, 1, 2, 3, 4


class UserError(Exception):
    """A problem with what the user asked for: one line, exit 2."""


def fail(msg: str, code: int = USER_ERROR) -> int:
    """Print ``dqspace: error: <msg>`` on stderr; returns ``code``."""
    print(f"dqspace: error: {msg}", file=sys.stderr)
    return code
