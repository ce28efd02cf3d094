"""The database schema as SQLAlchemy models; Alembic's migrations in `migrations/` own the real tables."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, DateTime, Float, ForeignKey, Index, Integer, String, Text, false
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class User(Base):
    """A registered player. `secret_hash` is a salted scrypt hash of the id: the id itself is never kept."""

    __tablename__ = "users"
    # SQLite gives no number twice (0017): a deleted account's games name it `deleted<id>`
    __table_args__ = {"sqlite_autoincrement": True}

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    nick: Mapped[str] = mapped_column(String(20))
    nick_key: Mapped[str] = mapped_column(String(80), unique=True)  # NFKC + casefold: one owner per look
    # The nick the id was derived from (clients hash nick + password): after an admin's rename the
    # player still logs in with it, and nobody else may take it.
    login_key: Mapped[str] = mapped_column(String(80), unique=True)
    # The nick's UTS #39 look (codec.look_key: at most 4 characters for each of 20): no account may
    # look like another. NULL for the younger of two look-alikes registered before that rule (0004).
    look_key: Mapped[str | None] = mapped_column(String(80), unique=True, index=True)
    secret_hash: Mapped[str] = mapped_column(String(200))
    email: Mapped[str] = mapped_column(String(200), default="")
    lang: Mapped[str] = mapped_column(String(2), default="en")
    avatar: Mapped[str] = mapped_column(String(40), default="")
    about: Mapped[str] = mapped_column(Text, default="")
    registered_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    rating: Mapped[float] = mapped_column(Float)
    deviation: Mapped[float] = mapped_column(Float)
    volatility: Mapped[float] = mapped_column(Float)
    wins: Mapped[int] = mapped_column(Integer, default=0)
    draws: Mapped[int] = mapped_column(Integer, default=0)
    losses: Mapped[int] = mapped_column(Integer, default=0)
    role: Mapped[str] = mapped_column(String(10), default="none")  # none, moderator, admin
    bot: Mapped[bool] = mapped_column(Boolean, default=False)  # plays through the bot API (docs/bots.md)
    # SHA-256 of the bot's token, in hex (a token is random, not a password); None: no token issued
    bot_token_hash: Mapped[str | None] = mapped_column(String(64), unique=True, index=True)
    # private lines from guests are refused (docs/protocol.md, "Private lines from guests"; 0018)
    refuses_guest_privates: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # a JSON list of the nick keys the account had before (an admin's renames), in the order left: its seats
    # under them at other members' tables move at its login (Mirrors.follow_rename; 0021)
    former: Mapped[str] = mapped_column(Text, default="[]", server_default="[]")


class Sanction(Base):
    """A mute, kick, ban or lobby chat mode (docs/moderation.md). Its target: an account (`user_id`, which
    follows a rename), a nick and its look-alikes (`look_key`), or an address or network (`network`, in
    CIDR form); a lobby mode has none. `key` names it to every server that applies it, once each."""

    __tablename__ = "sanctions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(32), unique=True)
    kind: Mapped[str] = mapped_column(String(10))  # mute, kick, ban, registered, slow
    target: Mapped[str] = mapped_column(String(100))  # as the moderator named it
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    look_key: Mapped[str | None] = mapped_column(String(80))
    network: Mapped[str | None] = mapped_column(String(50))
    seconds: Mapped[int | None] = mapped_column(Integer)  # the slow mode's seconds between lines
    starts_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    ends_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))  # None: for good
    reason: Mapped[str] = mapped_column(Text)
    made_by: Mapped[str] = mapped_column(String(40))
    lifted_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    lifted_by: Mapped[str | None] = mapped_column(String(40))

    __table_args__ = (Index("ix_sanctions_lifted_at_ends_at", "lifted_at", "ends_at"),)


class ModerationEntry(Base):
    """One line of the moderation log: every sanction, lift and change of role, who did it and why."""

    __tablename__ = "moderation_log"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    actor: Mapped[str] = mapped_column(String(40))
    action: Mapped[str] = mapped_column(String(20))
    target: Mapped[str] = mapped_column(String(100))
    detail: Mapped[str] = mapped_column(String(100))
    reason: Mapped[str] = mapped_column(Text)


class Report(Base):
    """A player's report of a chat line or of a player (docs/moderation.md, "Reports"), with the lines
    around it as the reporter's server had them then (`context`, JSON), so that a moderator on any member
    reads them after any restart. Open until a moderator closes it with an action and a note."""

    __tablename__ = "reports"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    made_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    reporter: Mapped[str] = mapped_column(String(40))
    reporter_key: Mapped[str] = mapped_column(String(80))  # nick_key: the limits count by it
    reporter_network: Mapped[str] = mapped_column(String(50))  # "" when not known
    reported: Mapped[str] = mapped_column(String(40))
    # a reported guest's network when reported, which a ban on closing covers; "" when not known (0016)
    reported_network: Mapped[str] = mapped_column(String(50), server_default="")
    place: Mapped[str] = mapped_column(String(50))  # "0" the lobby, "17" a table, "_<nick>" private
    line: Mapped[str] = mapped_column(String(30))  # the line's time_n; "" for a report of a player
    reason: Mapped[str] = mapped_column(Text)
    context: Mapped[str] = mapped_column(Text)  # JSON: the quoted lines
    closed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    closed_by: Mapped[str | None] = mapped_column(String(40))
    action: Mapped[str | None] = mapped_column(String(10))  # none, delete, mute, kick, ban
    note: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (
        Index("ix_reports_closed_at", "closed_at"),
        Index("ix_reports_reporter_key_made_at", "reporter_key", "made_at"),
        Index("ix_reports_reporter_network_made_at", "reporter_network", "made_at"),
    )


class IgnoredPlayer(Base):
    """A player a registered player ignores (docs/protocol.md, "Ignoring"), kept for all their sessions;
    by the ignored nick's nick_key (NFKC + casefold), with the nick as it was shown. A guest's list
    lives with the guest's session (`sessions.ignored`)."""

    __tablename__ = "ignored_players"

    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    nick_key: Mapped[str] = mapped_column(String(80), primary_key=True)
    nick: Mapped[str] = mapped_column(String(40))
    ignored_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ArchivedGame(Base):
    """A finished game: its number is the one players see in the lobby's `x` line and in `/sgf/<n>`."""

    __tablename__ = "games"

    number: Mapped[int] = mapped_column(Integer, primary_key=True)
    finished_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    blue_nick: Mapped[str] = mapped_column(String(40))  # a team game: side 1 (all its players: GamePlayer)
    red_nick: Mapped[str] = mapped_column(String(40))
    blue_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    red_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    game_type: Mapped[str] = mapped_column(String(200))
    result: Mapped[str | None] = mapped_column(String(20))
    rated: Mapped[bool] = mapped_column(Boolean, default=False)
    tournament: Mapped[str | None] = mapped_column(String(200))
    sgf: Mapped[str] = mapped_column(Text)

    __table_args__ = (
        Index("ix_games_blue_id", "blue_id", "number"),
        Index("ix_games_red_id", "red_id", "number"),
        Index("ix_games_tournament", "tournament", "number"),  # a tournament's records, a page at a time
    )


