"""Rebuilds tests/fixtures/swiss: swiss tournaments paired by bbpPairings, the reference that
tests/engine/test_swiss.py holds server/engine/swiss.py to.

bbpPairings (https://github.com/BieremaBoyzProgramming/bbpPairings, by Bierema Boyz Programming,
Apache-2.0) is a FIDE-endorsed engine for the Dutch system; the fixtures were made with its master
branch at commit 16a000f (February 2026), which pairs by the Dutch rules in force since 2025
("FIDE_DUTCH_2025"). This project ships neither its code nor a build of it: get it from that
repository and build it as its README says. It reads and writes files only. Then:

    .venv/bin/python scripts/swiss_reference.py --bbp /path/to/bbpPairings.exe

For every tournament in TOURNAMENTS (players, rounds, a seed and the generator's rates of forfeited
games, of players absent for a round with 0 points ("retired" rounds) and of half-point byes):

1. bbpPairings' random tournament generator (`--dutch -g CONFIG -o FILE -s SEED`) pairs every round
   itself and invents the results, and writes the tournament as a TRF (FIDE's tournament report file);
2. the total of rounds (`142`) and the initial colour (`152 W` or `152 B`) are added: the colour is the
   one under which bbpPairings' checker (`-c`) finds every round's pairing its own;
3. every round is paired again from the rounds before it (`-p`), which gives bbpPairings' board order
   and confirms the pairing in the file.

Written: NAME.trf for each tournament and boards.json (for each tournament, each round's boards as
[white, black] pairing numbers in board order, and the bye). The generator draws the same tournament
from the same seed, so running this again rewrites the same files.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "swiss"
ROUNDS_FROM = 91  # 0-based column of a player line's first round; each round takes 10 columns


@dataclass(frozen=True)
class Spec:
    name: str
    players: int
    rounds: int
    seed: int
    forfeit_rate: int = 0  # 1 game in N is forfeited (by one side or both); 0: none
    retired_rate: int = 0  # 1 player in N is absent for some rounds; 0: none
    half_bye_rate: int = 0  # 1 player in N takes a half-point bye; 0: none
    bye_points: str = ""  # points of the pairing-allocated bye, when not a win's


TOURNAMENTS = [
    Spec("p09-r05", 9, 5, 101),
    Spec("p09-r07-absent", 9, 7, 102, retired_rate=4),
    Spec("p10-r05-forfeits", 10, 5, 103, forfeit_rate=6),
    Spec("p11-r07-mixed", 11, 7, 104, forfeit_rate=8, retired_rate=5, half_bye_rate=5),
    Spec("p12-r09", 12, 9, 105),
    Spec("p13-r06-byes", 13, 6, 106, half_bye_rate=3),
    Spec("p14-r07-mixed", 14, 7, 107, forfeit_rate=10, retired_rate=4, half_bye_rate=4),
    Spec("p15-r07-halfpab", 15, 7, 108, forfeit_rate=10, bye_points="0.5"),
    Spec("p16-r07", 16, 7, 109),
    Spec("p17-r09-mixed", 17, 9, 110, forfeit_rate=10, retired_rate=10, half_bye_rate=10),
    Spec("p19-r11", 19, 11, 111),
    Spec("p20-r08-forfeits", 20, 8, 112, forfeit_rate=5),
    Spec("p21-r09-mixed", 21, 9, 113, forfeit_rate=8, retired_rate=10, half_bye_rate=10),
    Spec("p23-r05-absent", 23, 5, 114, retired_rate=3),
    Spec("p24-r07-mixed", 24, 7, 115, forfeit_rate=15, retired_rate=6, half_bye_rate=6),
    Spec("p25-r11-mixed", 25, 11, 116, forfeit_rate=10, retired_rate=10, half_bye_rate=10),
    Spec("p28-r09", 28, 9, 117),
    Spec("p30-r09-halfpab", 30, 9, 118, retired_rate=5, bye_points="0.5"),
    Spec("p31-r10-mixed", 31, 10, 119, forfeit_rate=12, retired_rate=8, half_bye_rate=8),
    Spec("p35-r07-forfeits", 35, 7, 120, forfeit_rate=4),
    Spec("p37-r09", 37, 9, 121),
    Spec("p40-r09-mixed", 40, 9, 122, forfeit_rate=10, retired_rate=10, half_bye_rate=10),
    Spec("p41-r11-forfeits", 41, 11, 123, forfeit_rate=20),
    Spec("p45-r08-mixed", 45, 8, 124, forfeit_rate=10, retired_rate=4, half_bye_rate=4),
    Spec("p50-r09-mixed", 50, 9, 125, forfeit_rate=15, retired_rate=10, half_bye_rate=10),
    Spec("p55-r11-mixed", 55, 11, 126, forfeit_rate=10, retired_rate=5, half_bye_rate=5),
    Spec("p59-r07", 59, 7, 127),
    Spec("p60-r11-mixed", 60, 11, 128, forfeit_rate=12, retired_rate=8, half_bye_rate=8),
]


def run(bbp: Path, *arguments: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(bbp), *map(str, arguments)], capture_output=True, text=True, timeout=600)


def generate(bbp: Path, spec: Spec, folder: Path) -> list[str]:
    """The generated tournament's lines (bbpPairings ends them with CR)."""
    settings = [f"PlayersNumber={spec.players}", f"RoundsNumber={spec.rounds}", "DrawPercentage=30"]
    for key, value in (
        ("ForfeitRate", spec.forfeit_rate),
        ("RetiredRate", spec.retired_rate),
        ("HalfPointByeRate", spec.half_bye_rate),
    ):
        if value:
            settings.append(f"{key}={value}")
    if spec.bye_points:
        settings.append(f"PointsForPAB={spec.bye_points}")
    config = folder / "config.txt"
    config.write_text("\n".join(settings) + "\n")
    output = folder / "generated.trf"
    done = run(bbp, "--dutch", "-g", config, "-o", output, "-s", str(spec.seed))
    if done.returncode:
        sys.exit(f"{spec.name}: the generator failed: {done.stderr.strip()}")
    text = output.read_text(encoding="utf-8")
    return [line for line in text.replace("\r", "\n").split("\n") if line.strip()]


