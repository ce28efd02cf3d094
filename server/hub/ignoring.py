"""Ignoring another player (docs/protocol.md, "Ignoring"): the `c ignore` and `c unignore` commands, the
list of the players each one ignores and where it is kept, and their chat lines left out of replies.

The only owner of `Player.ignored`. What an ignored player sends to the one who ignores them is refused
where it would reach them (a private line: Chats._admit; an invitation: Invitations._check_invitee).
What they say at a table is one line shared by everyone there, so it is left out of the replies of
those who ignore them instead (`hide`): a reply of a player who ignores nobody is built as before.

A player is ignored by the nick_key of their nick, so that the same nick in another case is the same
person; a look-alike is not, since it cannot be online at the same time (docs/protocol.md, "Look-alike
nicks"). A guest nick is free again when its session ends, and a guest can come back under a fresh
nick: ignoring follows the nick, keeping a person out is a moderator's ban.

A registered player may refuse private lines from all guests (`c guestprivates`, owning
`Player.refuses_guest_privates`): guests cost nothing to make, and a new one comes at every start of a
client, so no list of nicks keeps a flood of them out (docs/protocol.md, "Private lines from guests").
"""

from __future__ import annotations

from server.hub.bus import EventBus
from server.hub.context import Context
from server.hub.invitations import Invitations
from server.hub.model import LOBBY, Player
from server.hub.persistence import MOST_IGNORED
from server.hub.remote import RemoteLobby
from server.hub.roster import Roster
from server.hub.saved import SavedSessions
from server.protocol import events
from server.protocol.codec import LINE_SEPARATOR, ProtocolError, check_nick, decode_client_text, nick_key

GUEST_PRIVATES = "guestprivates"  # the `c` command of the setting


class Ignoring:
    def __init__(
        self,
        ctx: Context,
        bus: EventBus,
        roster: Roster,
        saved: SavedSessions,
        invitations: Invitations,
        remote: RemoteLobby,
    ) -> None:
        self.ctx, self.bus, self.roster, self.saved, self.invitations = ctx, bus, roster, saved, invitations
        self.remote = remote

    def command(self, player: Player, what: str, text: str) -> None:
        """`ignore._NICK`, `unignore._NICK`, or `ignore.` alone, which asks for the list: each is answered
        with the whole list (an `n` line) in the player's own part of the lobby section."""
        if what == GUEST_PRIVATES:
            self._guest_privates(player, text)
            return
        if what == "ignore" and not text:
            self._tell_list(player)
            return
        if not text.startswith("_") or len(text) < 2:
            raise ProtocolError("badCommand", f"{what} needs _nick.")
        nick = decode_client_text(text[1:])
        check_nick(nick, guest=nick.startswith("*"))
        key = nick_key(nick)
        if what == "ignore":
            self._ignore(player, nick, key)
        elif key in player.ignored:
            self.ctx.limits.ignore_change(player, self.ctx.timers.now())
            del player.ignored[key]
            self._keep(player, key, None)
        self._tell_list(player)

    def _ignore(self, player: Player, nick: str, key: str) -> None:
        if key == nick_key(player.nick):
            raise ProtocolError("badNick", "You cannot ignore yourself.")
        if key in player.ignored:
            return
        if len(player.ignored) >= MOST_IGNORED:
            raise ProtocolError(
                "tooManyIgnored", f"You ignore {MOST_IGNORED} players already: stop ignoring one first."
            )
        self.ctx.limits.ignore_change(player, self.ctx.timers.now())
        player.ignored[key] = shown = self._shown(nick)
        self._keep(player, key, shown)
        self.invitations.ignored(player, key)

    def _guest_privates(self, player: Player, value: str) -> None:
        """`guestprivates.off` refuses private lines from guests, `guestprivates.on` takes them again,
        `guestprivates.` alone asks: each answered with the setting (an `a` line). An account's, kept
        with it by its number; a guest has no account to keep it with and takes every line."""
        if value not in ("", "on", "off"):
            raise ProtocolError("badCommand", f"{GUEST_PRIVATES} needs on, off or nothing.")
        if value:
            if player.guest:
                raise ProtocolError(
                    "accountsOnly", "Only registered players can refuse private lines from guests."
                )
            refused = value == "off"
            if refused != player.refuses_guest_privates:
                self.ctx.limits.ignore_change(player, self.ctx.timers.now())
                player.refuses_guest_privates = refused
                if player.stored:
                    self.ctx.persistence.guest_privates_set(player.account, refused)
        self.bus.send(player, LOBBY, events.guest_privates(player.refuses_guest_privates))

    def _shown(self, nick: str) -> str:
        """The nick as the lobby shows it (here or on another member of a cluster), else as typed."""
        someone = self.roster.online(nick)
        if someone is not None:
            return someone.nick
        elsewhere = self.remote.member_of(nick)
        return elsewhere[1] if elsewhere is not None else nick

    def _keep(self, player: Player, key: str, nick: str | None) -> None:
        """A registered player's list is the account's (kept for their next sessions), a change at a time
        (`nick` added, or None: `key` taken off) by the account's number: a renamed player's session, still
        under the old nick, changes it too, and what was taken off the list meanwhile (a deleted account's
        nick) is not written back. A guest's is the session's (kept with it across restarts, gone when it
        ends)."""
        if player.guest:
            self.saved.save(player)
        elif player.stored:
            persistence = self.ctx.persistence
            if nick is None:
                persistence.ignored_removed(player.account, key)
            else:
                persistence.ignored_added(player.account, key, nick)

    def _tell_list(self, player: Player) -> None:
        self.bus.send(player, LOBBY, events.ignored(sorted(player.ignored.values(), key=nick_key)))

    @staticmethod
    def hide(player: Player, sections: dict[int, list[str]]) -> dict[int, list[str]]:
        """The sections of a reply without the chat lines of the players `player` ignores (the caller
        asks only when there are some). A part may be several lines joined (the lobby's shared text)."""
        ignored = player.ignored
        hidden: dict[int, list[str]] = {}
        for uid, parts in sections.items():
            kept = []
            for part in parts:
                lines = part.split(LINE_SEPARATOR)
                shown = [line for line in lines if nick_key(events.chat_writer(line)) not in ignored]
                if len(shown) == len(lines):
                    kept.append(part)
                elif shown:
                    kept.append(LINE_SEPARATOR.join(shown))
            hidden[uid] = kept
        return hidden