class GamePlayer(Base):
    """A player of an archived team game, by side (docs/teams.md): the archive lists the game under each
    of them. Games of two have no rows: their `games` row names both players."""

    __tablename__ = "game_players"

    game_number: Mapped[int] = mapped_column(ForeignKey("games.number", ondelete="CASCADE"), primary_key=True)
    side: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    nick: Mapped[str] = mapped_column(String(40))
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))

    __table_args__ = (
        Index("ix_game_players_nick", "nick", "game_number"),
        Index("ix_game_players_user_id", "user_id", "game_number"),
    )


class RatingChange(Base):
    """A registered player's rating after a rated game: the player page's graph (written with the game)."""

    __tablename__ = "rating_changes"

    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    game_number: Mapped[int] = mapped_column(ForeignKey("games.number", ondelete="CASCADE"), primary_key=True)
    rated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    rating: Mapped[float] = mapped_column(Float)
    deviation: Mapped[float] = mapped_column(Float)


class LiveTable(Base):
    """Every game table ever opened, so that table numbers are never reused across restarts."""

    __tablename__ = "tables"

    uid: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    opened_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    closed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    owner: Mapped[int] = mapped_column(Integer, server_default="0")  # the member that runs it (Member.id)


class JournalEntry(Base):
    """One accepted action at a live table, in order; (uid, seq) makes a rewrite harmless."""

    __tablename__ = "journal"

    # The cluster member whose entry it is (0: a server alone). A table's journal is its owner's; the
    # journals of the lobby's chat, private chat and sessions' k (uid <= 0) are each member's own.
    member: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False, server_default="0")
    uid: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    kind: Mapped[str] = mapped_column(String(20))
    data: Mapped[str] = mapped_column(Text)


