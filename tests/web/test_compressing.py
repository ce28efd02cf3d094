"""A shared answer's gzip and ETag made again from the last version's kept states (server/web/compressing.py):
the very bytes a compression from the start makes, whatever changed, and the states before the change
taken over, not made again."""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import random

import pytest

from server.web.compressing import CHECKPOINT, Compressed, compressed

ENTRIES = 70_000  # about 4.3 checkpoints of JSON entries, as a tournament's tables


def answer(seed: int = 1) -> bytes:
    rng = random.Random(seed)
    tables = [
        {"table": n, "blue": f"p{rng.randrange(150)}", "red": f"p{rng.randrange(150)}", "result": "B+R"}
        for n in range(ENTRIES)
    ]
    return json.dumps({"tournament": "Big cup", "tables": tables}).encode()


BASE = answer()


@functools.cache
def base(compress: bool) -> Compressed:
    """BASE compressed from the start: a version's last (never changed by what is made from it)."""
    return compressed(BASE, compress)


EDITS = {
    "the same": BASE,
    "a table added": BASE[:-2] + b', {"table": 70000, "blue": "p1", "red": "p2", "result": null}]}',
    "the last table changed": BASE[:-20] + b"W" + BASE[-19:],
    "one in the middle changed": BASE[: len(BASE) // 2] + b"X" + BASE[len(BASE) // 2 + 1 :],
    "the first byte changed": b"[" + BASE[1:],
    "cut at a checkpoint": BASE[: 2 * CHECKPOINT],
    "shorter than a checkpoint": BASE[:1000],
}


@pytest.mark.parametrize("compress", [True, False], ids=["gzip", "hash only"])
@pytest.mark.parametrize("name", EDITS)
def test_a_version_made_from_the_last_is_what_a_whole_compression_makes(name: str, compress: bool) -> None:
    last = base(compress)
    body = EDITS[name]

    resumed, whole = compressed(body, compress, last), compressed(body, compress)

    assert (resumed.gzipped, resumed.etag) == (whole.gzipped, whole.etag)
    assert resumed.etag == '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'
    assert [mark.at for mark in resumed.marks] == [mark.at for mark in whole.marks]
    if compress:
        assert resumed.gzipped is not None and gzip.decompress(resumed.gzipped) == body
    else:
        assert resumed.gzipped is None


def test_the_states_before_the_first_change_are_taken_over() -> None:
    """Only what follows the last state before the change is compressed again: at 108,000 tables that
    is a megabyte or less of 23 (before: the whole of it at every build)."""
    last = base(True)
    changed_at = len(BASE) - 20
    body = BASE[:changed_at] + b"W" + BASE[changed_at + 1 :]

    resumed = compressed(body, True, last)

    kept = [mark for mark in last.marks if mark.at < changed_at]
    assert len(kept) == len(BASE) // CHECKPOINT >= 4
    assert resumed.marks[: len(kept)] == tuple(kept)  # the very states, not made again
    assert all(a is b for a, b in zip(resumed.marks, kept, strict=False))
    middle = compressed(BASE[:CHECKPOINT] + b"X" + BASE[CHECKPOINT + 1 :], True, last)
    assert middle.marks[0] is last.marks[0] and middle.marks[1] is not last.marks[1]
