"""The command line: argument handling, settings resolution, and a real `serve` process end to end."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from server import __version__
from server.cli import build_parser, main
from server.config import ConfigError, Settings, sqlite_data_dir
from server.serveflags import resolve_log_level, resolve_settings
from tests.ports import free_port

REPO_ROOT = Path(__file__).resolve().parent.parent


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])

    assert exit_info.value.code == 0
    assert capsys.readouterr().out == f"kropki-server {__version__}\n"


def test_serve_help_lists_flags_and_their_environment_variables(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["serve", "--help"])

    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for text in ("--host", "--port", "--db", "--log-level", "KROPKI_HOST", "KROPKI_PORT", "KROPKI_DB"):
        assert text in out


def test_no_command_prints_help_and_returns_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2

    out = capsys.readouterr().out
    assert out.startswith("usage: kropki-server")
    assert "serve" in out and "replay" in out


@pytest.mark.parametrize("port", ["0", "65536", "http", "-1"])
def test_bad_port_flag_is_a_usage_error(port: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["serve", "--port", port])

    assert exit_info.value.code == 2
    assert f"port must be an integer from 1 to 65535, got '{port}'" in capsys.readouterr().err


def test_bad_port_in_environment_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KROPKI_PORT", "99999")

    with pytest.raises(SystemExit) as exit_info:
        main(["serve"])

    assert exit_info.value.code == 2
    assert "KROPKI_PORT: port must be an integer from 1 to 65535, got '99999'" in capsys.readouterr().err


def test_bad_database_url_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["serve", "--db", "not a url"])

    assert exit_info.value.code == 2
    assert "not a database URL: 'not a url'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--redis-url", "redis://127.0.0.1:6379/0"],
            "the members of a cluster share one PostgreSQL database",
        ),
        (["--redis-url", "http://redis:6379"], "--redis-url must be a URL like redis://HOST:6379/0"),
        (["--redis-url", "redis://"], "--redis-url must be a URL like redis://HOST:6379/0"),
        (
            ["--redis-url", "redis://:pw@cache:6379/0?ssl_ca_certs=/etc/ca.pem"],
            "--redis-url: ssl_ca_certs is for TLS, which is rediss://HOST:PORT/DB",
        ),
        (
            ["--redis-url", "rediss://:pw@cache:6379/0?ssl_ca_certs=/nowhere/ca.pem"],
            "--redis-url: ssl_ca_certs: there is no file '/nowhere/ca.pem'",
        ),
        (["--member", "a b"], "--member must be 1-100 letters, digits and . _ : -"),
    ],
)
def test_cluster_flags_are_checked_before_anything_starts(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["serve", *argv])

    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


CLUSTER = ["--db", "postgresql+asyncpg://k@db/kropki", "--redis-url", "redis://127.0.0.1:6379/0"]


def secret_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "cluster-secret"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("secret", "message"),
    [
        (None, "the members of a cluster sign what they tell each other with a secret they share: give "
         "it with --cluster-secret-file PATH (KROPKI_CLUSTER_SECRET_FILE) or KROPKI_CLUSTER_SECRET, at "
         "least 32 characters: make one with `openssl rand -hex 32`"),
        ("short-secret\n", "a secret of 12 characters is too short, it needs at least 32: make one with "
         "`openssl rand -hex 32`"),
        ("\n\n", "holds no secret: make one with `openssl rand -hex 32`"),
        ("a" * 32 + "\n" + "b" * 32 + "\n" + "c" * 32 + "\n", "holds 3 secrets: one, or two while"),
    ],
)  # fmt: skip
def test_a_cluster_without_a_good_secret_is_refused_before_anything_starts(
    secret: str | None, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flags = [] if secret is None else ["--cluster-secret-file", secret_file(tmp_path, secret)]
    with pytest.raises(SystemExit) as exit_info:
        main(["serve", *CLUSTER, *flags])

    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert message in error and error.count("\n") == 1, error


def test_an_unreadable_secret_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["serve", *CLUSTER, "--cluster-secret-file", str(tmp_path / "missing")])

    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert f"--cluster-secret-file: cannot read '{tmp_path / 'missing'}': No such file" in error


def test_the_cluster_secret_comes_from_a_file_or_the_environment(tmp_path: Path) -> None:
    new, old = "n" * 64, "o" * 40
    path = secret_file(tmp_path, f"{new}\n{old}\n")  # two while the secret is changed: the first signs
    settings = resolve(["--cluster-secret-file", path], {"KROPKI_CLUSTER_SECRET": "e" * 32})
    assert settings.cluster_secrets == (new, old)  # the flag beats the environment
    assert resolve([], {"KROPKI_CLUSTER_SECRET": "e" * 32}).cluster_secrets == ("e" * 32,)
    assert resolve([], {"KROPKI_CLUSTER_SECRET_FILE": path}).cluster_secrets == (new, old)
    assert new not in repr(settings) and old not in repr(settings)
    with pytest.raises(ConfigError, match="CLUSTER_SECRET and KROPKI_CLUSTER_SECRET_FILE are both set"):
        Settings.from_env({"KROPKI_CLUSTER_SECRET": "e" * 32, "KROPKI_CLUSTER_SECRET_FILE": path})
    with pytest.raises(ConfigError, match="KROPKI_CLUSTER_SECRET: a secret of 5 characters is too short"):
        Settings.from_env({"KROPKI_CLUSTER_SECRET": "short"})


@pytest.mark.parametrize("command", [["serve"], ["migrate"]])
def test_libpq_tls_options_in_an_asyncpg_url_are_refused(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(
            [*command, "--db", "postgresql+asyncpg://k:pw@db/kropki?sslmode=verify-full&sslrootcert=/ca.pem"]
        )

    assert exit_info.value.code == 2
    assert (
        "--db: asyncpg does not take sslmode, sslrootcert: write ?ssl=verify-full (or require), and give "
        "the certificate authority's file in the environment, PGSSLROOTCERT=PATH"
    ) in capsys.readouterr().err


def test_cluster_settings_come_from_the_environment_too() -> None:
    args = build_parser().parse_args(["serve", "--db", "postgresql+asyncpg://k@db/kropki"])
    environ = {"KROPKI_REDIS_URL": "redis://cache:6379/1", "KROPKI_MEMBER": "kropki-2"}
    settings = resolve_settings(args, environ)
    assert (settings.redis_url, settings.member_name) == ("redis://cache:6379/1", "kropki-2")
    alone = resolve_settings(args, {})
    assert (alone.redis_url, alone.member_name) == (None, None)
    unnamed = resolve_settings(
        build_parser().parse_args(["serve", "--port", "8082"]), environ | {"KROPKI_MEMBER": ""}
    )
    assert unnamed.member_name == f"{socket.gethostname()}:8082"


DEFAULT_DB = f"sqlite+aiosqlite:///{Path.cwd() / 'data' / 'kropki.sqlite3'}"  # ./data, made absolute


def resolve(argv: list[str], environ: dict[str, str]) -> Settings:
    return resolve_settings(build_parser().parse_args(["serve", *argv]), environ)


def test_defaults_are_safe() -> None:
    assert resolve([], {}) == Settings(host="127.0.0.1", port=8080, db_url=DEFAULT_DB)


def test_environment_beats_defaults() -> None:
    environ = {"KROPKI_HOST": "0.0.0.0", "KROPKI_PORT": "9000", "KROPKI_DB": "sqlite+aiosqlite:////srv/k.db"}

    assert resolve([], environ) == Settings(host="0.0.0.0", port=9000, db_url="sqlite+aiosqlite:////srv/k.db")


def test_flags_beat_environment() -> None:
    environ = {"KROPKI_HOST": "0.0.0.0", "KROPKI_PORT": "9000", "KROPKI_DB": "sqlite+aiosqlite:////srv/k.db"}
    argv = ["--host", "::1", "--port", "9001", "--db", "sqlite+aiosqlite:///k.db"]

    assert resolve(argv, environ) == Settings(
        host="::1", port=9001, db_url=f"sqlite+aiosqlite:///{Path.cwd()}/k.db"
    )


def test_flags_and_environment_mix_per_setting() -> None:
    assert resolve(["--port", "9001"], {"KROPKI_HOST": "10.0.0.1", "KROPKI_PORT": "9000"}) == Settings(
        host="10.0.0.1", port=9001, db_url=DEFAULT_DB
    )


def test_log_level_resolution() -> None:
    parser = build_parser()

    assert resolve_log_level(parser.parse_args(["serve"]), {}) == "INFO"
    assert resolve_log_level(parser.parse_args(["serve"]), {"KROPKI_LOG_LEVEL": "debug"}) == "DEBUG"
    args = parser.parse_args(["serve", "--log-level", "warning"])
    assert resolve_log_level(args, {"KROPKI_LOG_LEVEL": "debug"}) == "WARNING"
    with pytest.raises(ConfigError, match="KROPKI_LOG_LEVEL"):
        resolve_log_level(parser.parse_args(["serve"]), {"KROPKI_LOG_LEVEL": "loud"})


@pytest.mark.parametrize(
    ("url", "directory"),
    [
        ("sqlite+aiosqlite:///./data/kropki.sqlite3", Path("data")),
        ("sqlite+aiosqlite:////data/kropki.sqlite3", Path("/data")),
        ("sqlite:///x.sqlite3", Path(".")),
        ("sqlite+aiosqlite:///:memory:", None),
        ("sqlite://", None),
        ("sqlite:///file:k?mode=memory&uri=true", None),
        ("postgresql+asyncpg://kropki@localhost/kropki", None),
    ],
)
def test_sqlite_data_dir(url: str, directory: Path | None) -> None:
    assert sqlite_data_dir(url) == directory


def wait_for_healthz(url: str, process: subprocess.Popen[str]) -> tuple[int, object, str | None]:
    """Poll ``url`` until the server answers; fail early if it exits, or after 30 s (a start, migrations
    included, took over 15 s once while make test's parts ran side by side on two cores)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(url, timeout=1) as response:
                return response.status, json.load(response), response.headers["Cache-Control"]
        except (urllib.error.URLError, ConnectionError):
            assert process.poll() is None, f"server exited early: {process.communicate()}"
            assert time.monotonic() < deadline, "server did not answer /healthz within 30 s"
            time.sleep(0.1)


def test_serve_runs_a_real_server_and_stops_on_sigterm(tmp_path: Path) -> None:
    port = free_port()
    data_dir = tmp_path / "data"
    env = {key: value for key, value in os.environ.items() if not key.startswith("KROPKI_")}
    command = [sys.executable, "-m", "server", "serve", "--migrate", "--port", str(port)]
    command += ["--db", f"sqlite+aiosqlite:///{data_dir}/x.sqlite3"]
    process = subprocess.Popen(
        command, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        answer = wait_for_healthz(f"http://127.0.0.1:{port}/healthz?idGracza=SECRET77", process)

        assert answer == (200, {"status": "ok", "version": __version__}, "no-store")
        assert data_dir.is_dir()

        process.send_signal(signal.SIGTERM)
        stdout, stderr = process.communicate(timeout=15)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()

    assert process.returncode == 0
    assert stdout == ""
    assert f"listening on http://127.0.0.1:{port}" in stderr
    assert 'method=GET target="/healthz?idGracza=***" status=200 ' in stderr
    assert "SECRET77" not in stderr
    upgrades = [line.split(" ", 2)[2] for line in stderr.splitlines() if "Running upgrade" in line]
    assert len(upgrades) == len(set(upgrades)) > 0 and "Context impl" not in stderr  # Alembic's, once
    assert stderr.count("database schema revision=") == 1
    line_format = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} level=[A-Z]+ logger=\S+ \S.*")
    assert [line for line in stderr.splitlines() if not line_format.fullmatch(line)] == []


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {key: value for key, value in os.environ.items() if not key.startswith("KROPKI_")}
    return subprocess.run(
        [sys.executable, "-m", "server", *args],
        cwd=REPO_ROOT,
        env={**environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_serve_refuses_a_database_without_the_schema_and_says_to_migrate(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path}/old.sqlite3"

    refused = run_cli("serve", "--port", str(free_port()), "--db", url)

    assert refused.returncode == 1
    assert "run `kropki-server migrate`" in refused.stderr
    assert "listening" not in refused.stderr


def test_a_port_in_use_or_a_database_out_of_reach_is_one_line_saying_what_to_change(
    tmp_path: Path,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path}/k.sqlite3"
    assert run_cli("migrate", "--db", url).returncode == 0
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        in_use = run_cli("serve", "--port", str(port), "--db", url)
    unreachable = run_cli(
        "serve", "--port", str(free_port()), "--db", "postgresql+asyncpg://kropki:hunter22@127.0.0.1:1/kropki"
    )

    assert in_use.returncode == 1 and "Traceback" not in in_use.stderr
    assert in_use.stderr.splitlines()[-1] == (
        f"kropki-server: error: cannot listen on 127.0.0.1:{port}: the address is in use (another server "
        "listens there); choose another with --host/--port (KROPKI_HOST/KROPKI_PORT) or stop the other server"
    )
    assert unreachable.returncode == 1 and "Traceback" not in unreachable.stderr
    last = unreachable.stderr.splitlines()[-1]
    assert last.startswith(
        "kropki-server: error: cannot use the database at postgresql+asyncpg://kropki:***@"
    )
    assert "check --db or KROPKI_DB" in last and "hunter22" not in unreachable.stderr


def test_a_static_folder_that_is_not_a_folder_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "serve",
                "--static",
                str(tmp_path / "missing"),
                "--db",
                f"sqlite+aiosqlite:///{tmp_path}/k.sqlite3",
            ]
        )

    assert exit_info.value.code == 2
    assert "is not a directory" in capsys.readouterr().err


def test_ai_workers_from_flag_environment_or_default() -> None:
    assert resolve([], {}).ai_workers == 1
    assert resolve([], {"KROPKI_AI_WORKERS": "0"}).ai_workers == 0  # no AI players
    assert resolve(["--ai-workers", "3"], {"KROPKI_AI_WORKERS": "0"}).ai_workers == 3
    assert resolve(["--ai-workers", "0"], {"KROPKI_AI_WORKERS": "2"}).ai_workers == 0


def test_bots_rated_from_flag_environment_or_default() -> None:
    assert resolve([], {}).bots_rated is False
    assert resolve([], {"KROPKI_BOTS_RATED": "1"}).bots_rated is True
    assert resolve([], {"KROPKI_BOTS_RATED": "no"}).bots_rated is False
    assert resolve(["--bots-rated"], {"KROPKI_BOTS_RATED": "0"}).bots_rated is True
    with pytest.raises(ConfigError, match="KROPKI_BOTS_RATED must be 1 or 0"):
        resolve([], {"KROPKI_BOTS_RATED": "maybe"})


@pytest.mark.parametrize("value", ["x", "-1", "65", "1.5", ""])
def test_bad_ai_workers_are_refused(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["serve", "--ai-workers", value])
    assert exit_info.value.code == 2
    assert "--ai-workers must be a whole number from 0 to 64" in capsys.readouterr().err
    if value:
        with pytest.raises(ConfigError, match="KROPKI_AI_WORKERS must be a whole number"):
            resolve([], {"KROPKI_AI_WORKERS": value})


def test_failed_login_limits_from_flags_environment_or_defaults() -> None:
    def limits(settings: Settings) -> tuple[int, int, int]:
        return (
            settings.failed_logins_per_address,
            settings.failed_logins_per_account,
            settings.failed_login_max_wait,
        )

    environ = {
        "KROPKI_FAILED_LOGINS_PER_ADDRESS": "20",
        "KROPKI_FAILED_LOGINS_PER_ACCOUNT": "3",
        "KROPKI_FAILED_LOGIN_MAX_WAIT": "3600",
    }
    flags = [
        "--failed-logins-per-address",
        "30",
        "--failed-logins-per-account",
        "8",
        "--failed-login-max-wait",
        "60",
    ]

    assert limits(resolve([], {})) == (10, 5, 900)
    assert limits(resolve([], environ)) == (20, 3, 3600)
    assert limits(resolve(flags, environ)) == (30, 8, 60)


@pytest.mark.parametrize("value", ["0", "-1", "x", "1.5", "86401", "²"])
def test_bad_failed_login_limits_are_refused(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["serve", "--failed-login-max-wait", value])
    assert exit_info.value.code == 2
    assert "--failed-login-max-wait must be a whole number from 1 to 86400" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="KROPKI_FAILED_LOGINS_PER_ACCOUNT must be a whole number"):
        resolve([], {"KROPKI_FAILED_LOGINS_PER_ACCOUNT": "0" if value == "86401" else value})


