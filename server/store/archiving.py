"""A finished game into the archive, with the players' ratings as they were before it; a rated game's
new ratings, results and rating history (docs/ratings.md)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from server.engine.board import BLACK, WHITE
from server.engine.rating import Rating, rate_game, shown
from server.engine.record import renamed, with_bots
from server.engine.sgf import GameRecord, write_record
from server.hub.lineup import colour_of
from server.hub.persistence import Account, FinishedGame
from server.protocol.codec import nick_key
from server.store.accounts import DELETED_NICK, account_of
from server.store.changes import note_change
from server.store.journalrows import Entry, insert_entries
from server.store.models import ArchivedGame, GamePlayer, RatingChange, TournamentTable, User

SCORES = {BLACK: 1.0, WHITE: 0.0, 0: 0.5}


def archive(session: Session, game: FinishedGame, member: int) -> tuple[int, list[Account]]:
    """Store a finished game, with the players' ratings as they were before it; rate it if it counts.
    A team game (unrated) names its teams' first players in the game's row, and all its players in
    `game_players` (docs/teams.md). Returns the game's number and the accounts whose rating changed."""
    if game.players:
        return _archive_team_game(session, game, member)
    (blue_nick, blue), (red_nick, red) = _players(session, (game.blue, game.red), game)
    record = game.record  # the ratings before the game stay in it: the hub's rating line reads them
    if blue is not None:
        record.black_rating = str(shown(_rating(blue)))
    if red is not None:
        record.white_rating = str(shown(_rating(red)))
    rated = game.rated and blue is not None and red is not None and game.result is not None
    changed: list[Account] = []
    if rated:
        assert blue is not None and red is not None and game.result is not None
        score = SCORES[game.result.winner]
        new_blue, new_red = rate_game(_rating(blue), _rating(red), score)
        for user, rating, points in ((blue, new_blue, score), (red, new_red, 1.0 - score)):
            user.rating, user.deviation, user.volatility = rating.rating, rating.deviation, rating.volatility
            if points == 1.0:
                user.wins += 1
            elif points == 0.0:
                user.losses += 1
            else:
                user.draws += 1
            changed.append(account_of(user))
    row = ArchivedGame(
        finished_at=_finished_at(game),
        blue_nick=blue_nick,
        red_nick=red_nick,
        blue_id=blue.id if blue is not None else None,
        red_id=red.id if red is not None else None,
        game_type=game.game_type,
        result=str(game.result) if game.result is not None else None,
        rated=rated,
        tournament=game.tournament,
        sgf=write_record(
            with_bots(
                _renamed(record, ((BLACK, game.blue, blue_nick), (WHITE, game.red, red_nick))),
                _bots(((BLACK, blue_nick, blue), (WHITE, red_nick, red))),
            )
        ),
    )
    session.add(row)
    session.flush()
    if rated:
        assert blue is not None and red is not None
        session.add_all(
            RatingChange(
                user_id=user.id,
                game_number=row.number,
                rated_at=row.finished_at,
                rating=user.rating,
                deviation=user.deviation,
            )
            for user in (blue, red)
        )
    _archived(session, game, row, member)
    return row.number, changed


def _finished_at(game: FinishedGame) -> datetime:
    """When the game ended, not when its write came (after a queue of writes, or a storage failure)."""
    return datetime.fromtimestamp(game.ended_at, UTC) if game.ended_at is not None else datetime.now(UTC)


