"""What an admin watches and what a browser gets: readiness, metrics, headers, compression, static files."""

from __future__ import annotations

import dataclasses
import gc
import gzip
import ipaddress
import re
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient
from sqlalchemy import text
from sqlalchemy.engine import make_url

from server.app import BUILT_IN_CLIENT, STORE_KEY, create_app
from server.config import Settings
from server.web.clients import ClientPolicy
from server.web.headers import CLIENT_POLICY, FOLDER_POLICY, SECURITY_HEADERS
from server.web.metrics import NOT_OPEN, ReplyTimes
from tests.web.zagram import Zagram


async def test_ready_when_the_database_is_current_and_not_otherwise(client: TestClient) -> None:
    ready = await client.get("/readyz")
    assert (ready.status, (await ready.json())["status"]) == (200, "ready")

    async with client.app[STORE_KEY].engine.begin() as connection:
        await connection.execute(text("UPDATE alembic_version SET version_num = '0001'"))
    old = await client.get("/readyz")

    assert old.status == 503
    body = await old.json()
    assert body["status"] == "unready" and "kropki-server migrate" in body["reason"]
    assert (await client.get("/healthz")).status == 200  # alive all the same


@pytest.mark.parametrize(
    ("revision", "says"),
    [("0001", ", this server needs "), ("9999", ", which a newer version of kropki-server made ")],
    ids=["older", "newer"],
)
async def test_the_readiness_reason_does_not_name_the_database(
    client: TestClient, settings: Settings, revision: str, says: str
) -> None:
    """/readyz answers anyone (nginx forwards it from the internet). Before, the reason for a schema
    not the code's named the database's URL: the SQLite file's path, or PostgreSQL's host, port, user
    and database."""
    async with client.app[STORE_KEY].engine.begin() as connection:
        await connection.execute(text(f"UPDATE alembic_version SET version_num = '{revision}'"))
    old = await client.get("/readyz")

    assert old.status == 503
    reason = (await old.json())["reason"]
    assert reason.startswith(f"the database has schema revision {revision}{says}")
    url = make_url(settings.db_url)
    assert url.drivername not in reason and str(url.database) not in reason


async def test_metrics_count_what_happens(client: TestClient) -> None:
    ala, bob = Zagram(client, "ala123", "*Ala"), Zagram(client, "bob456", "*Bob")
    for guest in (ala, bob):
        await guest.login()
        await guest.poll()
    ala.send("v", 0, "s.*Bob.0808stanr0.0.0")
    await ala.poll()
    bob.send("v", 0, "a")
    await bob.poll()
    assert await ala.get(co="graczStawiaKropke", idGracza=ala.secret, table="1", where="aa") == ""

    response = await client.get("/metrics")
    page = await response.text()

    assert response.status == 200 and response.content_type == "text/plain"
    for sample in (
        "kropki_players_online 2.0",
        "kropki_tables_open 1.0",
        "kropki_games_in_progress 1.0",
        "kropki_moves_total 1.0",
        'kropki_reply_seconds_count{endpoint="/a.kropki:getMsg"} 4.0',
        'kropki_reply_seconds_count{endpoint="/a.kropki:graczStawiaKropke"} 1.0',
        "kropki_failures_total 0.0",
    ):
        assert sample in page, sample
    assert "kropki_polls_total 4.0" in page
    assert 'endpoint="/a.kropki:other"' not in page
    assert "kropki_db_write_seconds_count 0.0" not in page  # the move was written
    assert "ala123" not in page


async def test_every_metric_the_server_serves_is_in_the_operators_table(client: TestClient) -> None:
    """An operator reads docs/operations.md ("Health and metrics") to know what a series means: the
    push connections' two were served and named nowhere."""
    page = await (await client.get("/metrics")).text()
    served = set(re.findall(r"^# TYPE (kropki_\w+) ", page, re.MULTILINE))
    names = {name for name in served if not name.endswith("_created")}  # a counter's start time
    documented = (Path(__file__).parents[2] / "docs" / "operations.md").read_text(encoding="utf-8")
    assert len(names) > 10 and {name for name in names if f"`{name}`" not in documented} == set()


