"""How the ``dqspace`` command ends: its exit codes and the user's errors (one line, exit 2).
Shared by the command line and the commands."""

import sys

__all__ = ["OK", "RUN_FAILED", "USER_ERROR", "NOT_MET", "UserError", "fail"]

#: exit codes
OK, RUN_FAILED, USER_ERROR = 0, 1, 2
#: exit code: requirements not met (``dqspace tune``: no feasible candidate)
NOT_MET = 3


class UserError(Exception):
    """A problem with what the user asked for: one line, exit 2."""


def fail(msg: str, code: int = USER_ERROR) -> int:
    """Print ``dqspace: error: <msg>`` on stderr; returns ``code``."""
    print(f"dqspace: error: {msg}", file=sys.stderr)
    return code
