"""A registered player's id is their password: the database keeps only a slow, salted hash of it.

scrypt from the standard library (N=2^14, r=8, p=1: about 16 MB and tens of milliseconds), run in a
thread so the event loop goes on serving everyone else while one login is checked.

Each hash has a salt of its own, so an id cannot be looked up by its hash: an account is found by
nick first. Live sessions, which a poll names by id only, are kept under a keyed HMAC instead
(`server.hub.persistence.id_hmac`, docs/protocol.md "After a restart").
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import os

N, R, P = 2**14, 8, 1
SALT_BYTES = 16
KEY_BYTES = 32
SCHEME = "scrypt"


def _derive(secret: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(secret.encode(), salt=salt, n=n, r=r, p=p, maxmem=0, dklen=KEY_BYTES)


def hash_id(secret: str) -> str:
    """`scrypt$N$r$p$salt$key`, so that the cost can be raised later without locking anyone out."""
    salt = os.urandom(SALT_BYTES)
    key = _derive(secret, salt, N, R, P)
    return "$".join([SCHEME, str(N), str(R), str(P), _b64(salt), _b64(key)])


def id_matches(secret: str, stored: str) -> bool:
    scheme, n, r, p, salt, key = stored.split("$")
    if scheme != SCHEME:
        raise ValueError(f"unknown id hash scheme {scheme!r}")
    derived = _derive(secret, base64.b64decode(salt), int(n), int(r), int(p))
    return hmac.compare_digest(derived, base64.b64decode(key))


# A hash of nobody's id with the current cost, checked for unknown nicks so that they take as long.
_DECOY = "scrypt$16384$8$1$XN3QSsC2aZbb0nmBWsNeaA==$Nv0PwY828LSUxA89VqLCQEvj3r3ey4Q6f5eG4nisews="


async def hash_id_async(secret: str) -> str:
    return await asyncio.to_thread(hash_id, secret)


async def check_id_async(secret: str, stored: str | None) -> bool:
    """Check an id against a stored hash; an unknown nick (`None`) costs the same and fails."""
    if stored is None:
        await asyncio.to_thread(id_matches, secret, _DECOY)
        return False
    return await asyncio.to_thread(id_matches, secret, stored)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()