def rounds_of(line: str) -> list[str]:
    """A player line's rounds, 10 columns each: '  opp c r'."""
    return [
        line[start : start + 10] for start in range(ROUNDS_FROM - 2, len(line), 10) if line[start:].strip()
    ]


def points(entry: str, bye_points: Fraction) -> Fraction:
    result = entry[-1]
    if result == "U":
        return bye_points
    return {
        "1": Fraction(1),
        "+": Fraction(1),
        "F": Fraction(1),
        "=": Fraction(1, 2),
        "H": Fraction(1, 2),
    }.get(result, Fraction(0))


def paired(entry: str) -> bool:
    """Paired in that round: a game (played or forfeited) or the pairing-allocated bye."""
    return entry[2:6].strip() != "0000" or entry[-1] == "U"


def truncated(lines: list[str], upto: int, bye_points: Fraction, extra: list[str]) -> str:
    """The tournament as it stood before pairing round `upto + 1`: its first `upto` rounds, and the
    players known to be absent from that round already marked so (bbpPairings' input for `-p`)."""
    out = []
    for line in lines:
        if not line.startswith("001"):
            if line[:3] not in ("142", "152"):
                out.append(line)
            continue
        entries = rounds_of(line)
        kept = entries[:upto]
        if len(entries) > upto and not paired(entries[upto]):
            kept.append(entries[upto])
        score = sum((points(entry, bye_points) for entry in kept), Fraction(0))
        out.append(f"{line[:80]}{float(score):4.1f}{line[84:89]}{''.join(kept)}")
    return "\n".join(out + extra) + "\n"


