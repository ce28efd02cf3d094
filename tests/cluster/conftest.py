"""A real redis-server per test, never a mock: what the cluster layer must survive (a restart that loses
every key, a server that is gone) is what a mock would get wrong; on request with a password or over
TLS only, with a certificate authority made for the test; and a real nginx in front of the members,
with the shipped site (deploy/nginx-kropki-cluster.conf)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from redis import Redis
from redis.exceptions import RedisError

from server.config import Settings
from tests.ports import free_port

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"

MISSING = (
    "redis-server is missing: `make test` installs it "
    "(scripts/ensure-debian-package redis-server redis-server)"
)
READY_TIMEOUT = 5.0  # seconds a redis-server may take to answer its first PING
CLUSTER_SECRET = "test-cluster-secret-0123456789abcdef0123456789abcdef"  # what the tests' members share
ACL_RULES = "~kropki:* &kropki:* +@all -@dangerous"  # docs/cluster.md, "Redis: a password, TLS"


def _answers(url: str) -> bool:
    client = Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5)
    try:
        return bool(client.ping())
    except (RedisError, OSError):
        return False
    finally:
        client.close()


@dataclass(frozen=True)
class Certificates:
    """A certificate authority of the test's own, a server certificate it signed for 127.0.0.1, and
    another authority that signed nothing here (a client trusting it trusts no server of the test)."""

    ca: Path
    server_certificate: Path
    server_key: Path
    other_ca: Path


def make_certificates(folder: Path) -> Certificates:
    """With the openssl command line: throwaway keys, valid for a day."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.fail("openssl is missing: `make test` installs it (Makefile, test-packages)")
    folder.mkdir(exist_ok=True)

    def run(*arguments: str) -> None:
        subprocess.run([openssl, *arguments], cwd=folder, check=True, capture_output=True, timeout=60)

    new_key = ("-newkey", "rsa:2048", "-nodes", "-days", "1")
    authority = (*new_key, "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    run("req", "-x509", *authority, "-keyout", "ca.key", "-out", "ca.pem", "-subj", "/CN=kropki test CA")
    run("req", "-x509", *authority, "-keyout", "other.key", "-out", "other.pem", "-subj", "/CN=not trusted")
    run("req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", "redis.key", "-out", "redis.csr",
        "-subj", "/CN=localhost")  # fmt: skip
    # made as an authority makes them: Python 3.13 checks certificates strictly (VERIFY_X509_STRICT), and
    # refuses an authority without its key usage and a certificate that does not name its authority's key
    extensions = ["subjectAltName=IP:127.0.0.1,DNS:localhost", "authorityKeyIdentifier=keyid,issuer"]
    (folder / "san.cnf").write_text("\n".join([*extensions, "basicConstraints=CA:FALSE", ""]))
    run("x509", "-req", "-in", "redis.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-days", "1", "-out", "redis.pem", "-extfile", "san.cnf")  # fmt: skip
    return Certificates(folder / "ca.pem", folder / "redis.pem", folder / "redis.key", folder / "other.pem")


class RedisServer:
    """A redis-server of a test's own, keeping nothing on disk, so a restart comes back empty; with a
    `password` it refuses clients without it, with `certificates` it speaks TLS only."""

    def __init__(
        self,
        executable: str,
        folder: Path,
        *,
        password: str | None = None,
        certificates: Certificates | None = None,
    ) -> None:
        self.executable = executable
        self.folder = folder
        self.port = free_port()
        self.password = password
        self.certificates = certificates
        self.url = self.url_with(password)
        self.log = folder / "redis-server.log"
        self._process: subprocess.Popen[bytes] | None = None

    def url_with(self, password: str | None, ca: Path | None = None) -> str:
        """The URL a member is given, as docs/cluster.md says to write it."""
        auth = "" if password is None else f":{password}@"
        if self.certificates is None:
            return f"redis://{auth}127.0.0.1:{self.port}/0"
        return f"rediss://{auth}127.0.0.1:{self.port}/0?ssl_ca_certs={ca or self.certificates.ca}"

    def acl_user(self, name: str, password: str, rules: str) -> str:
        """Adds an ACL user with `rules` (as docs/cluster.md gives them); the URL a member then uses."""
        with Redis.from_url(self.url) as admin:
            admin.execute_command("ACL", "SETUSER", name, "on", f">{password}", *rules.split())
        return self.url.replace(f":{self.password}@", f"{name}:{password}@", 1)

    def start(self) -> None:
        """Starts it on this server's port and waits until it answers."""
        assert self._process is None, "redis-server is already running"
        command = [self.executable, "--bind", "127.0.0.1", "--save", ""]
        command += ["--appendonly", "no", "--dir", str(self.folder)]
        if self.password is not None:
            command += ["--requirepass", self.password]
        tls = self.certificates
        if tls is None:
            command += ["--port", str(self.port)]
        else:
            command += ["--port", "0", "--tls-port", str(self.port), "--tls-auth-clients", "no"]
            command += ["--tls-cert-file", str(tls.server_certificate), "--tls-key-file", str(tls.server_key)]
            command += ["--tls-ca-cert-file", str(tls.ca)]
        with self.log.open("ab") as output:
            self._process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + READY_TIMEOUT
        while not _answers(self.url):
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(
                    f"redis-server on port {self.port} did not answer PING within {READY_TIMEOUT} s:\n"
                    + self.log.read_text(errors="replace")[-2000:]
                )
            time.sleep(0.02)

    def stop(self) -> None:
        """Kills it as a crash would (SIGKILL) and waits until it is gone."""
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def pause(self) -> None:
        """Freezes it (SIGSTOP): connections are accepted by the kernel, but no call is ever answered."""
        assert self._process is not None, "redis-server is not running"
        self._process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self._process is not None, "redis-server is not running"
        self._process.send_signal(signal.SIGCONT)


def _redis_executable() -> str:
    executable = shutil.which("redis-server") or (
        "/usr/bin/redis-server" if Path("/usr/bin/redis-server").exists() else None
    )
    if executable is None:
        pytest.fail(MISSING)
    return executable


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(_redis_executable(), tmp_path)
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_with_password(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server that refuses every client without its password (`--requirepass`)."""
    server = RedisServer(_redis_executable(), tmp_path, password="kropki-test-password")
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_over_tls(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server that speaks TLS only, with a certificate of the test's own authority, and a
    password (a TLS port without one is open to anyone who can reach it)."""
    certificates = make_certificates(tmp_path / "tls")
    server = RedisServer(
        _redis_executable(), tmp_path, password="kropki-test-password", certificates=certificates
    )
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres(settings: Settings) -> Settings:
    """The test's settings, on PostgreSQL only: a cluster's members share a PostgreSQL database."""
    if not settings.db_url.startswith("postgresql"):
        pytest.skip("a cluster's members share a PostgreSQL database: scripts/with-postgres runs these")
    return settings


class Nginx:
    """nginx with the shipped cluster site, listening on a loopback port, its upstream the given
    members' ports; `members` again and it reloads, as an operator does after adding or removing one."""

    def __init__(self, executable: str, folder: Path) -> None:
        self.executable, self.folder = executable, folder
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._process: subprocess.Popen[bytes] | None = None

    def members(self, ports: list[int]) -> None:
        members = (DEPLOY / "nginx-kropki-members.conf").read_text()
        line = next(line for line in members.splitlines() if line.startswith("server "))
        servers = "".join(re.sub(r"127\.0\.0\.1:\d+", f"127.0.0.1:{port}", line) + "\n" for port in ports)
        (self.folder / "kropki-members.conf").write_text(servers)
        site = (DEPLOY / "nginx-kropki-cluster.conf").read_text()
        site = site.replace("/etc/nginx/kropki-members.conf", str(self.folder / "kropki-members.conf"))
        site = site.replace("    listen 80;\n    listen [::]:80;\n", f"    listen 127.0.0.1:{self.port};\n")
        # upstream failures into error.log for errors(): the shipped site keeps them out (they hold ids)
        site = site.replace("/var/log/nginx/kropki.error.log crit;", f"{self.folder}/error.log error;")
        site = site.replace("/var/log/nginx", str(self.folder)).replace(
            "/srv/kropki/client", str(self.folder)
        )
        (self.folder / "kropki.conf").write_text(site)
        user = "user root;\n" if os.geteuid() == 0 else ""  # workers reading the test's folders
        (self.folder / "nginx.conf").write_text(
            f"{user}pid {self.folder}/nginx.pid;\nerror_log {self.folder}/error.log;\nevents {{}}\n"
            f"http {{\n  include {self.folder}/kropki.conf;\n}}\n"
        )
        if self._process is None:
            command = [self.executable, "-p", str(self.folder), "-c", str(self.folder / "nginx.conf")]
            self._process = subprocess.Popen([*command, "-g", "daemon off;"])
            deadline = time.monotonic() + READY_TIMEOUT
            while not _listens(self.port):
                assert self._process.poll() is None and time.monotonic() < deadline, self.errors()
                time.sleep(0.02)
        else:
            self._process.send_signal(signal.SIGHUP)
            time.sleep(0.5)  # the new workers take over; the old ones finish their requests

    def errors(self) -> str:
        log = self.folder / "error.log"
        return log.read_text(errors="replace")[-2000:] if log.exists() else ""

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=10)
            self._process = None


def _listens(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


@pytest.fixture
def nginx(tmp_path: Path) -> Iterator[Nginx]:
    executable = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(executable).exists():
        pytest.fail(
            "nginx is missing: `make test` installs it (scripts/ensure-debian-package nginx nginx-light)"
        )
    folder = tmp_path / "nginx"
    folder.mkdir()
    front = Nginx(executable, folder)
    try:
        yield front
    finally:
        front.stop()