class JournalSetAside(Base):
    """A journal entry that could not be read or replayed at a start: kept here for inspection, out of the
    way of the entries that still restore their table."""

    __tablename__ = "journal_set_aside"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    member: Mapped[int] = mapped_column(Integer, server_default="0")
    uid: Mapped[int] = mapped_column(Integer, index=True)
    seq: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(20))
    data: Mapped[str] = mapped_column(Text)
    reason: Mapped[str] = mapped_column(String(300))
    set_aside_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class TournamentKey(Base):
    """An organiser's key for setUpTable; only its SHA-256 is kept (the key itself is random and long)."""

    __tablename__ = "tournament_keys"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(80), unique=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    tournament: Mapped[str | None] = mapped_column(String(200))  # the only tournament it may set up
    registered_only: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class TournamentTable(Base):
    """A table set up for a tournament, and how its tournament game ended: what organisers read back."""

    __tablename__ = "tournament_tables"
    # a tournament's rows changed since a count: what an arena's wave reads (server/store/changes.py)
    __table_args__ = (Index("ix_tournament_tables_changes", "tournament", "changed"),)

    uid: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    # an index of its own too: a whole read (an organiser's, a director's first) comes in uid order from it
    tournament: Mapped[str] = mapped_column(String(200), index=True)
    round: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    blue: Mapped[str] = mapped_column(String(200))  # a team: its nicks joined by ", " (docs/teams.md)
    red: Mapped[str] = mapped_column(String(200))
    game_type: Mapped[str] = mapped_column(String(200))
    result: Mapped[str | None] = mapped_column(String(20))
    game_number: Mapped[int | None] = mapped_column(Integer)
    cancelled_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))  # by the organiser
    moves: Mapped[int | None] = mapped_column(Integer)  # of its tournament game, once archived
    # its tournament's count of changes (`tournament_changes`) when it was last written; 0: before 0022
    changed: Mapped[int] = mapped_column(BigInteger, server_default="0")


class TournamentChange(Base):
    """A tournament's count of the transactions that changed its tables (server/store/changes.py)."""

    __tablename__ = "tournament_changes"

    tournament: Mapped[str] = mapped_column(String(200), primary_key=True)
    count: Mapped[int] = mapped_column(BigInteger)


class LiveSession(Base):
    """A logged-in player's session, so that it survives a restart. Keyed by an HMAC-SHA256 of the id
    under the server's key (`server_state`): the id itself is never kept. Deleted at logout and time-out."""

    __tablename__ = "sessions"

    id_hmac: Mapped[str] = mapped_column(String(64), primary_key=True)
    nick: Mapped[str] = mapped_column(String(40))
    lang: Mapped[str] = mapped_column(String(8))
    registered: Mapped[bool] = mapped_column(Boolean)
    free: Mapped[bool] = mapped_column(Boolean)
    client: Mapped[str] = mapped_column(String(8))
    tables: Mapped[str] = mapped_column(Text)  # JSON list of table numbers
    blocked: Mapped[str] = mapped_column(Text)  # JSON list of nick keys
    ignored: Mapped[str] = mapped_column(Text, server_default="[]")  # a guest's: JSON list of nicks
    last_command: Mapped[int] = mapped_column(BigInteger)  # clients number commands with up to 12 digits
    quiet_since: Mapped[float | None] = mapped_column(Float)  # wall time; see SavedSession
    owner: Mapped[int] = mapped_column(Integer, server_default="0")  # the member that serves it (Member.id)
    # JSON: {"host", "network", "networks", "unlimited"} (hub.persistence.SessionOrigin); NULL for a
    # session saved before revision 0011
    origin: Mapped[str | None] = mapped_column(Text)


