"""Chat at the tables and private chat between two players: the `c` command and the old `dodajWpis`.

The only owner of the private conversations and their journal (PRIVATE_JOURNAL); a table's chat
lines live in its `ChatRoom` (server/hub/chat.py) and go into the table's journal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from server.hub.bus import EventBus
from server.hub.chat import PRIVATE_KEPT_SECONDS, ChatEntry, Conversation, PrivateChats
from server.hub.context import Context
from server.hub.model import LOBBY, Player, parse_table
from server.hub.remote import RemoteLobby
from server.hub.roster import Roster
from server.hub.spam import readable
from server.hub.tables import Tables
from server.protocol import events
from server.protocol.codec import (
    MAX_CHAT,
    ProtocolError,
    check_nick,
    clean_text,
    decode_client_text,
    parse_number,
    unicode_text,
)

PRIVATE_JOURNAL = -1  # the journal of private chat, beside the tables' journals
# what a guest's session hands to the same person's new session on another member (carried_talks): its
# latest conversations, and the latest lines of each: at most 353 KB in the member's answer (measured:
# 1,000 lines of 300 characters)
CARRIED_TALKS = 10
CARRIED_LINES = 100
ANSWERS_KEPT = 1_000  # answers to private lines sent to other members remembered (Chats._answered)


class Chats:
    def __init__(
        self, ctx: Context, bus: EventBus, roster: Roster, tables: Tables, remote: RemoteLobby
    ) -> None:
        self.ctx, self.bus, self.roster, self.tables, self.remote = ctx, bus, roster, tables, remote
        self.private = PrivateChats()
        self.private_seq = 0  # the last entry of PRIVATE_JOURNAL
        # a member of a cluster: `send(member, message)` takes a message to another member (a private
        # line to its player, server/hub/peers.py); None: this server alone
        self.send: Callable[[str, dict[str, Any]], None] | None = None
        # (t, n) of the latest private lines sent to other members that were answered, the oldest first:
        # an answer sent again after Redis failed may come twice, and is taken once (_answered)
        self.answered: dict[tuple[int, int], None] = {}
        # the session that wrote each private line sent to another member, by (t, n), until it is
        # answered (at most ANSWERS_KEPT): an answer that comes after that session ended (sent again
        # while Redis failed) is shown to nobody else who holds the nick by then (_writer)
        self.writers: dict[tuple[int, int], Player] = {}

    def chat(self, player: Player, table: str, raw: str) -> None:
        if table == "get":
            self._private_get(player, raw)
            return
        if table == "del":
            self._private_delete(player, raw)
            return
        if table == "delmsg":
            self._delete_message(player, raw)
            return
        self.ctx.sanctions.check_chat(player, self.ctx.clock())
        text = chat_text(raw)
        if table.startswith("_"):
            self._private_send(player, table[1:], text)
            return
        uid = parse_table(table)
        if uid not in player.tables:
            raise ProtocolError("notAtTable", f"You are not at table {uid}.")
        if uid == LOBBY:  # before the limits: a line the lobby's mode refuses is not counted as said
            self.ctx.sanctions.check_lobby(player, self.ctx.clock(), self.ctx.timers.now())
        self.ctx.limits.chat(player, text, self.ctx.timers.now(), self.ctx.clock())
        room = self.tables[uid]
        entry = room.chat.add(int(self.ctx.clock()), player.nick, player.nick_type(room), text)
        entry.event = self.bus.publish(uid, events.chat_added(entry.line()))
        self.tables.journal_chat(uid, entry)
        if uid == LOBBY:
            self.ctx.sanctions.spoke_in_lobby(player, self.ctx.timers.now())

    # --- private chat --------------------------------------------------------------------------

    def _journal_private(self, kind: str, data: dict[str, Any]) -> None:
        self.private_seq += 1
        self.ctx.persistence.journal(PRIVATE_JOURNAL, self.private_seq, kind, data)

    def _private_send(self, player: Player, nick: str, text: str) -> None:
        """Checked in this order, each before anything changes: the recipient's side (ignored, the
        limits on lines to one player), then the writer's own chat limits."""
        other = self.roster.online(decode_client_text(nick))
        if other is None:
            self._private_send_elsewhere(player, decode_client_text(nick), text)
            return
        if other is player:
            raise ProtocolError("badNick", "A private message needs another person.")
        now = self.ctx.timers.now()
        counted = self._admit(other, player.nick, player.guest)
        self.ctx.limits.chat(player, text, now, self.ctx.clock())
        if counted is not None:
            self.ctx.limits.private_taken(other, counted, now)
        self.ctx.limits.wrote(player, other.nick, now)
        entry = self._private_add(int(self.ctx.clock()), player.nick, other.nick, text)
        line = events.chat_added(entry.line())
        self.bus.send(player, LOBBY, line)
        self.bus.send(other, LOBBY, line)

    def _admit(self, recipient: Player, sender: str, guest: bool) -> str | None:
        """What the recipient's side refuses of a private line from `sender` (`guest`: a guest's): an
        ignored writer's, a guest's when the recipient refuses guests' lines (unless answering them),
        then what Limits.private does. Both refusals read the same: the writer learns nothing more."""
        now = self.ctx.timers.now()
        if recipient.ignores(sender) or (
            guest
            and recipient.refuses_guest_privates
            and not self.ctx.limits.answering(recipient, sender, now)
        ):
            raise ProtocolError("privateBlocked", f"{recipient.nick} does not accept your private messages.")
        return self.ctx.limits.private(recipient, sender, now)

    def _private_add(
        self,
        time: int,
        sender: str,
        recipient: str,
        text: str,
        n: int | None = None,
        elsewhere: tuple[str, str] | None = None,
    ) -> ChatEntry:
        """`elsewhere`: (nick, network) of a guest of another member of a cluster in the conversation."""
        entry = self.private.add(time, sender, recipient, text, n)
        data: dict[str, Any] = {"t": entry.time, "n": entry.n, "from": sender, "to": recipient, "text": text}
        if elsewhere is not None:
            data["elsewhere"] = list(elsewhere)
            self._held_elsewhere(data)
        self._journal_private("private", data)
        return entry

    def _held_elsewhere(self, data: dict[str, Any]) -> None:
        """A private line's `elsewhere` (as journalled): its guest of another member, and that guest's
        network, noted on the conversation's side of the guest."""
        nick, network = data["elsewhere"]
        self.private.held_elsewhere(nick, data["to"] if nick == data["from"] else data["from"], network)

    def _private_send_elsewhere(self, player: Player, nick: str, text: str) -> None:
        """To a player of another member of a cluster: that member checks it as its own player's
        (take_private), and once it took the line, both keep it with the same id (`private_kept`)."""
        found = self.remote.member_of(nick) if self.send is not None else None
        if found is None or self.send is None:
            raise ProtocolError("notOnline", f"{nick} is not online.")
        member, nick = found
        self.ctx.limits.chat(player, text, self.ctx.timers.now(), self.ctx.clock())
        time = int(self.ctx.clock())
        talk = self.private.get(player.nick, nick)
        n = self.private.counter.next(time, talk.entries if talk is not None else ())
        line = {"t": time, "n": n, "from": player.nick, "to": nick, "text": text}
        if player.guest:  # the other member's copy is closed to a stranger who takes the nick there
            line["from_network"] = player.network
        self.writers[(time, n)] = player
        if len(self.writers) > ANSWERS_KEPT:
            del self.writers[next(iter(self.writers))]
        self.send(member, {"private": line})

    def _writer(self, line: dict[str, Any]) -> tuple[Player | None, Player | None]:
        """The session here that wrote the private line `line` (None: not noted, before a restart), and
        that session if it is still online (one not noted is taken to be whoever holds the nick)."""
        online = self.roster.online(line["from"])
        wrote = self.writers.pop((line["t"], line["n"]), None)
        return wrote, online if wrote is None or wrote is online else None

    def _answered(self, line: dict[str, Any]) -> bool:
        """Whether the private line `line`, sent from here, was answered before (this answer is a copy);
        it is answered now."""
        key = (line["t"], line["n"])
        if key in self.answered:
            return True
        self.answered[key] = None
        if len(self.answered) > ANSWERS_KEPT:
            del self.answered[next(iter(self.answered))]
        return False

    def take_private(self, line: dict[str, Any]) -> dict[str, Any]:
        """A private line from a player of another member, checked as one from here would be; the
        answer for that member: the line kept and shown (with the recipient's nick as it is here),
        refused and why, or undelivered when its recipient is not online here."""
        other = self.roster.online(line["to"])
        if other is None:
            return {"undelivered": line}
        try:
            # a guest's nick has its `*` (docs/protocol.md, "Look-alike nicks")
            counted = self._admit(other, line["from"], line["from"].startswith("*"))
        except ProtocolError as refused:
            return {"private_refused": [line, refused.code, str(refused)]}
        if counted is not None:
            self.ctx.limits.private_taken(other, counted, self.ctx.timers.now())
        writer = line.get("from_network")
        elsewhere = (line["from"], str(writer)) if writer is not None else None
        entry = self._private_add(line["t"], line["from"], other.nick, line["text"], line["n"], elsewhere)
        self.bus.send(other, LOBBY, events.chat_added(entry.line()))
        kept = {**line, "to": other.nick}
        if other.guest:
            kept["to_network"] = other.network
        return {"private_kept": kept}

    def private_kept(self, line: dict[str, Any]) -> None:
        """The other member took a private line written here: kept here too, and shown to its writer."""
        talk = self.private.get(line["from"], line["to"])
        if talk is not None and any(
            (entry.time, entry.n, entry.text) == (line["t"], line["n"], line["text"])
            for entry in talk.entries
        ):
            return  # kept already: the answer came again (Redis took it before it failed)
        reader = line.get("to_network")
        elsewhere = (line["to"], str(reader)) if reader is not None else None
        entry = self._private_add(line["t"], line["from"], line["to"], line["text"], line["n"], elsewhere)
        wrote, sender = self._writer(line)
        if sender is not None:
            self.ctx.limits.wrote(sender, line["to"], self.ctx.timers.now())
            self.bus.send(sender, LOBBY, events.chat_added(entry.line()))
        elif wrote is not None and wrote.guest:
            # the guest's session ended meanwhile, and closed the conversation on its side (a guest of
            # its network reads it again: hide_guest_chats): so is this line, which a stranger taking
            # the nick was shown and read before
            talk = self.private.get(line["from"], line["to"])
            network = "" if talk is None or line["from"] in talk.hidden_for else wrote.network
            if self.private.hide(line["from"], line["to"], network):
                self._journal_private("hide", {"nick": line["from"], "other": line["to"], "network": network})

    def private_refused(self, line: dict[str, Any], refused: ProtocolError) -> None:
        """The other member refused a private line written here (its recipient ignores the writer, or
        gets too many): only its writer is told, in their language where the code has a sentence."""
        sender = self._writer(line)[1]
        if not self._answered(line) and sender is not None:
            self.tables.tell(sender, LOBBY, refused.code, str(refused))

    def private_not_delivered(self, line: dict[str, Any]) -> None:
        """A private line that did not reach the other member's player: its writer is told."""
        sender = self._writer(line)[1]
        if not self._answered(line) and sender is not None:
            self.tables.tell(sender, LOBBY, "notDelivered", nick=line["to"])

    def _private_get(self, player: Player, what: str) -> None:
        now = int(self.ctx.clock())
        if what.startswith("_"):
            nick = _other_nick(what[1:])
            talk = self.private.get(player.nick, nick)
            entries = talk.visible_to(player.nick) if talk is not None else []
            if not entries:
                first, second = sorted((player.nick, nick))
                n = self.private.counter.next(now)
                self.bus.send(player, LOBBY, events.chat_added(f"{now}_{n}.{first}-{second}.nochat."))
            for entry in entries:
                self.bus.send(player, LOBBY, events.chat_added(entry.line()))
            return
        minutes = parse_number(what)
        if minutes is None:
            raise ProtocolError("badCommand", "get needs minutes (a number, 0 = all) or _nick.")
        since = 0 if minutes == 0 else now - 60 * minutes
        for talk, last in self.private.partners(player.nick, since):
            self.bus.send(player, LOBBY, events.chat_added(f"{last.chat_id}.{talk.name}.-."))

    def _private_delete(self, player: Player, what: str) -> None:
        if not what.startswith("_") or len(what) < 2:
            raise ProtocolError("badCommand", "del needs _nick.")
        nick = _other_nick(what[1:])
        if not self.private.hide(player.nick, nick):
            raise ProtocolError("noSuchLine", f"There is no conversation with {nick}.")
        self._journal_private("hide", {"nick": player.nick, "other": nick})
        now = int(self.ctx.clock())
        first, second = sorted((player.nick, nick))
        n = self.private.counter.next(now)
        self.bus.send(player, LOBBY, events.chat_added(f"{now}_{n}.{first}-{second}.del."))

    def hide_guest_chats(self, nick: str, network: str = "") -> None:
        """A guest's session is over: its private conversations are closed on its side, so that the
        next guest to take the nick reads none of them (the others keep their side), unless that guest
        comes from the same `network` (show_guest_chats)."""
        for other in self.private.others_of(nick):
            if self.private.hide(nick, other, network):
                self._journal_private("hide", {"nick": nick, "other": other, "network": network})

    def hide_from_before_account(self, nick: str, registered_at: float) -> None:
        """A registered player's session begins: what its conversations hold from before the account was
        registered was written by an account of the nick that an admin deleted (`user delete`), and is
        closed on this side for good, so that whoever registered the nick next reads none of it."""
        for other, upto in self.private.hide_before(nick, registered_at):
            self._journal_private("hide", {"nick": nick, "other": other, "upto": upto})

    def show_guest_chats(self, nick: str, network: str) -> None:
        """A guest session of `nick` from `network` begins: the private conversations hidden when a guest
        session of the nick from there ended are its again (docs/protocol.md, "A guest who comes back"),
        and those a guest of the nick on another member of a cluster had from another network are
        closed on its side, as that session's end closed them there."""
        for other, held in self.private.close_for_strangers(nick, network):
            self._journal_private("hide", {"nick": nick, "other": other, "network": held})
        for other in self.private.show_again(nick, network):
            self._journal_private("show", {"nick": nick, "other": other})

    def carried_talks(self, nick: str) -> list[dict[str, Any]]:
        """The private lines `nick` reads here, of its CARRIED_TALKS latest conversations (the latest
        CARRIED_LINES of each), as journalled: what a guest's session hands to the same person's new
        session on another member of a cluster (Sessions.give_up), which keeps them (adopt_talks)."""
        return _lines_carried(self.private.latest_of(nick, CARRIED_TALKS), lambda talk: talk.visible_to(nick))

    def recall_guest_chats(self, nick: str, network: str) -> None:
        """A guest session of `nick` from `network` begins here, on a member of a cluster: the other
        members are asked for what a session of the nick from there left closed at them when it ended
        (`recall_talks`, answered by recalled_talks), as this member shows its own (show_guest_chats)."""
        if self.send is not None and network:
            for member in self.remote.parts:
                self.send(member, {"recall_talks": [nick, network]})

    def recalled_talks(self, nick: str, network: str) -> list[dict[str, Any]]:
        """What a guest session of `nick` from `network` read here when it ended, in the conversations
        a guest of the nick from there would read again here (show_guest_chats), as carried_talks
        hands them over: asked for by the member where the same person logged in again with a new id
        (recall_guest_chats). Nothing while a session of the nick is online here. This member's copies
        stay as they are: a lost answer loses nothing."""
        if not network or self.roster.holder(nick) is not None:
            return []
        talks = self.private.latest_of(nick, CARRIED_TALKS, network)
        return _lines_carried(talks, lambda talk: talk.visible_again_to(nick))

    def talks_recalled(self, nick: str, network: str, lines: list[dict[str, Any]]) -> None:
        """Another member's recalled_talks: kept for the guest session of `nick` from `network` here,
        if it is still online (adopt_talks)."""
        player = self.roster.online(nick)
        if player is not None and player.nick == nick and player.guest and player.network == network:
            self.adopt_talks(nick, lines)

    def adopt_talks(self, nick: str, lines: list[dict[str, Any]]) -> None:
        """The private conversations a guest's session on another member handed to the same person's new
        session here (carried_talks), kept as this member's own and journalled, but for those this member
        has a copy of already (their lines came across members). Their other side is closed here for a
        guest, for good: whoever takes that guest nick here is not known to be the person who wrote."""
        held = set(self.private.others_of(nick))
        adopted = set()
        for line in lines:
            sender, recipient = str(line["from"]), str(line["to"])
            other = recipient if sender == nick else sender
            if nick not in (sender, recipient) or other == nick or other in held:
                continue
            self._private_add(int(line["t"]), sender, recipient, str(line["text"]), int(line["n"]))
            adopted.add(other)
        for other in sorted(adopted):
            if other.startswith("*") and self.private.hide(other, nick):
                self._journal_private("hide", {"nick": other, "other": nick})

    def close_left_guest_sides(self, present: set[str]) -> None:
        """After a restart, a guest's side still open with no session of the nick here (`present`): its
        session went on on another member while this one was down (a dead member's sessions are taken
        over), or its end was kept from the journal by the crash. Closed as its end would have closed
        it, but for good (which network it was used from is not known here), so that a stranger taking
        the nick here reads none of it."""
        for nick, other in self.private.open_guest_sides():
            if nick not in present and self.private.hide(nick, other):
                self._journal_private("hide", {"nick": nick, "other": other})

    def forget_old(self) -> None:
        self.private.forget_older_than(int(self.ctx.clock()) - PRIVATE_KEPT_SECONDS)

    def replay_private(self, seq: int, kind: str, data: dict[str, Any]) -> None:
        """One entry of the private chat's journal, after a restart."""
        self.private_seq = seq
        if kind == "private":
            self.private.add(data["t"], data["from"], data["to"], unicode_text(data["text"]), n=data["n"])
            if "elsewhere" in data:
                self._held_elsewhere(data)
        elif kind == "hide":
            self.private.hide(data["nick"], data["other"], data.get("network", ""), data.get("upto"))
        elif kind == "show":
            self.private.show(data["nick"], data["other"])
        else:
            raise ValueError(f"unknown private chat entry {kind!r}")

    # --- moderators ----------------------------------------------------------------------------

    def _delete_message(self, player: Player, what: str) -> None:
        """Moderators only: `delmsg.<table>.<time_n>` or `delmsg.<table>._<nick>`."""
        if not player.moderator:
            raise ProtocolError("notModerator", "Only moderators may delete chat lines.")
        table_text, _, target = what.partition(".")
        uid = parse_table(table_text)
        if uid not in self.tables:
            raise ProtocolError("noSuchTable", f"There is no table {uid}.")
        if not self.delete_lines(player, uid, target):
            raise ProtocolError("noSuchLine", "No such chat line.")

    def delete_lines(self, player: Player, uid: int, target: str) -> bool:
        """A moderator deletes a line (`<time_n>`) or a nick's lines (`_<nick>`) of a table of this
        server (a report's closing too); False when there is no such line here."""
        if uid not in self.tables:
            return False
        room = self.tables[uid].chat
        gone = (
            room.delete_by(decode_client_text(target[1:])) if target.startswith("_") else room.delete(target)
        )
        if not gone:
            return False
        self.tables.journal(uid, "chatdel", {"ids": [entry.chat_id for entry in gone]})
        whose = ", ".join(sorted({entry.nick for entry in gone}))[:100]
        self.ctx.persistence.moderated(player.nick, "delmsg", whose, f"table {uid}, {len(gone)} line(s)")
        for entry in gone:
            self.bus.publish(uid, events.chat_deleted(entry.chat_id))
        return True


