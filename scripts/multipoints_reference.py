"""Rebuilds tests/fixtures/multipoints: games played on MultiPoints' capture engine, the independent
reference that tests/engine/test_multipoints.py holds server/engine/board.py to.

MultiPoints (https://github.com/vn971/multipoints, by Vasya Novikov, GNU GPL v2) is a zagram.org
client; its board (`gui/Paper.java`) computes every realm and empty enclosure it draws with its own
engine, `gameEngine/SingleGameEngine.java`, written apart from this project. The fixtures were made
with its master branch at commit 78328d5 (April 2021). This project ships none of its code: the script
compiles that engine (four files) from a checkout together with scripts/multipoints_reference/Harness.java,
which plays the games and prints, after every move, both scores and what each point holds. Then:

    .venv/bin/python scripts/multipoints_reference.py --multipoints /path/to/multipoints

(a work tree or a bare git directory; without --multipoints the script clones the repository into a
temporary folder). It needs `git`, `javac` and `java` (17 was used).

The games, all seeded, so running this again rewrites the same files:

- random.jsonl: every point of the board tried once in a random order, illegal ones skipped, blue
  first, as tests/engine/test_differential.py draws them: 4x4 to 12x12, 20x20 and 39x32 boards;
- dense.jsonl: games on 8x8 to 16x16 boards that Harness.java draws itself (java.util.Random, seeded),
  every dot within 1 to 3 points of the opponent's last one while there is room, until the board is
  full. Of 1,000 such games, those where MultiPoints frees captured dots (a realm round a realm) or
  keeps alive a dot put into the opponent's empty enclosure are kept, and every tenth game besides,
  up to 150: random games seldom reach those rules;
- zagram.jsonl: the dots of the real zagram records in tests/fixtures/sgf (set-up dots first), in
  their order and colours. Most are territory games whose rings were drawn by hand: here their dots
  are played under the automatic rules, up to the first dot those rules forbid (a point inside a
  realm the players never closed), which is written down and ends that game.

Each line is one game: its name, size and moves. A move is "COLOUR+POINT BLUE RED CHANGES": SGF
point, MultiPoints' blue and red scores after it, and every point whose state it changed, as its SGF
point and a letter (Harness.java): `.` free, `1`/`2` free in a blue/red empty enclosure, `,` free
inside a realm, `b`/`r` a live blue/red dot, `B`/`R` a captured one. A move the engine refused is
written "COLOUR+POINT illegal" and ends the game.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from server.engine.moves import point_to_sgf, sgf_to_point  # noqa: E402
from server.engine.sgf import read_record  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "multipoints"
RECORDS = ROOT / "tests" / "fixtures" / "sgf"
HARNESS = Path(__file__).resolve().parent / "multipoints_reference" / "Harness.java"
REPOSITORY = "https://github.com/vn971/multipoints"
COMMIT = "78328d57aee358c6f97eaa47d30227f1aef7e219"
ENGINE = [
    f"src/main/java/ru/narod/vn91/pointsop/{name}.java"
    for name in (
        "gameEngine/SingleGameEngine",
        "gameEngine/SingleGameEngineInterface",
        "gameEngine/RandomMovesProvider",  # SingleGameEngine names it
        "data/Dot",  # and RandomMovesProvider this one
    )
]


@dataclass(frozen=True)
class Game:
    name: str
    width: int
    height: int
    tokens: list[str]  # Harness.java's input: ?x,y (side to move, skipped if illegal) or Bx,y / Wx,y


def random_games() -> list[Game]:
    games = []
    for seed in range(240):
        width, height = 4 + seed % 9, 4 + seed // 9 % 9
        games.append(shuffled(f"random-{width}x{height}-{seed}", width, height, seed))
    games += [shuffled(f"random-20x20-{seed}", 20, 20, seed) for seed in range(1000, 1008)]
    games += [shuffled(f"random-39x32-{seed}", 39, 32, seed) for seed in range(2000, 2003)]
    # benchmarks/pool_walls.py's game (the same shuffle): its move 361 makes a realm round a pool walled
    # only by the borders of older realms, which docs/rules.md swallows and oppai-rs would not
    games.append(shuffled("random-20x20-31463", 20, 20, 31463))
    return games


def shuffled(name: str, width: int, height: int, seed: int) -> Game:
    rng = random.Random(seed)
    points = [(x, y) for y in range(height) for x in range(width)]
    rng.shuffle(points)
    return Game(name, width, height, [f"?{x},{y}" for x, y in points])


def near_games() -> list[Game]:
    """Candidates for dense.jsonl: games Harness.java draws itself, each dot near the opponent's last."""
    games = []
    for seed in range(NEAR_SEEDS, NEAR_SEEDS + NEAR_CANDIDATES):
        rng = random.Random(seed)
        width, height = rng.randint(8, 16), rng.randint(8, 16)
        radius = rng.choice((1, 2, 3))
        games.append(Game(f"near-{width}x{height}-{seed}", width, height, ["near", str(seed), str(radius)]))
    return games


NEAR_SEEDS = 30_000
NEAR_CANDIDATES = 1_000
DENSE_GAMES = 150


def rare_events(entry: dict[str, object]) -> int:
    """How often the game frees captured dots or keeps alive a dot put in the opponent's empty
    enclosure (by MultiPoints' own account): the rules random games seldom reach."""
    state: dict[str, str] = {}
    found = 0
    for move in entry["moves"]:  # type: ignore[attr-defined]
        point, _, _, *rest = move.split(" ")
        text = rest[0] if rest else ""
        changes = {text[i : i + 2]: text[i + 2] for i in range(0, len(text), 3)}
        enemy_pool = "2" if point[0] == "B" else "1"
        if state.get(point[1:], ".") == enemy_pool and changes.get(point[1:]) in ("b", "r"):
            found += 1
        found += sum(1 for at, letter in changes.items() if letter in "br" and state.get(at, ".") in "BR")
        state.update(changes)
    return found


