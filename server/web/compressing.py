"""A shared answer's gzip and ETag (server/web/shared.py), made again from where its bytes stop being
those of the answer's last version. A big tournament's tables (23 MB at 108,000 games) are built again
at every change, and all but the last tables are the same bytes as before: gzip and the hash of the
whole took 0.3 to 0.4 s of CPU a build (docs/performance.md). So the states of zlib's compressor and
of the hash are kept every CHECKPOINT bytes (their public `copy()`), and the next version is compressed
and hashed from the last state before its first byte that differs, its gzip beginning with the bytes
the last one had made by then. Each state is taken in chunks of CHECKPOINT bytes, both times, so the
gzip is the very bytes a compression from the start makes.
"""

from __future__ import annotations

import hashlib
import zlib
from dataclasses import dataclass
from typing import Any

CHECKPOINT = 1024 * 1024  # bytes of an answer between two kept states
STATE_BYTES = 262 * 1024  # what a copy of zlib's compressor holds at level 6 (measured: 261.7 KB)
LEVEL = 6
GZIP = 31  # zlib's window bits for a gzip stream (header and trailer)


@dataclass(frozen=True)
class Mark:
    """The states after the answer's first `at` bytes, and how much gzip they had made; each is copied
    before it is used, so that every later version can start from it."""

    at: int
    made: int
    compressor: Any  # zlib's compressor (None: an answer not gzipped)
    digest: Any  # hashlib's blake2b


@dataclass(frozen=True)
class Compressed:
    body: bytes
    gzipped: bytes | None
    etag: str
    marks: tuple[Mark, ...]

    @property
    def size(self) -> int:
        """Its bytes, and the compressor's states kept."""
        states = sum(mark.compressor is not None for mark in self.marks)
        return len(self.body) + len(self.gzipped or b"") + states * STATE_BYTES


def compressed(body: bytes, compress: bool, last: Compressed | None = None) -> Compressed:
    """`body` gzipped (if `compress`) and hashed, from the last of `last`'s marks before which the two
    are the same bytes."""
    marks = _same_marks(last, body, compress)
    if last is not None and marks:
        mark = marks[-1]
        compressor = mark.compressor.copy() if compress else None
        digest = mark.digest.copy()
        pieces, made, start = [last.gzipped[: mark.made]] if last.gzipped else [], mark.made, mark.at
    else:
        compressor = zlib.compressobj(LEVEL, zlib.DEFLATED, GZIP) if compress else None
        digest = hashlib.blake2b(digest_size=12)
        pieces, made, start = [], 0, 0
    view = memoryview(body)
    for at in range(start, len(body), CHECKPOINT):
        chunk = view[at : at + CHECKPOINT]
        digest.update(chunk)
        if compressor is not None:
            pieces.append(compressor.compress(chunk))
            made += len(pieces[-1])
        if at + CHECKPOINT < len(body):
            copied = compressor.copy() if compressor is not None else None
            marks.append(Mark(at + CHECKPOINT, made, copied, digest.copy()))
    if compressor is not None:
        pieces.append(compressor.flush())
    gzipped = b"".join(pieces) if compressor is not None else None
    return Compressed(body, gzipped, '"' + digest.hexdigest() + '"', tuple(marks))


def _same_marks(last: Compressed | None, body: bytes, compress: bool) -> list[Mark]:
    """`last`'s marks before which `body` has the same bytes as `last` had."""
    if last is None or (last.gzipped is not None) != compress:
        return []
    same: list[Mark] = []
    begin = 0
    for mark in last.marks:
        if mark.at >= len(body) or last.body[begin : mark.at] != body[begin : mark.at]:
            break
        same.append(mark)
        begin = mark.at
    return same