async def test_every_response_has_the_security_headers_and_big_ones_are_compressed(
    client: TestClient,
) -> None:
    await Zagram(client, "ala123", "*Ala").login()
    for path in ("/healthz", "/no/such/page", "/a.kropki?co=getMsg&msgNo=0", "/a.kropki?co=madeUp"):
        response = await client.get(path)
        for name, value in SECURITY_HEADERS.items():
            assert response.headers.getall(name) == [value], (path, name)
    poll = await client.get("/a.kropki?co=getMsg&msgNo=0")
    assert (poll.headers["Content-Type"], poll.headers["Cache-Control"]) == (
        "text/plain; charset=utf-8",
        "no-store",
    )

    big = await client.get("/metrics", headers={"Accept-Encoding": "gzip"})
    small = await client.get("/healthz", headers={"Accept-Encoding": "gzip"})

    assert big.headers.get("Content-Encoding") == "gzip" and "kropki_players_online" in await big.text()
    assert "Content-Encoding" not in small.headers


@pytest.fixture
async def static_client(aiohttp_client: AiohttpClient, settings: Settings, tmp_path: Path) -> TestClient:
    folder = tmp_path / "client"
    (folder / "js").mkdir(parents=True)
    (folder / "index.html").write_text("<html>zagram client</html>")
    (folder / "js" / "app.js").write_text("var rootUrl = '/';")
    (tmp_path / "secret.txt").write_text("not for the web")
    app = create_app(dataclasses.replace(settings, static_dir=folder))
    return await aiohttp_client(app)


async def test_a_static_folder_is_served_beside_the_protocol(static_client: TestClient) -> None:
    root = await static_client.get("/")
    login_link = await static_client.get("/index.html?id=ala123&opis=*Ala&lang=en")
    script = await static_client.get("/js/app.js")
    outside = await static_client.get("/../secret.txt")
    protocol = await static_client.get("/a.kropki?co=getMsg&msgNo=0")

    assert (root.status, await root.text()) == (200, "<html>zagram client</html>")
    assert (login_link.status, await login_link.text()) == (200, "<html>zagram client</html>")
    assert script.status == 200 and "rootUrl" in await script.text()
    assert outside.status in (403, 404) and "not for the web" not in await outside.text()
    assert (await protocol.text()).startswith("sd/m0.")
    assert (await static_client.get("/client.js")).status == 404  # the folder replaces the built-in client


async def test_an_operators_pages_get_a_policy_that_restricts_nothing_they_do(
    static_client: TestClient,
) -> None:
    """The zagram web client has inline scripts and handlers (docs/operations.md, "Response headers")."""
    for path in ("/", "/index.html?id=ala123&opis=*Ala&lang=en"):
        page = await static_client.get(path)
        assert page.headers.getall("Content-Security-Policy") == [FOLDER_POLICY], path
    script = await static_client.get("/js/app.js")
    assert script.status == 200 and "Content-Security-Policy" not in script.headers
    assert "Content-Security-Policy" not in (await static_client.get("/a.kropki?co=getMsg&msgNo=0")).headers


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/", "text/html"),
        ("/index.html?id=ala123&opis=*Ala&lang=pl", "text/html"),
        ("/client.js", "text/javascript"),
        ("/protocol.js", "text/javascript"),
        ("/i18n.js", "text/javascript"),
        ("/client.css", "text/css"),
    ],
)
async def test_the_built_in_client_is_served_at_the_root_by_default(
    client: TestClient, path: str, content_type: str
) -> None:
    response = await client.get(path)
    assert response.status == 200
    assert response.content_type in (content_type, content_type.replace("text/", "application/"))
    assert response.headers["X-Content-Type-Options"] == "nosniff"  # so a script must be served as one
    if content_type == "text/html":
        assert "<title>Kropki</title>" in await response.text()
        assert response.headers.getall("Content-Security-Policy") == [CLIENT_POLICY]
    else:
        assert "Content-Security-Policy" not in response.headers