def test_a_relative_database_path_is_made_absolute_once() -> None:
    args = build_parser().parse_args(["user", "--db", "sqlite+aiosqlite:///rel/k.sqlite3", "show", "x"])
    assert resolve_settings(args, {}).db_url == f"sqlite+aiosqlite:///{Path.cwd() / 'rel' / 'k.sqlite3'}"
    assert resolve_settings(build_parser().parse_args(["user", "show", "x"]), {}).db_url == DEFAULT_DB
    postgres = "postgresql+asyncpg://kropki:secret@db/kropki"
    assert (
        resolve_settings(build_parser().parse_args(["user", "--db", postgres, "show", "x"]), {}).db_url
        == postgres
    )


# whole-number flags: the setting, its default (max_connections is then fitted below the open-file limit
# at start; public_rate is in megabytes a second, server/web/budget.py)
WHOLE_FLAGS = [("max_connections", 10_000), ("public_rate", 64)]


@pytest.mark.parametrize(("setting", "default"), WHOLE_FLAGS)
def test_whole_number_settings_from_flag_environment_or_default(setting: str, default: int) -> None:
    flag, variable = "--" + setting.replace("_", "-"), "KROPKI_" + setting.upper()
    assert getattr(resolve([], {}), setting) == default
    assert getattr(resolve([], {variable: "500"}), setting) == 500
    assert getattr(resolve([flag, "20"], {variable: "500"}), setting) == 20