class Member(Base):
    """A cluster member that has served this database, by its name (docs/cluster.md); its number marks
    what it owns. A server alone is member 0 and has no row."""

    __tablename__ = "members"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    joined_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ServerState(Base):
    """A few named values of the server itself: the sessions' HMAC key, the event numbers reserved,
    the last heartbeat."""

    __tablename__ = "server_state"

    name: Mapped[str] = mapped_column(String(40), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class HostedTournament(Base):
    """A tournament the server runs itself, swiss or arena (docs/tournaments.md, "Tournaments the
    server runs"). Its games are tournament tables (`tournament_tables.tournament` = `name`)."""

    __tablename__ = "hosted_tournaments"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    kind: Mapped[str] = mapped_column(String(10))  # swiss | arena
    game_type: Mapped[str] = mapped_column(String(200))
    rounds: Mapped[int] = mapped_column(Integer)  # swiss: rounds to play; arena: 0
    minutes: Mapped[int] = mapped_column(Integer)  # arena: its length; swiss: 0
    starts_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    min_rating: Mapped[int | None] = mapped_column(Integer)
    max_rating: Mapped[int | None] = mapped_column(Integer)
    registered_only: Mapped[bool] = mapped_column(Boolean)
    say_hi: Mapped[int] = mapped_column(Integer)  # seconds before a player's clock runs in each game
    created_by: Mapped[str] = mapped_column(String(100))  # the key's name, or the moderator's nick
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    # registering | running | finished | cancelled; the round being played (swiss), 0 before the first
    state: Mapped[str] = mapped_column(String(12))
    round: Mapped[int] = mapped_column(Integer, default=0)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class HostedEntry(Base):
    """A player registered for a hosted tournament; withdrawn players keep their row (and results)."""

    __tablename__ = "hosted_entries"
    __table_args__ = (Index("ix_hosted_entries_player", "tournament_id", "nick_key", unique=True),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("hosted_tournaments.id", ondelete="CASCADE"))
    nick: Mapped[str] = mapped_column(String(40))
    nick_key: Mapped[str] = mapped_column(String(80))
    # Player.seat_key of who registered: a guest's session (an HMAC, never the id) or "@" + nick key
    # (and "#" + the account's number); "" for a deleted account's (nobody's). An admin's rename gives
    # the entry the account's new nick and key
    seat: Mapped[str] = mapped_column(String(81))
    # a JSON list of the nicks the account had before in this tournament, oldest first (an admin's
    # renames): its games under them are the entry's, and nobody else may join under them
    former: Mapped[str] = mapped_column(Text, server_default="[]")
    rating: Mapped[float] = mapped_column(Float)  # at registration: the swiss initial order, arena pairing
    registered_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    withdrawn_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class HostedRound(Base):
    """A swiss round's pairing as the server made it, written before its tables are set up, so that a
    restart in between sets up the rest of the same pairing rather than pairing again."""

    __tablename__ = "hosted_rounds"

    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("hosted_tournaments.id", ondelete="CASCADE"), primary_key=True
    )
    round: Mapped[int] = mapped_column(Integer, primary_key=True)
    paired_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    boards: Mapped[str] = mapped_column(Text)  # JSON: [[white, black], ...] in board order
    bye: Mapped[str | None] = mapped_column(String(40))