async def test_the_built_in_client_goes_out_compressed_under_versioned_names(client: TestClient) -> None:
    page = await client.get("/")
    html = await page.text()
    (script,) = re.findall(r'src="(assets/[0-9a-f]{12}/client\.js)"', html)
    (style,) = re.findall(r'href="(assets/[0-9a-f]{12}/client\.css)"', html)
    versioned = await client.get("/" + script, headers={"Accept-Encoding": "gzip"}, auto_decompress=False)
    body = gzip.decompress(await versioned.read()).decode()
    plain = await client.get("/client.js", headers={"Accept-Encoding": "gzip"})
    again = await client.get("/" + script, headers={"If-None-Match": versioned.headers["ETag"]})
    older = await client.get("/assets/000000000000/client.js")

    assert page.headers["Cache-Control"] == "no-cache" and "ETag" in page.headers
    assert versioned.status == 200 and versioned.headers["Content-Encoding"] == "gzip"
    assert versioned.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert int(versioned.headers["Content-Length"]) < len(body) / 2  # compressed once, and well
    assert body == (BUILT_IN_CLIENT / "client.js").read_text()
    assert 'from "./protocol.js"' in body  # relative to the script: its imports carry the version
    assert (await client.get("/" + style)).status == 200
    assert plain.headers["Cache-Control"] == "no-cache" and await plain.text() == body
    assert again.status == 304
    assert older.status == 200 and older.headers["Cache-Control"] == "no-cache"


@pytest.mark.parametrize("path", ["/" + "a" * 256, "/" + "ą" * 128 + "/x", "/sgf/" + "1" * 300])
async def test_a_path_segment_longer_than_a_file_name_is_not_found(
    client: TestClient, caplog: pytest.LogCaptureFixture, path: str
) -> None:
    response = await client.get(path)
    assert response.status == 404 and response.headers["X-Content-Type-Options"] == "nosniff"
    assert "Traceback" not in caplog.text and "File name too long" not in caplog.text


