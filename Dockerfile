# syntax=docker/dockerfile:1

# Build stage: the project and all its dependencies as wheels, so the runtime image needs no compiler
# and no network. Every dependency is the version requirements/server.txt pins, checked against its
# hashes (docs/operations.md, "Installing: the locked dependencies"); the project's wheel is built with
# the setuptools and wheel of requirements/build.txt.
# Python 3.13: from 3.12 aiohttp starts each request's handler at once, which took the p99 of a move
# under 2,000 games on polls down by 40% against 3.11 (docs/operations.md, "The Python interpreter").
FROM python:3.13-slim AS build
WORKDIR /src
COPY requirements ./requirements
RUN pip install --no-cache-dir --require-hashes -r requirements/build.txt \
    && pip wheel --no-cache-dir --require-hashes --only-binary :all: --wheel-dir /wheels -r requirements/server.txt
COPY pyproject.toml README.md NOTICE ./
COPY server ./server
COPY migrations ./migrations
RUN pip wheel --no-cache-dir --no-deps --no-build-isolation --wheel-dir /wheels/project .

# Runtime stage: the locked wheels, checked against the lock's hashes again, then the project alone.
FROM python:3.13-slim
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
# A fixed uid and gid (docs/operations.md, "Docker"): a folder of the host mounted on /data must be theirs.
RUN groupadd --system --gid 10001 kropki \
    && useradd --system --uid 10001 --gid kropki --create-home --home-dir /home/kropki \
        --shell /usr/sbin/nologin kropki \
    && install -d -o kropki -g kropki /data
COPY --from=build /wheels /wheels
COPY --from=build /src/requirements/server.txt /wheels/requirements.txt
RUN pip install --no-cache-dir --no-index --find-links /wheels --require-hashes -r /wheels/requirements.txt \
    && pip install --no-cache-dir --no-index --no-deps /wheels/project/kropki_server-*.whl \
    && rm -rf /wheels
USER kropki
WORKDIR /home/kropki
VOLUME /data
ENV KROPKI_DB=sqlite+aiosqlite:////data/kropki.sqlite3 \
    KROPKI_HOST=0.0.0.0
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
    CMD python -c "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('KROPKI_PORT', '8080'), timeout=4)"
# --migrate: a new image brings the database schema up to date before it serves.
CMD ["kropki-server", "serve", "--migrate"]