def _players(session: Session, nicks: Sequence[str], game: FinishedGame) -> list[tuple[str, User | None]]:
    """Each player's name in the archive and account (None: a guest, no such account, or one of
    `game.unowned`, whose seat no account owns any more: a deleted account's, whoever holds the nick now).
    A seat that names its account's number (`game.accounts`) is that account's, whatever its nick now, or,
    if none has the number any more, a deleted account's, named as its other games are
    (docs/operations.md, "Accounts"). Their rows are locked until
    the game is written: another member of a cluster archiving a game of the same player at the same
    moment waits and then rates from the rating this game leaves, instead of writing over it (two wins
    counted as one, tests/store/test_rating_race.py). Every game locks them in the order of their ids,
    so two games of the same two players queue rather than each hold the row the other waits for; a
    batch of several games that meets another member's in the opposite order is a deadlock PostgreSQL
    breaks, and the writer tries that batch again (server/store/outage.py, "transaction conflict")."""
    numbers = {game.accounts[nick] for nick in nicks if nick in game.accounts}
    keys = {
        nick_key(nick)
        for nick in nicks
        if not nick.startswith("*") and nick not in game.unowned and nick not in game.accounts
    }
    found = session.scalars(
        select(User)
        .where(or_(User.id.in_(numbers), User.nick_key.in_(keys), User.login_key.in_(keys)))
        .order_by(User.id)
        .with_for_update()
        .execution_options(populate_existing=True)  # as locked, not as this transaction read it before
    ).all()
    # A player online when their account was renamed plays on under the old nick, the one they log in
    # with, until their next login (docs/operations.md, "Accounts"); no other account holds it.
    by_key = {user.login_key: user for user in found} | {user.nick_key: user for user in found}
    by_number = {user.id: user for user in found}
    named: list[tuple[str, User | None]] = []
    for nick in nicks:
        number = game.accounts.get(nick)
        if nick in game.unowned:
            named.append((nick, None))
        elif number is None:
            named.append((nick, by_key.get(nick_key(nick))))
        elif (user := by_number.get(number)) is not None:
            named.append((nick, user))
        else:
            named.append((f"{DELETED_NICK}{number}", None))
    return named


def _renamed(record: GameRecord, names: Iterable[tuple[int, str, str]]) -> GameRecord:
    """The record naming each (colour, nick, name) player `name`: a deleted account's `deleted<n>`."""
    for colour, nick, name in names:
        if name != nick:
            record = renamed(record, colour, nick, name)
    return record


def _rating(user: User) -> Rating:
    return Rating(user.rating, user.deviation, user.volatility)


def _bots(players: Iterable[tuple[int, str, User | None]]) -> list[tuple[int, str]]:
    """The colour and nick of each player (colour, nick as the record names them, account) who is a
    bot, for the record's root comment (docs/bots.md)."""
    return [(colour, nick) for colour, nick, user in players if user is not None and user.bot]


def _archive_team_game(session: Session, game: FinishedGame, member: int) -> tuple[int, list[Account]]:
    players = _players(session, game.players, game)
    bots = _bots((colour_of(side), name, user) for side, (name, user) in enumerate(players, 1))
    names = [(colour_of(side), nick, players[side - 1][0]) for side, nick in enumerate(game.players, 1)]
    row = ArchivedGame(
        finished_at=_finished_at(game),
        blue_nick=players[0][0],
        red_nick=players[1][0],
        blue_id=None,
        red_id=None,
        game_type=game.game_type,
        result=str(game.result) if game.result is not None else None,
        rated=False,
        tournament=game.tournament,
        sgf=write_record(with_bots(_renamed(game.record, names), bots)),
    )
    session.add(row)
    session.flush()
    for side, (name, user) in enumerate(players, 1):
        session.add(
            GamePlayer(game_number=row.number, side=side, nick=name, user_id=user.id if user else None)
        )
    _archived(session, game, row, member)
    return row.number, []


def _archived(session: Session, game: FinishedGame, row: ArchivedGame, member: int) -> None:
    """What every archived game writes with its row: its tournament table's result (and that the
    organiser cancelled it), and the journal's entry that says the game is in the archive."""
    if game.tournament is not None and game.game_index == 0:
        cancelled = {"cancelled_at": row.finished_at} if game.cancelled else {}
        session.execute(
            update(TournamentTable)
            .where(TournamentTable.uid == game.uid)
            .values(result=row.result, game_number=row.number, moves=game.moves, **cancelled)
        )
        note_change(session.info, game.tournament, game.uid)
    archived = Entry(game.uid, game.journal_seq, "archived", {"number": row.number, "game": game.game_index})
    insert_entries(session, [archived], member)
