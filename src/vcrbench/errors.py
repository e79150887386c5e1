"""The one exception type users see: a message that says what is wrong and what to do."""


class VcrbenchError(Exception):
    """Bad input or an unmet requirement, explained for the user (no traceback needed)."""
