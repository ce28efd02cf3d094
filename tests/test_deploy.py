"""The deployment files, checked as far as this machine can: the image cannot be built here (no Docker
daemon), so the Dockerfile's steps are run in a scratch folder instead, the compose file is read, and the
nginx site goes through `nginx -t` (make test installs Debian's nginx-light when missing)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import re
import secrets
import shlex
import shutil
import subprocess
import sys
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
import yaml
from pytest_aiohttp import AiohttpClient

from server.app import create_app
from server.cluster.sessions import BRING_AT_MOST
from server.config import DEFAULT_MAX_CONNECTIONS, Settings, check_cluster
from server.hub.stream import MAX_WAIT
from server.web.connections import FILE_RESERVE, connection_cap
from server.web.kropki import MAX_REQUEST_LINE
from server.web.push import HEARTBEAT, KEEP_ALIVE_SPREAD
from tests.ports import free_port
from tests.test_lock import LOCKS
from tests.web.zagram import Zagram

REPO = Path(__file__).resolve().parent.parent
DEPLOY = REPO / "deploy"


def dockerfile() -> list[tuple[str, str]]:
    """(instruction, arguments) pairs, continuation lines joined."""
    text = re.sub(r"\\\n\s*", " ", (REPO / "Dockerfile").read_text())
    pairs = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            instruction, _, arguments = line.partition(" ")
            pairs.append((instruction.upper(), arguments.strip()))
    return pairs


def test_the_dockerfile_is_small_non_root_and_healthy() -> None:
    steps = dockerfile()
    instructions = [instruction for instruction, _ in steps]

    assert instructions.count("FROM") == 2  # build stage and runtime stage
    assert ("USER", "kropki") in steps
    # the uid and gid docs/operations.md tells an operator to give a host folder mounted on /data
    (user,) = [arguments for instruction, arguments in steps if "useradd" in arguments]
    assert "groupadd --system --gid 10001 kropki" in user
    assert "useradd --system --uid 10001 --gid kropki" in user
    assert "install -d -o 10001 -g 10001" in (REPO / "docs" / "operations.md").read_text()
    assert ("VOLUME", "/data") in steps
    assert "HEALTHCHECK" in instructions
    cmd = json.loads(dict(steps)["CMD"])
    assert cmd == ["kropki-server", "serve", "--migrate"]
    ignored = (REPO / ".dockerignore").read_text().splitlines()
    for arguments in (arguments for instruction, arguments in steps if instruction == "COPY"):
        if arguments.startswith("--from"):
            continue
        for source in shlex.split(arguments)[:-1]:
            assert (REPO / source).exists(), source
            assert f"!{source}" in ignored or f"!{source}/" in ignored, f"{source} is not sent to the build"


def test_the_dockerfile_steps_work_in_a_scratch_folder(tmp_path: Path) -> None:
    """The image's wheel (migrations inside), installed alone, migrates a database, serves, and passes
    the image's own HEALTHCHECK command."""
    source, wheels, target = tmp_path / "src", tmp_path / "wheels", tmp_path / "site"
    for instruction, arguments in dockerfile():  # the build stage's COPY steps, into a scratch folder
        if instruction == "COPY" and not arguments.startswith("--from"):
            *names, _ = shlex.split(arguments)
            for name in names:
                if (REPO / name).is_dir():
                    shutil.copytree(REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
                else:
                    source.mkdir(exist_ok=True)
                    shutil.copy(REPO / name, source / name)
    build = subprocess.run(
        # as the image builds it: with the setuptools of requirements/build.txt, which make installs here
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
        + ["-w", str(wheels), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stderr
    (wheel,) = wheels.glob("kropki_server-*.whl")
    with zipfile.ZipFile(wheel) as built:  # the notices the data inside asks for (Unicode's) go with it
        assert any(name.endswith(".dist-info/licenses/NOTICE") for name in built.namelist())
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, install.stderr
    env = {key: value for key, value in os.environ.items() if not key.startswith("KROPKI_")}
    env |= {"PYTHONPATH": str(target), "KROPKI_DB": f"sqlite+aiosqlite:///{tmp_path}/data/k.sqlite3"}
    where = subprocess.run(
        [sys.executable, "-c", "import server, kropki_migrations; print(server.__file__)"],
        cwd=tmp_path, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert where.stdout.startswith(str(target)), where.stdout + where.stderr

    port = free_port()
    env |= {"KROPKI_PORT": str(port)}
    server = subprocess.Popen(
        [sys.executable, "-m", "server", "serve", "--migrate"],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1)
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, "the server did not start"
                time.sleep(0.2)
        health = dict(dockerfile())["HEALTHCHECK"].split(" CMD ", 1)[1]
        probe = subprocess.run(shlex.split(health), env=env, cwd=tmp_path, capture_output=True, timeout=30)
        assert probe.returncode == 0, probe.stderr
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_compose_file_runs_the_server_on_postgresql() -> None:
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    services = compose["services"]
    server, db = services["server"], services["db"]

    assert (
        DEPLOY / server["build"]["context"] / server["build"]["dockerfile"]
    ).resolve() == REPO / "Dockerfile"
    assert server["depends_on"]["db"]["condition"] == "service_healthy"
    url = server["environment"]["KROPKI_DB"]
    assert url.startswith("postgresql+asyncpg://") and "@db:" in url
    user, password = db["environment"]["POSTGRES_USER"], db["environment"]["POSTGRES_PASSWORD"]
    assert f"//{user}:{password}@db:5432/{db['environment']['POSTGRES_DB']}" in url
    assert server["ports"] == ["127.0.0.1:8080:8080"]
    assert server["command"][:3] == ["kropki-server", "serve", "--migrate"]
    assert "pgdata" in compose["volumes"]


def test_the_cluster_compose_file_runs_three_members_behind_nginx(tmp_path: Path) -> None:
    text = (DEPLOY / "docker-compose-cluster.yml").read_text()
    compose = yaml.safe_load(text)
    services = compose["services"]
    members = {name: service for name, service in services.items() if name.startswith("kropki-")}
    nginx = services["nginx"]

    assert len(members) == 3
    # every member reads the cluster's secret from the one compose secret, made as the file's head says
    (secret_name,) = compose["secrets"]
    assert compose["secrets"][secret_name]["file"] == "./kropki-cluster-secret"
    assert "deploy/kropki-cluster-secret" in (REPO / ".gitignore").read_text().splitlines()
    assert "openssl rand -hex 32 > deploy/kropki-cluster-secret" in text
    made = tmp_path / "kropki-cluster-secret"
    made.write_text(secrets.token_hex(32) + "\n")
    settings = {}
    for name, service in members.items():
        environment = dict(service["environment"])
        assert service["secrets"] == [secret_name]
        assert environment.pop("KROPKI_CLUSTER_SECRET_FILE") == f"/run/secrets/{secret_name}"
        assert "KROPKI_CLUSTER_SECRET" not in environment  # `docker inspect` would show it
        settings[name] = Settings.from_env(environment | {"KROPKI_CLUSTER_SECRET_FILE": str(made)})
        check_cluster(settings[name])
    assert {name: s.member for name, s in settings.items()} == {name: name for name in members}
    assert len({(s.db_url, s.redis_url) for s in settings.values()}) == 1
    assert all(s.db_url.startswith("postgresql+asyncpg://") and "@db:" in s.db_url for s in settings.values())
    # Redis wants a password, the one the members' URL gives, and publishes no port (nor does PostgreSQL)
    redis = services["redis"]
    password = redis["command"][redis["command"].index("--requirepass") + 1]
    assert all(s.redis_url == f"redis://:{password}@redis:6379/0" for s in settings.values())
    assert "ports" not in redis and "ports" not in services["db"]
    installed = re.findall(r"-r (\S+)", " ".join(args for step, args in dockerfile() if step == "RUN"))
    assert "requirements/server.txt" in installed  # the image's lock, which covers the cluster extra:
    assert "cluster" in LOCKS["requirements/server.txt"].extras  # the image can run a member
    migrating = [name for name, service in members.items() if "--migrate" in service["command"]]
    assert migrating == ["kropki-1"]  # migrations never run twice at once
    for name in members.keys() - {"kropki-1"}:
        assert members[name]["depends_on"]["kropki-1"]["condition"] == "service_healthy"
    # nginx: the shipped site, its member list naming every member where it listens, and the members
    # trusting its address only
    assert "./nginx-kropki-cluster.conf:/etc/nginx/conf.d/default.conf:ro" in nginx["volumes"]
    (config,) = nginx["configs"]
    assert config["target"] == "/etc/nginx/kropki-members.conf"
    listed = re.findall(r"server (\S+):(\d+)", compose["configs"][config["source"]]["content"])
    assert listed == [(name, str(settings[name].port)) for name in members]
    address = nginx["networks"]["kropki"]["ipv4_address"]
    assert all(s.trusted_proxies == (address,) and s.host == "0.0.0.0" for s in settings.values())


def proxied_pattern() -> re.Pattern[str]:
    site = (DEPLOY / "nginx-kropki.conf").read_text()
    (pattern,) = re.findall(r"location ~ (\S+)\s*\{", site)
    return re.compile(pattern)


def test_nginx_proxies_every_route_of_the_server(settings: Settings) -> None:
    proxied = proxied_pattern()
    app = create_app(settings)
    # the built-in client (server/web/assets.py): where the operator's folder has no such file
    client_files = {"/", "", "/index.html", "/assets/{version}/{name}", "/{name}"}
    paths = {resource.canonical for resource in app.router.resources()} - client_files

    site = (DEPLOY / "nginx-kropki.conf").read_text()
    own = {where.removeprefix("= ") for where in locations(site) if where.startswith("= ")}
    assert own == {"/push", "/metrics"}  # a WebSocket's upgrade, and the monitoring host's
    for path in paths - own:
        example = re.sub(r"\{[^}]+\}", "x", path)
        assert proxied.match(example), f"{path} is not proxied to the server"
    assert not proxied.match("/index.html") and not proxied.match("/js/app.js")
    files = re.search(r"location / \{(.*?)\}", site, re.S).group(1)
    assert re.search(r"try_files \$uri \$uri/index\.html @built_in_client;", files)
    fallback = re.search(r"location @built_in_client \{(.*?)\}", site, re.S).group(1)
    assert "proxy_pass http://kropki_server;" in fallback


def test_the_cluster_site_proxies_what_the_single_site_proxies() -> None:
    cluster = (DEPLOY / "nginx-kropki-cluster.conf").read_text()
    assert re.findall(r"location ~ (\S+)\s*\{", cluster) == [proxied_pattern().pattern]
    assert "hash $kropki_route consistent;" in cluster
    assert "include /etc/nginx/kropki-members.conf;" in cluster


@pytest.mark.parametrize("site_file", ["nginx-kropki.conf", "nginx-kropki-cluster.conf"])
def test_nginx_accepts_the_site(tmp_path: Path, site_file: str) -> None:
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    assert Path(nginx).exists(), "make test installs nginx-light (scripts/ensure-debian-package)"
    site = (DEPLOY / site_file).read_text().replace("/var/log/nginx", str(tmp_path))
    members = DEPLOY / "nginx-kropki-members.conf"  # the cluster's list of members, as shipped
    site = site.replace("/etc/nginx/kropki-members.conf", str(members))
    (tmp_path / "kropki.conf").write_text(site)
    (tmp_path / "nginx.conf").write_text(
        f"pid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log;\nevents {{}}\n"
        f"http {{\n  access_log off;\n  include {tmp_path}/kropki.conf;\n}}\n"
    )

    checked = subprocess.run(
        [nginx, "-t", "-q", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip

    assert checked.returncode == 0, checked.stderr


@pytest.mark.parametrize("unit", ["kropki-server.service"])
def test_the_systemd_unit_migrates_then_serves(unit: str) -> None:
    text = (DEPLOY / unit).read_text()
    assert "ExecStartPre=/srv/kropki/.venv/bin/kropki-server migrate" in text
    assert "ExecStart=/srv/kropki/.venv/bin/kropki-server serve" in text
    assert "User=kropki" in text and "ReadWritePaths=/srv/kropki/data" in text


def unit_environment() -> dict[str, str]:
    unit = (DEPLOY / "kropki-server.service").read_text()
    return dict(
        line.removeprefix("Environment=").split("=", 1)
        for line in unit.splitlines()
        if line.startswith("Environment=")
    )


def test_the_systemd_unit_leaves_open_files_above_the_connection_cap() -> None:
    """Under systemd's default of 1,024 open files the cap would be cut to 768 connections."""
    unit = (DEPLOY / "kropki-server.service").read_text()
    (limit,) = re.findall(r"^LimitNOFILE=(\d+)$", unit, re.M)
    cap = Settings.from_env(unit_environment()).max_connections

    assert cap >= DEFAULT_MAX_CONNECTIONS
    assert connection_cap(cap, int(limit)) == cap  # not cut down to fit the limit
    assert int(limit) >= cap + FILE_RESERVE


def test_the_systemd_unit_trusts_the_nginx_site_in_front_of_it() -> None:
    """The shipped nginx site and unit go together: the server must take the player's address from the
    X-Forwarded-For of the address nginx connects from, and must serve where nginx sends requests."""
    settings = Settings.from_env(unit_environment())
    site = (DEPLOY / "nginx-kropki.conf").read_text()
    upstream = re.search(r"upstream kropki_server \{\s*server ([\d.]+):(\d+);", site)
    assert upstream is not None
    assert (settings.host, settings.port) == (upstream.group(1), int(upstream.group(2)))
    assert settings.trusted_proxies == (upstream.group(1),), (
        "nginx connects from the upstream's loopback address"
    )
    assert "proxy_set_header X-Forwarded-For $remote_addr;" in site


def locations(site: str) -> dict[str, str]:
    """A site's `location` blocks (none has a block inside it): what it matches -> its directives."""
    return {where.strip(): body for where, body in re.findall(r"location ([^{]+)\{(.*?)\n    \}", site, re.S)}


@pytest.mark.parametrize("site_file", ["nginx-kropki.conf", "nginx-kropki-cluster.conf"])
def test_every_request_nginx_forwards_names_its_client(site_file: str) -> None:
    """The server answers /metrics (and applies its limits) by the client nginx names: a location that
    forwarded without naming one would bring the internet in as nginx itself."""
    found = locations((DEPLOY / site_file).read_text())
    metrics = found.pop("= /metrics")
    assert re.findall(r"(allow|deny) (\S+);", metrics) == (
        [("allow", "127.0.0.1"), ("deny", "all")] if site_file == "nginx-kropki.conf" else [("deny", "all")]
    )
    forwarding = {where: body for where, body in found.items() if "proxy_pass" in body}
    assert len(forwarding) == 3  # the server's routes, the push connection and the built-in client
    for where, body in forwarding.items():
        assert "proxy_set_header X-Forwarded-For $remote_addr;" in body, where


async def test_behind_the_shipped_site_the_internet_cannot_read_metrics(
    aiohttp_client: AiohttpClient, settings: Settings
) -> None:
    """As the shipped unit starts the server (trusting nginx at 127.0.0.1), and as nginx forwards."""
    proxies = Settings.from_env(unit_environment()).trusted_proxies
    client = await aiohttp_client(create_app(dataclasses.replace(settings, trusted_proxies=proxies)))
    assert (await client.get("/metrics")).status == 200  # nginx's own /metrics location: no client named
    for forwarded in ("203.0.113.9", "127.0.0.1, 203.0.113.9"):  # $remote_addr; a client's own header too
        assert (await client.get("/metrics", headers={"X-Forwarded-For": forwarded})).status == 403


@contextlib.contextmanager
def shipped_site(tmp_path: Path, site_file: str, server_port: int) -> Iterator[str]:
    """A real nginx running the shipped site in front of the server at `server_port`, as the operator
    installs it (only its addresses and folders moved into `tmp_path`): yields its base URL."""
    port = free_port()
    members = tmp_path / "members.conf"
    members.write_text(f"server 127.0.0.1:{server_port};\n")
    site = (DEPLOY / site_file).read_text().replace("/var/log/nginx", str(tmp_path))
    site = site.replace("listen [::]:80;", "").replace("listen 80;", f"listen 127.0.0.1:{port};")
    site = site.replace("server 127.0.0.1:8080;", f"server 127.0.0.1:{server_port};")
    site = site.replace("/etc/nginx/kropki-members.conf", str(members))
    site = site.replace("/srv/kropki/client", str(tmp_path))
    (tmp_path / "kropki.conf").write_text(site)
    temp = "".join(f"  {kind}_temp_path {tmp_path}/{kind};\n" for kind in ("client_body", "proxy"))
    (tmp_path / "nginx.conf").write_text(
        f"pid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log;\nevents {{}}\n"
        f"http {{\n  access_log off;\n{temp}  include {tmp_path}/kropki.conf;\n}}\n"
    )
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    foreground = "daemon off; master_process off;"
    with (tmp_path / "nginx.out").open("w") as out:  # nginx keeps its own descriptor
        process = subprocess.Popen(
            [nginx, "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf"), "-g", foreground],
            stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


async def first_answer(http: aiohttp.ClientSession, url: str, **headers: str) -> aiohttp.ClientResponse:
    """The answer to a request sent to an nginx that was just started, once it listens."""
    for _ in range(100):
        try:
            return await http.get(url, headers=headers)
        except aiohttp.ClientConnectionError:
            await asyncio.sleep(0.05)
    return await http.get(url, headers=headers)


@pytest.mark.parametrize("site_file", ["nginx-kropki.conf", "nginx-kropki-cluster.conf"])
def test_the_shipped_sites_wait_for_the_server_longer_than_it_stays_quiet(site_file: str) -> None:
    """A long poll is answered within MAX_WAIT (after a cluster's wait for its session) and a push
    connection hears a ping at least every HEARTBEAT times the spread's top: nginx must wait longer for
    the server, or it ends them (a 504 for the poll, a closed socket for /push); and it must not buffer
    what the server sends."""
    found = locations((DEPLOY / site_file).read_text())
    routes = next(body for where, body in found.items() if where.startswith("~ ^/(a\\.kropki"))
    push = found["= /push"]

    def read_timeout(body: str) -> float:
        (seconds,) = re.findall(r"proxy_read_timeout (\d+)s;", body)
        return float(seconds)

    # a cluster's member may first wait for the session to be brought from another (docs/cluster.md)
    brought = BRING_AT_MOST if "cluster" in site_file else 0.0
    assert read_timeout(routes) > brought + MAX_WAIT
    assert read_timeout(push) > HEARTBEAT * KEEP_ALIVE_SPREAD[1]
    assert "proxy_buffering off;" in routes and "proxy_buffering off;" in push


@pytest.mark.parametrize("site_file", ["nginx-kropki.conf", "nginx-kropki-cluster.conf"])
async def test_the_shipped_site_caps_bodies_and_headers_before_the_server(
    aiohttp_client: AiohttpClient, settings: Settings, tmp_path: Path, site_file: str
) -> None:
    """A real nginx with the shipped site: a body over its 64 kB, or a request line or header over its
    40 kB buffers, is refused by nginx, the request after it is served; a long poll (`wait=`) and a poll
    whose request line is as long as the server takes come through."""
    proxies = Settings.from_env(unit_environment()).trusted_proxies
    client = await aiohttp_client(create_app(dataclasses.replace(settings, trusted_proxies=proxies)))
    with shipped_site(tmp_path, site_file, client.server.port) as base:
        async with aiohttp.ClientSession(base_url=base) as http:
            login = await first_answer(http, "/a.kropki?co=guestLogin&idGracza=ala123&opis=*Ala")
            assert await login.text() == "", (tmp_path / "nginx.out").read_text()
            ala = Zagram(http, "ala123", "*Ala")  # type: ignore[arg-type]
            first = await ala.poll()
            waited = await ala.poll(wait="1")  # nothing new: the server answers when the wait is over
            assert (waited.status, waited.last) == ("ok", first.last)
            body = await http.post("/api/bot/pool/join", data=b"x" * (65 * 1024))
            assert body.status == 413
            header = await http.get("/healthz", headers={"X-Padding": "x" * (41 * 1024)})
            assert header.status == 400
            assert (await http.get("/healthz?" + "x" * (41 * 1024))).status == 414  # the request line
            longest = "/a.kropki?co=getMsg&playerId=ala123&msgNo=0&pad=" + "x" * (MAX_REQUEST_LINE - 100)
            assert (await http.get(longest)).status == 200  # what the server takes, nginx passes on
            assert (await http.get("/healthz")).status == 200


@pytest.mark.parametrize("site_file", ["nginx-kropki.conf", "nginx-kropki-cluster.conf"])
async def test_the_shipped_site_logs_no_player_id_when_the_server_cannot_be_reached(
    tmp_path: Path, site_file: str
) -> None:
    """While the server restarts, every poll in flight fails at nginx: its error log wrote each one's
    request line, the player's id in its query string, into the error log of nginx.conf."""
    secret = "SeCrEt" + secrets.token_hex(4)
    with shipped_site(tmp_path, site_file, free_port()) as base:  # nothing listens there
        async with aiohttp.ClientSession(base_url=base) as http:
            poll = await first_answer(http, f"/a.kropki?co=getMsg&idGracza={secret}&msgNo=0&msgFromClient=x")
            assert poll.status == 502
    written = {path.name: path.read_text() for path in tmp_path.iterdir() if path.name.endswith(".log")}
    assert "error.log" in written and "kropki.access.log" in written
    assert [name for name, text in written.items() if secret in text] == []


FORGED = {"X-Forwarded-For": "198.51.100.7", "X-Real-IP": "198.51.100.7", "Forwarded": "for=198.51.100.7"}


@pytest.mark.parametrize("site_file", ["nginx-kropki.conf", "nginx-kropki-cluster.conf"])
async def test_behind_the_shipped_site_a_client_cannot_choose_the_address_the_limits_count(
    aiohttp_client: AiohttpClient, settings: Settings, tmp_path: Path, site_file: str
) -> None:
    """A real nginx with the shipped site, the server trusting it as the shipped unit does, one player
    an address: a client that names another address in its own headers is still counted at its own. A
    site that passed the client's X-Forwarded-For on would let it log in a player from every address
    it names; one that appended its address to the header, from nginx's own host."""
    proxies = Settings.from_env(unit_environment()).trusted_proxies
    limited = dataclasses.replace(settings, trusted_proxies=proxies, unlimited=(), players_per_address=1)
    client = await aiohttp_client(create_app(limited))

    async def login(http: aiohttp.ClientSession, nick: str, **headers: str) -> str:
        url = f"{base}/a.kropki?co=guestLogin&idGracza={nick.lower()}123&opis=*{nick}"
        answer = await first_answer(http, url, **headers)
        assert answer.status == 200, (tmp_path / "nginx.out").read_text()
        return await answer.text()

    def from_address(host: str) -> aiohttp.ClientSession:
        return aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=(host, 0)))

    with shipped_site(tmp_path, site_file, client.server.port) as base:
        async with from_address("127.0.0.2") as far, from_address("127.0.0.1") as near:
            assert await login(far, "Ala", **FORGED) == ""
            assert (await login(far, "Bob", **FORGED | {"X-Forwarded-For": "198.51.100.8"})).startswith(
                "err.tooManyPlayers"
            )
            assert await login(near, "Cid") == ""  # one more address: a player of its own
            assert (await login(near, "Dan", **FORGED)).startswith("err.tooManyPlayers")


@pytest.mark.parametrize("site_file", ["nginx-kropki.conf", "nginx-kropki-cluster.conf"])
async def test_the_shipped_site_passes_a_push_connection_through(
    aiohttp_client: AiohttpClient, settings: Settings, tmp_path: Path, site_file: str
) -> None:
    """A real nginx with the shipped site in front of the server: /push upgrades through it, frames
    come back, and its polls still work beside it (the map keeps their keep-alive)."""
    proxies = Settings.from_env(unit_environment()).trusted_proxies
    client = await aiohttp_client(create_app(dataclasses.replace(settings, trusted_proxies=proxies)))
    with shipped_site(tmp_path, site_file, client.server.port) as base:
        async with aiohttp.ClientSession() as http:
            login = await first_answer(http, f"{base}/a.kropki?co=guestLogin&idGracza=ala123&opis=*Ala")
            assert login.status == 200 and await login.text() == "", (tmp_path / "nginx.out").read_text()
            async with http.ws_connect(f"{base}/push?co=getMsg&idGracza=ala123&msgNo=0") as socket_:
                first = await socket_.receive_str(timeout=10)
                assert first.startswith("ok/m0.") and "*Ala" in first
                await socket_.send_str("c1.0.through nginx")
                said = await socket_.receive_str(timeout=10)
                while not re.match(r"ok/m\d+\.\d+\.1/", said):  # k counts the line once it is stored
                    said = await socket_.receive_str(timeout=10)
                polled = await http.get(f"{base}/a.kropki?co=getMsg&idGracza=ala123&msgNo=0")
                assert "through nginx" in await polled.text()
