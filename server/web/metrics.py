"""`/metrics` in Prometheus' text format, and the middleware that times every request.

Each app has its own registry (tests build many apps in one process). What the hub knows (players,
tables, games, moves, polls) is read when Prometheus scrapes, not pushed on every event.
"""

from __future__ import annotations

import itertools
from bisect import bisect_left
from collections.abc import Iterator, Mapping

from aiohttp import web
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from server import gcpauses
from server.hub.hub import Hub
from server.store.serverlock import AdvisoryLock
from server.web.budget import MOST_WAIT, SendingBudget
from server.web.clients import reads_metrics

NOT_OPEN = "/metrics answers loopback and the trusted proxies only (see --metrics-from).\n"
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

routes = web.RouteTableDef()


class HubCollector(Collector):
    def __init__(self, hub: Hub) -> None:
        self.hub = hub

    def collect(self) -> Iterator[Metric]:
        hub = self.hub
        rooms = [table.room for table in hub.tables.values() if table.room is not None]
        yield GaugeMetricFamily("kropki_players_online", "Players logged in", value=len(hub.players))
        yield GaugeMetricFamily("kropki_tables_open", "Game tables open", value=len(rooms))
        yield GaugeMetricFamily(
            "kropki_games_in_progress",
            "Games being played",
            value=sum(1 for room in rooms if room.game.result is None),
        )
        yield CounterMetricFamily("kropki_moves", "Moves accepted", value=hub.moves_played)
        yield CounterMetricFamily("kropki_polls", "Stream replies (getMsg/getBMsg)", value=hub.polls_answered)
        storage = hub.persistence
        yield GaugeMetricFamily(
            "kropki_storage_failing",
            "1 while storage takes no writes (moves are refused; /readyz says why), else 0",
            value=0 if storage.storage_failure is None else 1,
        )
        queued = storage.queued - storage.written
        yield GaugeMetricFamily("kropki_writes_queued", "Writes queued, not yet stored", value=queued)


class GcPauseCollector(Collector):
    """The process's garbage-collection pauses (server/gcpauses.py), by generation, and the longest."""

    def __init__(self) -> None:
        self.pauses = gcpauses.recorder()

    def collect(self) -> Iterator[Metric]:
        pauses = self.pauses
        histogram = HistogramMetricFamily(
            "kropki_gc_pause_seconds",
            "Time the process stood still in one garbage collection, by generation",
            labels=["generation"],
        )
        for generation in gcpauses.GENERATIONS:
            counts = pauses.counts[generation]
            bounds = [str(bound) for bound in gcpauses.BUCKETS] + ["+Inf"]
            cumulative = [sum(counts[: slot + 1]) for slot in range(len(counts))]
            histogram.add_metric(
                [str(generation)], list(zip(bounds, cumulative, strict=True)), pauses.sums[generation]
            )
        yield histogram
        yield GaugeMetricFamily(
            "kropki_gc_pause_max_seconds",
            "The longest garbage-collection pause since the process started",
            value=pauses.longest,
        )


class ReplyTimes(Collector):
    """`kropki_reply_seconds` by endpoint, counted in plain lists.

    Every request is timed, and prometheus_client's Histogram takes two locks and walks its buckets in
    Python for each (a few per cent of an empty poll, issue 19.3); the event loop needs no locks."""

    def __init__(self) -> None:
        self.series: dict[str, tuple[list[int], list[float]]] = {}  # endpoint -> (counts by bucket, [sum])

    def observe(self, endpoint: str, seconds: float) -> None:
        series = self.series.get(endpoint)
        if series is None:
            series = self.series[endpoint] = ([0] * (len(LATENCY_BUCKETS) + 1), [0.0])
        series[0][bisect_left(LATENCY_BUCKETS, seconds)] += 1  # a bucket counts what is <= its bound
        series[1][0] += seconds

    def collect(self) -> Iterator[Metric]:
        histogram = HistogramMetricFamily(
            "kropki_reply_seconds",
            "Time to answer a request, by endpoint (`co` for /a.kropki)",
            labels=["endpoint"],
        )
        bounds = [str(bound) for bound in LATENCY_BUCKETS] + ["+Inf"]
        for endpoint, (counts, total) in sorted(self.series.items()):
            cumulative = list(itertools.accumulate(counts))
            histogram.add_metric([endpoint], list(zip(bounds, cumulative, strict=True)), total[0])
        yield histogram


class ClusterCollector(Collector):
    """On a member of a cluster: messages it heard on Redis and did not take (server/cluster/signing.py)."""

    def __init__(self, *dropped: Mapping[str, int]) -> None:
        self.dropped = dropped  # one count by reason for each link (the lobby, the hourly counts)

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily(
            "kropki_cluster_messages_dropped",
            "Messages heard on Redis and not taken: unsigned, a bad signature (another secret, or not a "
            "member), stale, replayed, or malformed",
            labels=["reason"],
        )
        for reason in self.dropped[0]:
            family.add_metric([reason], sum(dropped[reason] for dropped in self.dropped))
        yield family


