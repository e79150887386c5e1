"""Assertions on config validation shared by the config tests."""

from __future__ import annotations

import pytest

from vcrbench.config import validate_config
from vcrbench.errors import VcrbenchError


def refused(config: dict, *fragments: str) -> str:
    """Validate ``config``, expect a :class:`VcrbenchError` whose message contains every
    fragment, and return the message."""
    with pytest.raises(VcrbenchError) as error:
        validate_config(config)
    for fragment in fragments:
        assert fragment in str(error.value), str(error.value)
    return str(error.value)
