"""Sessions: logging in and out, timing out, a player's own flags and language, and the sessions of
the earlier run brought back after a restart.

A session begins in the roster (server/hub/roster.py) and at the lobby's table, and ends leaving every
table, invitation and (for a guest) private conversation it had.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from server.hub.bus import EventBus
from server.hub.chats import Chats
from server.hub.context import Context
from server.hub.games import Games
from server.hub.invitations import Invitations
from server.hub.mailbox import EventLog
from server.hub.model import LOBBY, NOBODY, Origin, Player, reserved
from server.hub.persistence import NO_ROLE, Account, LiveSessions, SavedSession
from server.hub.roster import Roster
from server.hub.sanctions import GUEST, PLAYER, STAFF
from server.hub.saved import QUIET_AFTER, SavedSessions
from server.hub.tables import Tables
from server.logs import Fields
from server.protocol import events
from server.protocol.codec import ProtocolError, check_id, check_lang, check_nick, nick_key

log = logging.getLogger(__name__)


@dataclass
class Carried:
    """What a guest's session on another member of a cluster hands to the same person's new session
    here (give_up): whom it blocked and ignored, and its private conversations as it read them
    (Chats.carried_talks)."""

    blocked: set[str]
    ignored: dict[str, str]
    talks: list[dict[str, Any]] = field(default_factory=list)


POLL_TIMEOUT = 60.0  # seconds without a poll before a player is logged out
MOST_NETWORKS = 8  # networks a session's id may be used from (Player.networks), the latest kept


class Sessions:
    def __init__(
        self,
        ctx: Context,
        bus: EventBus,
        roster: Roster,
        saved: SavedSessions,
        tables: Tables,
        games: Games,
        invitations: Invitations,
        chats: Chats,
    ) -> None:
        self.ctx, self.bus, self.roster, self.saved = ctx, bus, roster, saved
        self.tables, self.games, self.invitations, self.chats = tables, games, invitations, chats
        # set by Hub.__init__: what else a session's end takes along (its seeks and place in a pool:
        # server/hub/pools.py)
        self.left: Callable[[Player], None] = lambda player: None
        # set by Hub.watch_nicks: the nick of each session that ended here or came here from another member
        self.nick_changed: Callable[[str], None] | None = None

    def guest_login(
        self,
        secret: str,
        nick: str,
        lang: str,
        origin: Origin | None = None,
        *,
        reads_seeks: bool = False,
        carried: Carried | None = None,
    ) -> None:
        """Log a guest in; a second login with the same id and nick only refreshes the session.
        `reads_seeks`: the client said it reads seeks (`seeks=1`), so none is offered to it as an
        invitation (server/hub/offers.py). `carried`: what the session it replaces on another member of
        a cluster hands to it (give_up)."""
        self._login(secret, nick, _check_guest(secret, nick, lang), None, origin, reads_seeks, carried)

    def login(
        self,
        secret: str,
        account: Account,
        lang: str | None = None,
        origin: Origin | None = None,
        *,
        reads_seeks: bool = False,
    ) -> None:
        """Log in a registered player whose id the store has checked."""
        lang = check_lang(lang) if lang else account.lang
        self._login(secret, account.nick, lang, account, origin, reads_seeks)

    def login_computer(self, nick: str) -> None:
        """An AI player joins the lobby, never timed out."""
        secret = f"computer-{secrets.token_hex(16)}"  # no client can send it: ids have no '-'
        self._login(secret, nick, "en", None)
        player = self.roster.players[secret]
        self.roster.never_times_out(player)
        player.refresh_info()
        self.tables.info_changed(player)

    def _login(
        self,
        secret: str,
        nick: str,
        lang: str,
        account: Account | None,
        origin: Origin | None = None,
        reads_seeks: bool = False,
        carried: Carried | None = None,
    ) -> None:
        known, holder = self._admit(secret, nick, account, origin or Origin())
        if known is not None:
            known.last_command = 0  # a reloaded client numbers its commands from 1 again
            known.acknowledged.clear()
            self.saved.note_k(known)  # the journal's newer k must not outlive this login in a crash
            known.logged_in_at = self.bus.last  # what only they saw before is not news to it
            self.roster.seen(known, self.ctx.timers.now())
            if account is not None:  # what an admin changed since shows from this login on
                self.games.account_changed(account)
            if origin is not None:
                note_network(known, origin.group)
            self.saved.save(known)
            self._client_said(known, reads_seeks)
            return
        origin = origin or Origin()
        if holder is not None:  # checked before it goes: a refused login changes nothing
            log.info("guest back under its nick %s", Fields(nick=nick))
            self.remove(holder, reason="replaced", replaced=True)
        player = Player(
            secret=secret,
            nick=nick,
            lang=lang,
            inbox=EventLog(self.ctx.player_history),
            guest=account is None and not reserved(nick),  # the AI players own their seats by nick
            last_seen=self.ctx.timers.now(),
            logged_in_at=self.bus.last,
            id_hmac=self.ctx.persistence.id_hmac(secret),
            host=origin.host,
            network=origin.group,
            networks=[origin.group] if origin.group else [],
            unlimited=origin.unlimited,
            client=events.SEEKS_CLIENT if reads_seeks else "",
        )
        if account is not None:
            player.apply(account)
        if holder is not None:
            carried = Carried(holder.blocked, holder.ignored)
        if carried is not None:  # the same person: whom it blocks and ignores too
            player.blocked, player.ignored = set(carried.blocked), dict(carried.ignored)
        self.roster.add(player)
        self.ctx.limits.arrived(player)
        self.tables.enter(player, LOBBY, player.info)
        self.tables.seat_back(player)
        if account is not None:
            self.chats.hide_from_before_account(nick, account.registered_at)
        if player.guest:
            self.chats.show_guest_chats(nick, player.network)
            if carried is not None:  # the session it replaced, here or on another member, had them
                self.chats.adopt_talks(nick, carried.talks)
            else:
                self.chats.recall_guest_chats(nick, player.network)
        if not reserved(nick):
            player.stored = True
            self.saved.save(player)
        log.info("%s login %s", "guest" if account is None else "registered", Fields(nick=nick))

    def _admit(
        self, secret: str, nick: str, account: Account | None, origin: Origin
    ) -> tuple[Player | None, Player | None]:
        """Every refusal of a login, checked before anything changes. The session this id has (a second
        login refreshes it), and the one holding the nick here (a guest come back replaces it)."""
        who = GUEST if account is None else PLAYER if account.role == NO_ROLE else STAFF
        self.ctx.sanctions.check_login(nick, origin.host, who, self.ctx.clock())
        known = self.roster.find(secret)
        holder = self.roster.holder(nick)
        if known is not None:
            if known.nick != nick and not _renamed_since(known, account):
                raise ProtocolError("idInUse", "This id is logged in with another nick.")
            return known, holder
        if holder is not None and not self._comes_back(holder, nick, account, origin):
            raise ProtocolError("nickInUse", "This nick is in use.")
        guest = account is None and not reserved(nick)
        self.ctx.limits.room_for_a_player(
            len(self.roster.players), self.roster.guests, guest, origin, leaving=holder
        )
        return None, holder

    def _comes_back(self, holder: Player, nick: str, account: Account | None, origin: Origin) -> bool:
        """A guest logging in under the very nick of a guest session used from its network: the same
        person whose client started again with a new id (MultiPoints draws one at every start), whose
        old session ends for the new one (docs/protocol.md, "A guest who comes back")."""
        return (
            account is None
            and holder.guest
            and not holder.visiting_from
            and holder.nick == nick  # as typed before: a look-alike or another case is somebody else
            and bool(origin.group)
            and origin.group in holder.networks
        )

    def account_registered(self, nick: str) -> None:
        """A new account owns no seat yet: a seat of an unfinished game kept for its nick alone (taken
        before Player.seat_key named the account's number) was a deleted account's, and becomes nobody's,
        so that whoever registered the nick is not seated at it, and its opponent may claim it
        (docs/operations.md, "Accounts"). A seat that names its account's number is nobody else's."""
        key = "@" + nick_key(nick)
        for table in self.tables.values():
            room = table.room
            if room is None or room.game.result is not None:
                continue
            for seated in [seated for seated, owner in table.owners.items() if owner == key]:
                table.owners[seated] = NOBODY
                self.tables.journal(table.uid, "seat", table.seat_entry(seated))
                log.info("seat of a deleted account left %s", Fields(nick=seated, table=table.uid))

    def resume(self, secret: str, nick: str, *, reads_seeks: bool = False) -> None:
        """zagram's auto-login link hands a live session to a browser: it takes over that session (as
        a second login with the same id would) but never makes one, so a link with someone else's id
        cannot log a stranger in under an identity the link's author knows."""
        player = self.roster.find(secret)
        if player is None:
            raise ProtocolError("notLoggedIn", "This link's session is not live: log in instead.")
        if nick_key(player.nick) != nick_key(nick):
            raise ProtocolError("idInUse", "This id is logged in with another nick.")
        self._login(secret, player.nick, player.lang, None, reads_seeks=reads_seeks)

    def logout(self, secret: str) -> bool:
        player = self.roster.find(secret)
        if player is None:
            return False
        self.remove(player, reason="logout")
        return True

    def time_out(self) -> None:
        """Log out the players who stopped polling."""
        now = self.ctx.timers.now()
        timeout = self.ctx.poll_timeout
        for player in [p for p in self.roster.quiet_for(now, timeout) if now - p.last_seen > timeout]:
            log.info("timed out %s", Fields(nick=player.nick))
            self.remove(player, reason="timeout")

    def remove(self, player: Player, *, reason: str, ended: bool = True, replaced: bool = False) -> None:
        """`ended`: False when the session goes on on another member of a cluster (hand_over);
        `replaced`: a guest came back under its nick (_comes_back), and takes its games and private
        conversations over: it leaves its tables as a session that moved does."""
        if player.stored:
            player.stored = False
            if ended:
                self.ctx.persistence.session_ended(player.id_hmac)
                self.roster.note_ended(player, self.ctx.timers.now())
        self.roster.unclaimed.pop(player.id_hmac, None)
        self.invitations.drop_all_of(player)
        self.left(player)
        for uid in list(reversed(player.tables)):
            self.tables.leave(player, uid, for_good=ended and not replaced, chose=reason == "logout")
        if self.tables.elsewhere is not None:  # and the tables of other members it asked to sit down at
            self.tables.elsewhere.ended(player, for_good=ended and not replaced)
        self.roster.discard(player)
        self.ctx.limits.left(player)
        if player.guest and ended and not replaced:
            self.chats.hide_guest_chats(player.nick, player.network)
        if ended and self.nick_changed is not None:
            self.nick_changed(player.nick)
        log.info("left %s", Fields(nick=player.nick, reason=reason))

    # --- sessions moving between the members of a cluster (docs/cluster.md, "Routing") ----------

    def check_guest_login(self, secret: str, nick: str, lang: str, origin: Origin) -> None:
        """Every refusal of a guest login, for a login under a nick another member holds, before that
        member is asked to give its session up (give_up): a refused login must end nobody's session."""
        _check_guest(secret, nick, lang)
        self._admit(secret, nick, None, origin)

    def give_up(self, nick: str, network: str) -> Carried | None:
        """A guest logging in on another member under the very nick of a guest session here, from a
        network that session was used from: the same person come back with a new id (`_comes_back`),
        whose session here ends for the new one. What it hands over; None: somebody else.
        Refused (`storage`), ending nothing, while storage fails: the end must be stored before the
        login goes on elsewhere, or a crash here would bring the old session back beside the new one."""
        holder = self.roster.holder(nick)
        if holder is None or not self._comes_back(holder, nick, None, Origin(network=network)):
            return None
        self.ctx.limits.writable(self.ctx.persistence)
        log.info("guest back under its nick on another member %s", Fields(nick=nick))
        talks = self.chats.carried_talks(holder.nick)
        self.remove(holder, reason="replaced", replaced=True)
        self._left_for_another_member(holder)
        return Carried(holder.blocked, holder.ignored, talks)

    def hand_over(self, id_hmac: str) -> bool:
        """The player's requests reach another member now, which asked for the session: its row is
        written as it stands (tables, k) and it leaves here, without ending. False: not here."""
        player = next((p for p in self.roster.players.values() if p.id_hmac == id_hmac), None)
        if player is None or not player.stored:
            return False
        self.saved.save(player)
        self.saved.note_quiet(player, None)
        self.remove(player, reason="moved", ended=False)
        self._left_for_another_member(player)
        self.roster.note_moved(player, self.ctx.timers.now())
        self.bus.nudge(player)  # a long poll or push connection waiting here learns it has no session now
        return True

    def _left_for_another_member(self, player: Player) -> None:
        """A session that goes on on another member leaves its private conversations here: a guest's are
        closed on its side as its session's end closes them, or a stranger taking the nick here once
        it ended there would read them; they open again to a guest of the nick from its network."""
        if player.guest:
            self.chats.hide_guest_chats(player.nick, player.network)

    def take_over(self, saved: SavedSession, account: Account | None) -> None:
        """A session another member served (or served until it died), as it left it in the store: back
        as after a restart, claimed by its next request, and this member's from now on."""
        if self.roster.taken(saved.nick):  # taken from the store all the same: it ends, not left ownerless
            log.info("session ended: its nick is online here %s", Fields(nick=saved.nick))
            self.ctx.persistence.session_ended(saved.id_hmac)
            return
        player = self._restore_one(saved, account, self.ctx.timers.now())
        player.rejoined = {}  # what its client had is another member's numbering: every table whole
        if account is not None:
            self.chats.hide_from_before_account(player.nick, account.registered_at)
        if player.guest:  # a guest session back here reads what it left here (_left_for_another_member)
            self.chats.show_guest_chats(player.nick, player.network)
        self.saved.save(player)
        if self.nick_changed is not None:
            self.nick_changed(player.nick)

    def adopt_network(self, secret: str, network: str) -> None:
        """A guest's id sent from a network its session was not logged in from, and not refused as a
        guess: its id is its password, so the session is used from there from now on."""
        player = self.roster.find(secret)
        if player is not None and network and network not in player.networks:
            note_network(player, network)
            self.saved.save(player)

    def player(self, secret: str) -> Player:
        """The logged-in player making a request (which counts as a poll for the time-out)."""
        player = self.requester(secret)
        if player is None:
            raise ProtocolError("notLoggedIn", "Not logged in.")
        return player

    def requester(self, secret: str) -> Player | None:
        """The player making a request, if logged in: seen now, as every request counts for the time-out."""
        player = self.roster.find(secret)
        if player is not None:
            self.roster.seen(player, self.ctx.timers.now())
        return player

    def change_lang(self, secret: str, lang: str) -> None:
        player = self.player(secret)
        player.lang = check_lang(lang)
        player.refresh_info()
        self.tables.info_changed(player)
        self.bus.publish(LOBBY, player.info)
        self.saved.save(player)

    def flags(self, player: Player, text: str) -> None:
        """`i0nJa` / `i0nJb`: `a` available, `b` busy, `J` the Java client, `K` a client that reads seeks
        (0 and n: unknown, kept out)."""
        free, client = player.free, player.client
        if "a" in text:
            free = True
        if "b" in text:
            free = False
        for letter in (events.JAVA_CLIENT, events.SEEKS_CLIENT):
            if letter in text:
                client = letter
        self._set_flags(player, free, client)

    def _client_said(self, player: Player, reads_seeks: bool) -> None:
        """A login again with the same id: its client may be another program (the built-in client taking
        over MultiPoints' session), and says again whether it reads seeks; the Java client's `J` stays
        until a client that reads seeks logs in."""
        if reads_seeks:
            self._set_flags(player, player.free, events.SEEKS_CLIENT)
        elif player.client == events.SEEKS_CLIENT:
            self._set_flags(player, player.free, "")

    def _set_flags(self, player: Player, free: bool, client: str) -> None:
        if (free, client) != (player.free, player.client):
            player.free, player.client = free, client
            player.refresh_info()
            self.tables.info_changed(player)
            self.bus.publish(LOBBY, player.info)
            self.saved.save(player)

    # --- sessions across restarts --------------------------------------------------------------

    def restore(self, live: LiveSessions, k_noted: dict[str, int]) -> None:
        """Bring the sessions of the earlier run back, each with what was left of its time-out: its last
        poll counts from the last heartbeat before the stop, and the downtime not at all; and with the
        k the sessions' journal noted after the row was last written (`k_noted`, by id HMAC)."""
        now, moment = self.ctx.clock(), self.ctx.timers.now()
        alive_at = live.alive_at if live.alive_at is not None else now
        quiet: dict[str, float | None] = {}
        for saved in live.sessions:
            idle = 0.0 if saved.quiet_since is None else max(0.0, alive_at - saved.quiet_since)
            account = live.accounts.get(nick_key(saved.nick)) if saved.registered else None
            gone = saved.registered and account is None  # the account was deleted or renamed meanwhile
            taken = self.roster.taken(saved.nick)
            if idle > self.ctx.poll_timeout or gone or taken:
                self.ctx.persistence.session_ended(saved.id_hmac)
                if not saved.registered:
                    self.chats.hide_guest_chats(saved.nick, saved.origin.network)
                continue
            player = self._restore_one(saved, account, moment - idle)
            if k_noted.get(saved.id_hmac, 0) > player.last_command:
                player.last_command = k_noted[saved.id_hmac]
                self.saved.k_unsaved.add(player)  # into the row at the next heartbeat
            quiet[saved.id_hmac] = None if player.noted_quiet is None else now - idle
        self.roster.sort_by_last_request()
        self.chats.close_left_guest_sides({player.nick for player in self.roster.players.values()})
        # the rows' quiet_since now count from this heartbeat: a second crash soon after still adds up
        self.ctx.persistence.sessions_seen(now, quiet)
        self.saved.wall_stepped(now, moment)  # the wall time they are written in
        if live.sessions:
            ended = len(live.sessions) - len(quiet)
            log.info("sessions restored %s", Fields(restored=len(quiet), ended=ended))

    def _restore_one(self, saved: SavedSession, account: Account | None, last_seen: float) -> Player:
        player = Player(
            secret=f"restored-{secrets.token_hex(16)}",  # no client can send it: ids have no '-'
            nick=saved.nick,
            lang=saved.lang,
            inbox=EventLog(self.ctx.player_history),
            free=saved.free,
            client=saved.client,
            last_command=saved.last_command,
            last_seen=last_seen,
            blocked=set(saved.blocked),
            ignored={nick_key(nick): nick for nick in saved.ignored},
            logged_in_at=self.bus.last,
            id_hmac=saved.id_hmac,
            host=saved.origin.host,
            network=saved.origin.network,
            networks=list(saved.origin.networks),
            unlimited=saved.origin.unlimited,
        )
        if account is not None:  # a registered player: rating and role as the account has them now
            player.guest = False
            player.apply(account)
        self.roster.add(player)
        self.ctx.limits.arrived(player)  # counted for its address again (Limits.left when it goes)
        self.roster.unclaimed[saved.id_hmac] = player
        self.tables.enter(player, LOBBY, player.info)
        elsewhere = self.tables.elsewhere
        for uid in saved.tables:
            if uid in self.tables and uid not in player.tables:
                self.tables.enter(player, uid)
            elif elsewhere is not None and elsewhere.has(uid):  # another member's table (a cluster)
                elsewhere.join(player, uid, chosen=False)
        self.tables.seat_back(player)
        player.rejoined = dict(player.joined)
        self.saved.note_quiet(player, last_seen if self.ctx.timers.now() - last_seen >= QUIET_AFTER else None)
        player.stored = True
        if tuple(uid for uid in player.tables if uid != LOBBY) != saved.tables:  # a table closed meanwhile
            self.saved.save(player)
        return player


def _renamed_since(known: Player, account: Account | None) -> bool:
    """Whether `known` is a live session of `account` under the nick it had before an admin renamed it:
    a login again with its id goes on with it, under that nick, as any login again does (its games go
    on; the new nick shows from the next session). Another account with the same id is somebody else."""
    return (
        account is not None
        and not known.guest
        and bool(known.login_key)
        and known.login_key == account.login_key
    )


def _check_guest(secret: str, nick: str, lang: str) -> str:
    """A guest's id and nick checked as guests' are; the language as the server keeps it."""
    check_id(secret, guest=True)
    check_nick(nick, guest=True)
    return check_lang(lang)


def note_network(player: Player, network: str) -> None:
    """The session may be used from `network` too; the oldest of more than MOST_NETWORKS go."""
    if not network:
        return
    if network in player.networks:
        player.networks.remove(network)
    player.networks.append(network)
    del player.networks[:-MOST_NETWORKS]