def _lines_carried(
    talks: list[Conversation], read: Callable[[Conversation], list[ChatEntry]]
) -> list[dict[str, Any]]:
    """The latest CARRIED_LINES of what `read` gives of each conversation, as journalled."""
    lines = []
    for talk in talks:
        sides = {"1": (talk.first, talk.second), "2": (talk.second, talk.first)}  # by who wrote
        for entry in read(talk)[-CARRIED_LINES:]:
            sender, recipient = sides[entry.nick_type]
            lines.append({"t": entry.time, "n": entry.n, "from": sender, "to": recipient, "text": entry.text})
    return lines


def _other_nick(text: str) -> str:
    """The nick a private-chat command names; it is written back into lines, so it must be a nick."""
    nick = decode_client_text(text)
    check_nick(nick, guest=nick.startswith("*"))
    return nick


def chat_text(raw: str) -> str:
    """A chat line as sent, decoded and checked (also where it is sent on to another member)."""
    text = clean_text(decode_client_text(raw))
    if not readable(text).strip():  # a zero-width space alone was a line shown empty
        raise ProtocolError("emptyMessage", "An empty message was not sent.")
    if len(text) > MAX_CHAT:
        raise ProtocolError(
            "tooLong", f"Message too long ({len(text)} characters, at most {MAX_CHAT}); it was not sent."
        )
    return text