async def test_metrics_answer_loopback_and_the_trusted_proxies_only(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """Behind nginx (a trusted proxy) the client is the one nginx names: the internet is refused."""
    client = await aiohttp_client(create_app(dataclasses.replace(settings, trusted_proxies=("127.0.0.1",))))

    for named in ("", "127.0.0.1", "::1"):  # the proxy asking for itself, or a client on loopback
        headers = {"X-Forwarded-For": named} if named else {}
        assert (await client.get("/metrics", headers=headers)).status == 200, named
    for stranger in ("203.0.113.9", "10.1.2.3", "127.0.0.1, 203.0.113.9", "203.0.113.9, 127.0.0.1"):
        refused = await client.get("/metrics", headers={"X-Forwarded-For": stranger})
        assert refused.status == 403, stranger
        assert refused.headers["Cache-Control"] == "no-store"
        assert await refused.text() == NOT_OPEN and "kropki_" not in NOT_OPEN


async def test_readiness_says_why_only_to_whom_may_read_metrics(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """The shipped nginx sites forward /readyz from the internet, and its reasons name what an attacker
    looks for: the database lock holder's host, port and pid, the cluster's members, why Redis does not
    answer. A stranger gets the status (and its HTTP code); loopback, the proxy and --metrics-from get
    the reasons too."""
    opened = dataclasses.replace(settings, trusted_proxies=("127.0.0.1",), metrics_from=("203.0.113.0/24",))
    client = await aiohttp_client(create_app(opened))
    async with client.app[STORE_KEY].engine.begin() as connection:
        await connection.execute(text("UPDATE alembic_version SET version_num = '0001'"))

    stranger = await client.get("/readyz", headers={"X-Forwarded-For": "198.51.100.9"})
    assert (stranger.status, await stranger.json()) == (503, {"status": "unready"})
    for reader in ("", "203.0.113.9"):
        headers = {"X-Forwarded-For": reader} if reader else {}
        told = await client.get("/readyz", headers=headers)
        assert told.status == 503 and "kropki-server migrate" in (await told.json())["reason"], reader


async def test_metrics_from_opens_metrics_to_its_networks(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    opened = dataclasses.replace(settings, trusted_proxies=("127.0.0.1",), metrics_from=("203.0.113.0/24",))
    client = await aiohttp_client(create_app(opened))

    allowed = await client.get("/metrics", headers={"X-Forwarded-For": "203.0.113.9"})
    assert allowed.status == 200 and "kropki_players_online" in await allowed.text()
    assert (await client.get("/metrics", headers={"X-Forwarded-For": "198.51.100.9"})).status == 403


def test_who_may_read_metrics() -> None:
    monitoring = (ipaddress.ip_network("fd00::/8"),)
    policy = ClientPolicy(frozenset({"10.0.0.5"}), frozenset(), metrics_from=monitoring)
    for address in ("127.0.0.1", "127.3.2.1", "::1", "::ffff:127.0.0.1", "10.0.0.5", "fd00::7"):
        assert policy.reads_metrics(address), address
    for address in ("10.0.0.6", "192.0.2.1", "::ffff:192.0.2.1", "2001:db8::1", "unknown", ""):
        assert not policy.reads_metrics(address), address
    everyone = ClientPolicy(
        frozenset(), frozenset(), metrics_from=tuple(map(ipaddress.ip_network, ("0.0.0.0/0", "::/0")))
    )
    assert everyone.reads_metrics("192.0.2.1") and everyone.reads_metrics("2001:db8::1")


async def test_metrics_show_the_process_memory_and_cpu(client: TestClient) -> None:
    page = await (await client.get("/metrics")).text()

    assert _sample(page, "process_resident_memory_bytes") > 10_000_000
    assert _sample(page, "process_cpu_seconds_total") > 0
    assert _sample(page, "process_open_fds") > 0
    assert 'python_info{implementation="CPython"' in page


async def test_metrics_label_only_the_commands_the_server_serves(client: TestClient) -> None:
    """Made-up `co` values share one label: a client cannot fill Prometheus with labels of its own."""
    for n in range(60):
        await client.get("/a.kropki", params={"co": f"squat{n}"})
    await client.get("/auth.py", params={"co": "loguj", "opisGracza": "Nobody", "idGracza": "x" * 10})
    await client.get("/auth.py", params={"co": "madeUp"})
    page = await (await client.get("/metrics")).text()
    labels = {
        line.split('endpoint="')[1].split('"')[0]
        for line in page.splitlines()
        if "kropki_reply_seconds_count" in line
    }
    assert labels == {"/a.kropki:other", "/auth.py:loguj", "/auth.py:other"}


def test_reply_times_count_a_time_on_a_bound_in_that_bound_s_bucket() -> None:
    """Prometheus' buckets are `le` (at most the bound); each bucket line counts everything below it too."""
    times = ReplyTimes()
    for seconds in (0.001, 0.0011, 0.004, 99.0):
        times.observe("/a.kropki:getMsg", seconds)
    (family,) = times.collect()
    samples = {(s.name, s.labels.get("le")): s.value for s in family.samples}

    assert samples["kropki_reply_seconds_bucket", "0.001"] == 1
    assert samples["kropki_reply_seconds_bucket", "0.0025"] == 2
    assert samples["kropki_reply_seconds_bucket", "0.005"] == 3
    assert samples["kropki_reply_seconds_bucket", "30.0"] == 3
    assert samples["kropki_reply_seconds_bucket", "+Inf"] == samples["kropki_reply_seconds_count", None] == 4
    assert samples["kropki_reply_seconds_sum", None] == pytest.approx(99.0061)


def _sample(page: str, name: str) -> float:
    """The value of one sample line `name value` of a /metrics page."""
    return float(next(line for line in page.splitlines() if line.startswith(name + " ")).split()[-1])


async def test_metrics_time_each_garbage_collection(client: TestClient) -> None:
    """A full collection forced by hand is one more generation-2 pause, timed: the sum and the longest
    pause grow above zero, and every generation has the 20 ms bucket the capacity targets read."""
    count = 'kropki_gc_pause_seconds_count{generation="2"}'
    before = await (await client.get("/metrics")).text()
    gc.collect()
    after = await (await client.get("/metrics")).text()

    assert _sample(after, count) >= _sample(before, count) + 1
    added = _sample(after, 'kropki_gc_pause_seconds_sum{generation="2"}') - _sample(
        before, 'kropki_gc_pause_seconds_sum{generation="2"}'
    )
    assert added > 0
    assert _sample(after, "kropki_gc_pause_max_seconds") > 0
    assert _sample(after, 'kropki_gc_pause_seconds_bucket{generation="2",le="+Inf"}') == _sample(after, count)
    for generation in ("0", "1", "2"):
        assert f'kropki_gc_pause_seconds_bucket{{generation="{generation}",le="0.02"}}' in after
