"""Every browser test fails when the pages' Content-Security-Policy refused anything in it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.static.test_client import REFUSED_BY_POLICY


@pytest.fixture(autouse=True)
def nothing_refused_by_the_policy() -> Iterator[None]:
    REFUSED_BY_POLICY.clear()
    yield
    refused, REFUSED_BY_POLICY[:] = list(REFUSED_BY_POLICY), []
    assert refused == [], "the Content-Security-Policy refused what a page did"