def boards_of(pairings: str) -> tuple[list[list[int]], int | None]:
    """bbpPairings' `-p` output: the number of pairs, then 'white black' per board, 'player 0' for the bye."""
    rows = [line.split() for line in pairings.strip().splitlines()[1:]]
    boards = [[int(white), int(black)] for white, black in rows if black != "0"]
    byes = [int(player) for player, black in rows if black == "0"]
    return boards, byes[0] if byes else None


def round_pairs(lines: list[str], index: int) -> tuple[set[tuple[int, int]], int | None]:
    """The pairing of round `index + 1` as the generated file records it."""
    pairs: set[tuple[int, int]] = set()
    bye = None
    for line in lines:
        if line.startswith("001"):
            entry = rounds_of(line)[index]
            number = int(line[4:8])
            if entry[-1] == "U":
                bye = number
            elif paired(entry) and entry[7] == "w":
                pairs.add((number, int(entry[2:6])))
    return pairs, bye


def build(bbp: Path, spec: Spec, folder: Path) -> tuple[str, list[dict[str, object]]]:
    lines = generate(bbp, spec, folder)
    bye_points = Fraction(spec.bye_points or "1")
    extra = [f"142 {spec.rounds}"]  # the generator writes its point system (162) itself
    for colour in ("W", "B"):
        candidate = folder / "candidate.trf"
        candidate.write_text("\n".join(lines + extra + [f"152 {colour}"]) + "\n")
        checked = run(bbp, "--dutch", candidate, "-c")
        report = [line for line in checked.stdout.splitlines() if ": Round #" not in line and line.strip()]
        if checked.returncode == 0 and not report:
            extra.append(f"152 {colour}")
            break
    else:
        sys.exit(f"{spec.name}: bbpPairings' checker disagrees with its own tournament under either colour")
    rounds = []
    for index in range(spec.rounds):
        source = folder / "round.trf"
        source.write_text(truncated(lines, index, bye_points, extra))
        output = folder / "round.out"
        done = run(bbp, "--dutch", source, "-p", output)
        if done.returncode:
            sys.exit(f"{spec.name}: pairing round {index + 1} failed: {done.stderr.strip()}")
        boards, bye = boards_of(output.read_text())
        if ({tuple(board) for board in boards}, bye) != round_pairs(lines, index):
            sys.exit(f"{spec.name}: round {index + 1} paired again differs from the generated one")
        rounds.append({"boards": boards, "bye": bye})
    return "\n".join(lines + extra) + "\n", rounds


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--bbp", type=Path, required=True, help="the bbpPairings executable")
    parser.add_argument("--out", type=Path, default=FIXTURES, help="where to write (default: %(default)s)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    banner = run(args.bbp).stdout.strip() or run(args.bbp).stderr.strip()
    everything: dict[str, object] = {"made by": banner.split(" (Built")[0], "tournaments": {}}
    for spec in TOURNAMENTS:
        with tempfile.TemporaryDirectory() as folder:
            trf, rounds = build(args.bbp, spec, Path(folder))
        (args.out / f"{spec.name}.trf").write_text(trf, encoding="utf-8")
        everything["tournaments"][spec.name] = rounds  # type: ignore[index]
        print(f"{spec.name}: {spec.players} players, {spec.rounds} rounds")
    (args.out / "boards.json").write_text(as_json(everything), encoding="utf-8")


def as_json(everything: dict[str, object]) -> str:
    """One line per round, so that a changed pairing shows as a changed line."""
    tournaments: dict[str, list[object]] = everything["tournaments"]  # type: ignore[assignment]
    lines = ["{", f' "made by": {json.dumps(everything["made by"])},', ' "tournaments": {']
    for place, (name, rounds) in enumerate(tournaments.items()):
        lines.append(f"  {json.dumps(name)}: [")
        for index, round_ in enumerate(rounds):
            comma = "," if index < len(rounds) - 1 else ""
            lines.append(f"   {json.dumps(round_, separators=(',', ':'))}{comma}")
        lines.append("  ]" + ("," if place < len(tournaments) - 1 else ""))
    lines += [" }", "}"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