@pytest.mark.parametrize("setting", [setting for setting, _ in WHOLE_FLAGS])
@pytest.mark.parametrize("value", ["0", "-1", "x", "1.5", "1000001", "²"])
def test_bad_whole_numbers_are_refused(setting: str, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    flag, variable = "--" + setting.replace("_", "-"), "KROPKI_" + setting.upper()
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["serve", flag, value])
    assert exit_info.value.code == 2
    assert f"{flag} must be a whole number from 1 to 1000000" in capsys.readouterr().err
    with pytest.raises(ConfigError, match=f"{variable} must be a whole number"):
        resolve([], {variable: value})


def test_event_loop_from_flag_environment_or_default() -> None:
    assert resolve([], {}).event_loop == "auto"
    assert resolve([], {"KROPKI_EVENT_LOOP": "asyncio"}).event_loop == "asyncio"
    assert resolve(["--event-loop", "uvloop"], {"KROPKI_EVENT_LOOP": "asyncio"}).event_loop == "uvloop"


@pytest.mark.parametrize("value", ["", "UVLOOP", "trio", "auto "])
def test_bad_event_loops_are_refused(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["serve", "--event-loop", value])
    assert exit_info.value.code == 2
    assert "--event-loop must be one of auto, uvloop, asyncio" in capsys.readouterr().err
    if value:
        with pytest.raises(ConfigError, match="KROPKI_EVENT_LOOP must be one of"):
            resolve([], {"KROPKI_EVENT_LOOP": value})


