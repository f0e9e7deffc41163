"""Errors a user can cause: each carries one sentence naming the cause and the fix.

May import: nothing.
"""

import logging
import sys
from collections.abc import Callable


class UserError(Exception):
    """An error with a message meant for the user as is (no traceback)."""


def run_reporting_user_errors(main: Callable[[], object], exit_code: int = 1) -> None:
    """Run `main`; a UserError is logged and printed as its one sentence and the process exits."""
    try:
        main()
    except UserError as exc:
        logging.getLogger("ingestbench").error("%s", exc)
        print(f"ERROR: {exc}", file=sys.stderr)
        sys.exit(exit_code)