def dense(entries: list[dict[str, object]]) -> list[dict[str, object]]:
    """Every game with a rare event, and every tenth game besides, up to DENSE_GAMES."""
    kept = [entry for number, entry in enumerate(entries) if rare_events(entry) or number % 10 == 0]
    return kept[:DENSE_GAMES]


def zagram_games() -> list[Game]:
    games = []
    for path in sorted(RECORDS.glob("*.sgf")):
        record = read_record(path.read_text(encoding="utf-8"))
        size = (record.width, record.height)
        tokens = [f"B{x},{y}" for x, y in (sgf_to_point(p, *size) for p in record.black_setup)]
        tokens += [f"W{x},{y}" for x, y in (sgf_to_point(p, *size) for p in record.white_setup)]
        for move in record.moves:
            if len(move.value) >= 2 and move.value[0] != ".":  # a dot (a ring alone puts none)
                x, y = sgf_to_point(move.value[:2], *size)
                tokens.append(f"{move.colour}{x},{y}")
        games.append(Game(path.stem, record.width, record.height, tokens))
    return games


def checkout(multipoints: Path | None, folder: Path) -> Path:
    """A git directory holding MultiPoints' commit: the one given, or a fresh clone."""
    if multipoints is None:
        multipoints = folder / "multipoints"
        cloned = subprocess.run(
            ["git", "clone", "--quiet", REPOSITORY, str(multipoints)], capture_output=True
        )
        if cloned.returncode:
            sys.exit(
                f"cannot clone {REPOSITORY} ({cloned.stderr.decode().strip()}); give --multipoints a checkout"
            )
    found = subprocess.run(
        ["git", "rev-parse", "--absolute-git-dir"], cwd=multipoints, capture_output=True, text=True
    )
    if found.returncode:
        sys.exit(f"{multipoints} is not a git checkout of MultiPoints: {found.stderr.strip()}")
    return Path(found.stdout.strip())


def compile_harness(git_dir: Path, folder: Path) -> Path:
    sources = []
    for name in ENGINE:
        shown = subprocess.run(
            ["git", f"--git-dir={git_dir}", "show", f"{COMMIT}:{name}"], capture_output=True, text=True
        )
        if shown.returncode:
            sys.exit(f"MultiPoints {COMMIT[:7]} has no {name}: {shown.stderr.strip()}")
        source = folder / "src" / name
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text(shown.stdout, encoding="utf-8")
        sources.append(str(source))
    classes = folder / "classes"
    subprocess.run(["javac", "-nowarn", "-d", str(classes), *sources, str(HARNESS)], check=True)
    return classes


def play(classes: Path, games: list[Game]) -> list[list[str]]:
    """Harness.java's lines for each game (one per token)."""
    given = "".join(f"{game.width} {game.height} {' '.join(game.tokens)}\n" for game in games)
    done = subprocess.run(
        ["java", "-cp", str(classes), "Harness"], input=given, capture_output=True, text=True, check=True
    )
    answers: list[list[str]] = []
    current: list[str] = []
    for line in done.stdout.splitlines():
        if line == "end":
            answers.append(current)
            current = []
        else:
            current.append(line)
    return answers


def fixture_entry(game: Game, answers: list[str]) -> dict[str, object]:
    """The game as the fixtures hold it: only the moves played, each with what it changed."""
    if game.tokens[0] == "near":  # the harness drew the moves and names each one's point
        answers = [answer.replace(" ", "", 1) for answer in answers]
        tokens = [answer.split(" ", 1)[0] for answer in answers]
        answers = [answer[0] + answer[answer.index(" ") :] for answer in answers]
    else:
        tokens = game.tokens
    before = "." * (game.width * game.height)
    moves = []
    for token, answer in zip(tokens, answers, strict=True):
        if answer == "skip":
            continue
        x, y = (int(part) for part in token[1:].split(","))
        if answer == "illegal":
            moves.append(f"{token[0]}{point_to_sgf((x, y))} illegal")
            break
        colour, blue, red, state = answer.split()
        changes = "".join(
            point_to_sgf((i % game.width, i // game.width)) + letter
            for i, (letter, old) in enumerate(zip(state, before, strict=True))
            if letter != old
        )
        moves.append(f"{colour}{point_to_sgf((x, y))} {blue} {red} {changes}")
        before = state
    return {"game": game.name, "size": [game.width, game.height], "moves": moves}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--multipoints", type=Path, help="a checkout of MultiPoints (default: clone it)")
    parser.add_argument("--out", type=Path, default=FIXTURES, help="where to write (default: %(default)s)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        classes = compile_harness(checkout(args.multipoints, folder), folder)
        for name, games in (("random", random_games()), ("dense", near_games()), ("zagram", zagram_games())):
            entries = [
                fixture_entry(game, answers)
                for game, answers in zip(games, play(classes, games), strict=True)
            ]
            if name == "dense":
                entries = dense(entries)
            lines = [json.dumps(entry, separators=(",", ":")) for entry in entries]
            (args.out / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
            moves = sum(len(entry["moves"]) for entry in entries)  # type: ignore[arg-type]
            print(f"{name}.jsonl: {len(entries)} games, {moves} moves")


if __name__ == "__main__":
    main()