@pytest.mark.parametrize(
    ("choice", "loop"), [("asyncio", "asyncio"), ("uvloop", "uvloop"), ("auto", "uvloop")]
)
def test_serve_plays_on_the_event_loop_chosen(tmp_path: Path, choice: str, loop: str) -> None:
    """make install brings uvloop (the `fast` extra), so `auto` picks it; the log names the loop."""
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith("KROPKI_")}
    command = [sys.executable, "-m", "server", "serve", "--migrate", "--port", str(port), "--ai-workers", "0"]
    command += ["--db", f"sqlite+aiosqlite:///{tmp_path}/x.sqlite3", "--event-loop", choice]
    process = subprocess.Popen(
        command, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_for_healthz(f"http://127.0.0.1:{port}/healthz", process)
        base = f"http://127.0.0.1:{port}/a.kropki?"
        with urllib.request.urlopen(base + "co=guestLogin&idGracza=loop1&opis=*Ala", timeout=10) as login:
            assert login.read() == b""
        with urllib.request.urlopen(base + "co=getMsg&idGracza=loop1&msgNo=0", timeout=10) as poll:
            assert poll.read().startswith(b"ok/m")
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=15)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0
    assert f"event loop loop={loop} configured={choice}" in stderr


def test_uvloop_asked_for_where_it_is_not_installed_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None if name == "uvloop" else real(name))
    with pytest.raises(ConfigError, match="uvloop is not installed"):
        resolve([], {"KROPKI_EVENT_LOOP": "uvloop"})
    assert resolve([], {"KROPKI_EVENT_LOOP": "auto"}).event_loop == "auto"  # auto falls back at start