class PublicBudgetCollector(Collector):
    """The public answers' sending budget (server/web/budget.py): whether --public-rate holds back their
    readers, and whom it turned away."""

    def __init__(self, budget: SendingBudget) -> None:
        self.budget = budget

    def collect(self) -> Iterator[Metric]:
        yield CounterMetricFamily(
            "kropki_public_answers_refused",
            "Public answers (a tournament's tables, standings and records, the tournaments' list) refused "
            f"with 503 because the sending budget (--public-rate) was promised for over {MOST_WAIT:g} s",
            value=self.budget.refused,
        )
        yield GaugeMetricFamily(
            "kropki_public_answers_backlog_seconds",
            "How far ahead the public answers' sending budget is promised: a new one waits about this long",
            value=self.budget.backlog(),
        )


class DatabaseLockCollector(Collector):
    """On PostgreSQL: whether the process holds its database lock (server/store/serverlock.py)."""

    def __init__(self, lock: AdvisoryLock) -> None:
        self.lock = lock

    def collect(self) -> Iterator[Metric]:
        lock = self.lock
        yield GaugeMetricFamily(
            "kropki_database_lock_held",
            "1 while the PostgreSQL lock that keeps other servers out (and, on a member, its tables "
            "from being taken over) is held, 0 while it is lost and being taken back",
            value=1 if lock.lost_since is None else 0,
        )
        yield GaugeMetricFamily(
            "kropki_database_lock_taken",
            "1 while another process holds the lock this process lost (/readyz answers 503), else 0",
            value=0 if lock.taken_by is None else 1,
        )
        yield CounterMetricFamily(
            "kropki_database_lock_losses", "Times the lock was lost with its connection", value=lock.losses
        )


class Metrics:
    def __init__(self, hub: Hub, commands: dict[str, frozenset[str]]) -> None:
        """`commands`: the `co` values each zagram endpoint serves (its route -> names): the only
        ones that become labels, so that clients cannot make up labels without end."""
        self.commands = commands
        self.registry = CollectorRegistry()
        # the process's memory, CPU and open files, and the Python it runs on (process_*, python_info)
        ProcessCollector(registry=self.registry)
        PlatformCollector(registry=self.registry)
        self.replies = ReplyTimes()
        self.registry.register(self.replies)
        self.failures = Counter(
            "kropki_failures", "Requests that failed on a bug (answered err.internal)", registry=self.registry
        )
        self.writes = Histogram(
            "kropki_db_write_seconds",
            "Duration of one store transaction (a batch of writes)",
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        # Set by the connection guard (server/web/connections.py) when the server runs with one.
        self.connections_open = Gauge(
            "kropki_connections_open", "Client connections open", registry=self.registry
        )
        self.connections_max = Gauge(
            "kropki_connections_max", "The cap on open connections (0: none)", registry=self.registry
        )
        self.connections_closed = Counter(
            "kropki_connections_closed",
            "Connections the server closed: to make room at the cap (idle, slow, long_poll), "
            "or because a request's headers took too long (header_timeout)",
            ["reason"],
            registry=self.registry,
        )
        for reason in ("idle", "slow", "long_poll", "header_timeout"):
            self.connections_closed.labels(reason)  # shown as 0 before the first
        self.connections_refused = Counter(
            "kropki_connections_refused",
            "New connections refused at the cap (503) because every connection was busy",
            registry=self.registry,
        )
        self.registry.register(HubCollector(hub))
        self.registry.register(GcPauseCollector())

    def watch_cluster(self, *dropped: Mapping[str, int]) -> None:
        """`dropped`: the member's counts of messages not taken, by reason, read and added at each scrape."""
        self.registry.register(ClusterCollector(*dropped))

    def watch_public_budget(self, budget: SendingBudget) -> None:
        self.registry.register(PublicBudgetCollector(budget))

    def watch_database_lock(self, lock: AdvisoryLock) -> None:
        self.registry.register(DatabaseLockCollector(lock))

    def observe_reply(self, request: web.Request, seconds: float) -> None:
        self.replies.observe(self.endpoint(request), seconds)

    def endpoint(self, request: web.Request) -> str:
        """A label from a small set: the route, and `co` for the zagram endpoints."""
        resource = request.match_info.route.resource
        if resource is None:
            return "unmatched"
        name = resource.canonical
        if name in self.commands:
            co = request.query.get("co", "")
            return f"{name}:{co if co in self.commands[name] else 'other'}"
        return name  # a route's template, e.g. /sgf/{number}: a small, fixed set


METRICS_KEY = web.AppKey("metrics", Metrics)


@routes.get("/metrics")
async def metrics_page(request: web.Request) -> web.Response:
    if not reads_metrics(request):
        return web.Response(status=403, text=NOT_OPEN, headers={"Cache-Control": "no-store"})
    body = generate_latest(request.app[METRICS_KEY].registry)
    response = web.Response(body=body, headers={"Cache-Control": "no-store"})
    response.content_type = CONTENT_TYPE_LATEST.split(";")[0]
    return response
