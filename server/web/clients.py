"""Who is asking: the client's address (behind trusted proxies only), and the per-request limits."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from aiohttp import web

from server.hub.model import Origin
from server.web.headers import TEXT_HEADERS
from server.web.limits import NetworkBuckets, TokenBuckets
from server.web.networks import Grouping

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

PER_ID = (20.0, 40.0)  # a player id: 20 requests a second, bursts of 40 (clients poll about once a second)
PER_ADDRESS = (200.0, 400.0)  # an address, which may be many players behind one NAT
GUEST_LOGINS = (0.5, 30.0)  # guest logins an address may make: 30 at once, then one every 2 seconds
# Polls answered with the lobby's whole state (msgNo=0, or a msgNo the logs no longer cover): one
# player id may ask 3 at once, then one every 10 seconds; one address 30 at once, then 2 a second.
WHOLE_STATES_PER_ID = (0.1, 3.0)
WHOLE_STATES_PER_ADDRESS = (2.0, 30.0)
# What anyone may read from the store (the archive's games, lists, replays and players; a tournament's
# public answers that nothing keeps; a profile on /auth.py; a bot's token or an organiser's key not known
# to be right; an analysis's archived record; a tournament joined or left), counted in reads of
# about 1.5 ms of CPU each: an SGF 1.4 ms, a game's replay 2.5, a player 5 (3 reads), a list of games
# 15-21 ms for 500 (one read a 50 games), a made-up tournament name 6.5 (5 reads), a profile 1.2, a
# made-up bot token 1.7, a made-up key 1.6. Against 0.16 ms for /healthz, so that one address within its
# 200 requests a second kept several cores busy. An address may make 50 reads at once, then 5 a second
# (its network four times as many), and the whole server 100 a second, 400 at once.
STORE_READS_PER_ADDRESS = (5.0, 50.0)
STORE_READS = (100.0, 400.0)


@dataclass(frozen=True)
class ClientPolicy:
    trusted_proxies: frozenset[str]  # only these may say who the client is (X-Forwarded-For)
    unlimited: frozenset[str]  # addresses exempt from the per-address limits (load tests, monitoring)
    grouping: Grouping = Grouping()  # addresses into hosts and networks (server/web/networks.py)
    metrics_from: tuple[IPNetwork, ...] = ()  # may read /metrics, besides loopback and the trusted proxies

    def reads_metrics(self, address: str) -> bool:
        """Whether a client at `address` (client_address's) may read /metrics: loopback, a trusted
        proxy asking for itself (or forwarding without naming a client), or --metrics-from. A client a
        proxy names in X-Forwarded-For is that client, so the internet cannot read it through nginx."""
        if address in self.trusted_proxies:
            return True
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped  # a dual-stack socket's IPv4 peer
        return ip.is_loopback or any(ip in network for network in self.metrics_from)


POLICY_KEY = web.AppKey("client_policy", ClientPolicy)
ORIGIN_KEY = web.RequestKey("client_origin", Origin)  # a request's, once worked out (origin)


def reads_metrics(request: web.Request) -> bool:
    return request.app[POLICY_KEY].reads_metrics(client_address(request))


def client_address(request: web.Request) -> str:
    """The address of whoever sent the request: the peer, or, when the peer is a trusted proxy, the
    nearest address in X-Forwarded-For that is not a trusted proxy itself."""
    peer = request.remote or "unknown"
    trusted = request.app[POLICY_KEY].trusted_proxies
    if peer not in trusted:
        return peer
    forwarded = [
        part.strip() for header in request.headers.getall("X-Forwarded-For", []) for part in header.split(",")
    ]
    for address in reversed(forwarded):
        if address not in trusted:
            return address if _is_ip(address) else peer
    return peer


def origin(request: web.Request) -> Origin:
    """The client's host and network, and whether it is exempt from the limits: what every per-address
    limit counts, here and in the hub. Worked out once a request: a poll asks for it twice (its rate
    limit, then its id's screening), and a poll's CPU is what bounds one process (issue 45)."""
    found = request.get(ORIGIN_KEY)
    if found is None:
        address = client_address(request)
        policy = request.app[POLICY_KEY]
        host, network = policy.grouping.where(address)
        found = request[ORIGIN_KEY] = Origin(host, address in policy.unlimited, network)
    return found


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


@dataclass
class RequestLimits:
    """Requests per second: per player id, and per host and network (server/web/networks.py)."""

    per_id: TokenBuckets
    per_address: NetworkBuckets
    guest_logins: NetworkBuckets
    whole_states_per_id: TokenBuckets
    whole_states_per_address: NetworkBuckets
    store_reads_per_address: NetworkBuckets
    store_reads: TokenBuckets  # the whole server's, under one key


LIMITS_KEY = web.AppKey("request_limits", RequestLimits)


def request_limits(factor: int) -> RequestLimits:
    return RequestLimits(
        TokenBuckets(*PER_ID),
        NetworkBuckets(*PER_ADDRESS, factor),
        NetworkBuckets(*GUEST_LOGINS, factor),
        TokenBuckets(*WHOLE_STATES_PER_ID),
        NetworkBuckets(*WHOLE_STATES_PER_ADDRESS, factor),
        NetworkBuckets(*STORE_READS_PER_ADDRESS, factor),
        TokenBuckets(*STORE_READS),
    )


def refused(request: web.Request) -> str | None:
    """`err.tooFast` or `err.tooManyLogins` (a.kropki's answers) when the request goes over a limit, None
    when it may go on."""
    limits = request.app[LIMITS_KEY]
    client = origin(request)
    shared = client.unlimited  # many players behind it: per-id limits only
    query = request.query
    secret = query.get("idGracza") or query.get("playerId")
    if (not shared and not limits.per_address.take(client)) or (
        secret is not None and not limits.per_id.take(secret)
    ):
        return "err.tooFast"
    if request.path == "/a.kropki" and not shared and query.get("co") == "guestLogin":
        if not limits.guest_logins.take(client):
            return "err.tooManyLogins"
    return None


def refusal(request: web.Request) -> web.Response | None:
    """Too many requests get a short answer in the endpoint's own style (never a dropped connection);
    None lets the request through."""
    why = refused(request)
    if why is None:
        return None
    path = request.path
    if path == "/a.kropki":
        return _text(why)
    if path == "/auth.py":
        return _text("nieOk.tooFast")
    return web.json_response(
        {"error": "too many requests; slow down"}, status=429, headers={"Retry-After": "1"}
    )


def refuses_whole_state(request: web.Request, secret: str) -> bool:
    """Whether a poll that would be answered with the lobby's whole state must wait (err.tooFast).

    Asked by the poll itself, which knows its msgNo already: most polls never get here."""
    limits = request.app[LIMITS_KEY]
    client = origin(request)
    return (not client.unlimited and not limits.whole_states_per_address.take(client)) or (
        bool(secret) and not limits.whole_states_per_id.take(secret)
    )


def store_reads_refused(request: web.Request, reads: float) -> int | None:
    """429 (this address) or 503 (everyone) when a public request that reads the store would read too
    much (STORE_READS); None lets it go on, its reads counted."""
    limits = request.app[LIMITS_KEY]
    client = origin(request)
    if not client.unlimited and not limits.store_reads_per_address.take(client, reads):
        return 429
    if not limits.store_reads.take("", reads):
        return 503
    return None


def refuses_store_reads(request: web.Request, reads: float) -> web.Response | None:
    """The JSON routes' answer when `store_reads_refused`; None lets the request go on."""
    status = store_reads_refused(request, reads)
    if status is None:
        return None
    error = "too many requests; slow down" if status == 429 else "the server is busy; try again soon"
    return web.json_response({"error": error}, status=status, headers={"Retry-After": "1"})


def _text(body: str) -> web.Response:
    return web.Response(body=body.encode(), headers=TEXT_HEADERS)