def test_metrics_from_from_flags_environment_or_none(capsys: pytest.CaptureFixture[str]) -> None:
    assert resolve([], {}).metrics_from == ()
    from_env = resolve([], {"KROPKI_METRICS_FROM": "10.0.0.0/8, fd00::/8"})
    assert from_env.metrics_from == ("10.0.0.0/8", "fd00::/8")
    flags = ["--metrics-from", "192.0.2.7", "--metrics-from", "198.51.100.9/24"]
    assert resolve(flags, {"KROPKI_METRICS_FROM": "10.0.0.0/8"}).metrics_from == (
        "192.0.2.7/32",
        "198.51.100.0/24",
    )
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["serve", "--metrics-from", "everyone"])
    assert exit_info.value.code == 2
    assert "not a network (CIDR" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="KROPKI_METRICS_FROM: not a network"):
        resolve([], {"KROPKI_METRICS_FROM": "10.0.0.0/33"})


def test_banned_words_come_from_a_file_named_by_flag_or_environment(tmp_path: Path) -> None:
    flagged, named = tmp_path / "flagged.txt", tmp_path / "named.txt"
    flagged.write_text("# words no chat line may hold\n\ngold\n  spam*  \ncheap pills\n", encoding="utf-8")
    named.write_text("золото\n", encoding="utf-8")
    settings = resolve(["--banned-words", str(flagged)], {"KROPKI_BANNED_WORDS": str(named)})
    assert settings.banned_words == ("gold", "spam*", "cheap pills")  # the flag beats the environment
    assert resolve([], {"KROPKI_BANNED_WORDS": str(named)}).banned_words == ("золото",)
    assert resolve([], {}).banned_words == ()
    assert "gold" not in repr(settings)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (None, "cannot read"),
        (b"\xff\xfe gold", "is not UTF-8 text"),
        ("gold\n*** \n", "line 2 of"),
        (f"gold\n{'x' * 101}\n", "line 2 of"),
    ],
)
def test_a_banned_words_file_that_cannot_be_read_stops_serve(
    tmp_path: Path, text: str | bytes | None, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "banned.txt"
    if isinstance(text, bytes):
        path.write_bytes(text)
    elif text is not None:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(SystemExit) as exit_info:
        main(["serve", "--banned-words", str(path)])

    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert "--banned-words: " in error and message in error, error
    with pytest.raises(ConfigError, match=f"KROPKI_BANNED_WORDS: .*{message}"):
        Settings.from_env({"KROPKI_BANNED_WORDS": str(path)})


def test_the_times_of_a_player_who_left_from_flags_environment_or_defaults() -> None:
    assert (resolve([], {}).away_after, resolve([], {}).claim_after) == (40, 60)
    from_env = resolve([], {"KROPKI_AWAY_AFTER": "31", "KROPKI_CLAIM_AFTER": "5"})
    assert (from_env.away_after, from_env.claim_after) == (31, 5)
    flags = resolve(["--away-after", "120", "--claim-after", "300"], {"KROPKI_AWAY_AFTER": "31"})
    assert (flags.away_after, flags.claim_after) == (120, 300)


def test_the_id_hash_cost_from_a_flag_the_environment_or_the_default() -> None:
    assert resolve([], {}).id_hash_cost == 14
    assert resolve([], {"KROPKI_ID_HASH_COST": "16"}).id_hash_cost == 16
    assert resolve(["--id-hash-cost", "10"], {"KROPKI_ID_HASH_COST": "16"}).id_hash_cost == 10


@pytest.mark.parametrize("value", ["9", "18", "0", "x", "14.0", "١٤"])
def test_an_id_hash_cost_out_of_range_is_refused(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["serve", "--id-hash-cost", value])
    assert exit_info.value.code == 2
    assert "--id-hash-cost must be a whole number from 10 to 17" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="KROPKI_ID_HASH_COST must be a whole number from 10 to 17"):
        resolve([], {"KROPKI_ID_HASH_COST": value})


@pytest.mark.parametrize("value", ["30", "0", "601", "x", "40.5"])
def test_an_away_time_a_long_poll_could_outlast_is_refused(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["serve", "--away-after", value])
    assert exit_info.value.code == 2
    assert "--away-after must be a whole number from 31 to 600" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="KROPKI_AWAY_AFTER must be a whole number from 31 to 600"):
        resolve([], {"KROPKI_AWAY_AFTER": value})
