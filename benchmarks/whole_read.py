"""A tournament's whole read (`Tournaments.tables(name)`: a director's first wave after a start, a public
page's first build): the event loop's longest stop while it is made, and its CPU.

In this process, on a throwaway SQLite file holding --size tables of "Big cup" (and as many of another
tournament), with the serving process's garbage-collector schedule (server/gcschedule.py). A task wakes
every millisecond meanwhile; its longest wait is how long a player's request would have waited. Each
--page is read --repeat times; a page of every row is the read as it was made before 2026-12-02, at once.

    .venv/bin/python benchmarks/whole_read.py --size 108000 --pages 5000 1000000
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from standings_flood import CUP, fill  # noqa: E402

from server.gcschedule import tune_for_serving  # noqa: E402
from server.store import tournaments  # noqa: E402
from server.store.store import Store  # noqa: E402


async def longest_stop(store: Store) -> tuple[float, float, int]:
    """The loop's longest stop during one whole read, the read's CPU, and its rows."""
    waits: list[float] = []

    async def ticking() -> None:
        while True:
            began = time.perf_counter()
            await asyncio.sleep(0.001)
            waits.append(time.perf_counter() - began - 0.001)

    ticker = asyncio.create_task(ticking())
    await asyncio.sleep(0.01)
    cpu = time.process_time()
    rows = await store.tournaments.tables(CUP)
    cpu = time.process_time() - cpu
    ticker.cancel()
    return max(waits), cpu, len(rows)


async def measure(workdir: Path, size: int, pages: list[int], repeat: int) -> None:
    await fill(workdir, size)
    store = await Store.open(f"sqlite+aiosqlite:///{workdir}/bench.sqlite3")
    try:
        for page in pages:
            tournaments.WHOLE_READ_PAGE = page
            stops, cpus = [], []
            for _ in range(repeat):
                stop, cpu, rows = await longest_stop(store)
                stops.append(stop)
                cpus.append(cpu)
            print(
                f"{rows:,} tables in pages of {page:,}: the loop's longest stop"
                f" {statistics.median(stops) * 1000:.0f} ms (median of {repeat}; {min(stops) * 1000:.0f}"
                f" to {max(stops) * 1000:.0f}), the read's CPU {statistics.median(cpus):.2f} s",
                flush=True,
            )
    finally:
        await store.close()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=108_000)
    parser.add_argument("--pages", type=int, nargs="+", default=[tournaments.WHOLE_READ_PAGE, 1_000_000])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    tune_for_serving()
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(measure(Path(folder), args.size, args.pages, args.repeat))
    return 0


if __name__ == "__main__":
    sys.exit(main())
