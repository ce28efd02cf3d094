"""The other members of a cluster, as the hub sees them: what it sends them and what they send it
(docs/cluster.md, "Tables across members", "Private chat").

Every message between two members is a small JSON object with one key saying what it is; this is the
one place that reads them and hands each to the part it is for (server/hub/mirrors.py for the tables
of other members that people here sit at, server/hub/visitors.py for the people of other members at
the tables here, server/hub/chats.py for private lines and a guest's conversations recalled to its new
session, server/hub/seeks.py for seeks accepted across members, server/hub/pools.py for pairings across
members). The transport, with its numbering and its `resync` after lost messages, is
server/cluster/lobby.py.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from server.hub.chats import Chats
from server.hub.invitations import Invitations
from server.hub.mirrors import Mirrors
from server.hub.pools import Pools, began
from server.hub.seeks import Seeks
from server.hub.visitors import Visitors
from server.protocol.codec import ProtocolError

log = logging.getLogger(__name__)


class Peers:
    def __init__(
        self,
        chats: Chats,
        invitations: Invitations,
        mirrors: Mirrors,
        visitors: Visitors,
        seeks: Seeks,
        pools: Pools,
    ) -> None:
        self.chats, self.invitations, self.mirrors, self.visitors = chats, invitations, mirrors, visitors
        self.seeks, self.pools = seeks, pools
        self._send: Callable[[str, dict[str, Any]], None] | None = None

    def share(self, send: Callable[[str, dict[str, Any]], None] | None) -> None:
        self._send = send
        self.mirrors.send = self.visitors.send = self.invitations.send = self.seeks.send = send
        self.pools.send = send
        self.chats.send = send

    def take(self, member: str, message: dict[str, Any]) -> None:
        """One message of another member."""
        mirrors, visitors = self.mirrors, self.visitors
        if "line" in message:
            mirrors.take_line(member, *message["line"])
        elif "to" in message:
            mirrors.take_player_line(*message["to"])
        elif "done" in message:
            untold = bool(message.get("untold"))
            mirrors.done(member, message["done"], message.get("t"), message.get("refused"), untold=untold)
        elif "undone" in message:
            mirrors.undone(member, message["undone"], message.get("t"))
        elif "do" in message:
            visitors.act(member, *message["do"], ticket=message.get("t"))
        elif "state" in message:
            mirrors.take_state(member, *message["state"])
        elif "enter" in message:
            visitors.enter(member, *message["enter"])
        elif "renamed" in message:
            visitors.renamed(member, message["renamed"])
        elif "leave" in message:
            visitors.leave(member, *message["leave"])
        elif "left" in message:
            mirrors.left(member, *message["left"])
        elif "refused" in message:
            mirrors.refused(member, *message["refused"])
        elif "ask_state" in message:
            visitors.state_asked(member, message["ask_state"])
        elif "present" in message:
            visitors.present(member, message["present"])
        elif "resync" in message:
            self.resync(member)
        elif "invite" in message:
            self.invitations.invited_from(member, *message["invite"])
        elif "invitation_ended" in message:
            self.invitations.ended_elsewhere(member, *message["invitation_ended"])
        elif "accept_seek" in message:
            self.seeks.accepted_from(member, *message["accept_seek"])
        elif "seek_refused" in message:
            number, nick, code, why = message["seek_refused"]
            self.seeks.refused_elsewhere(member, number, nick, ProtocolError.relayed(code, why))
        elif "pool_pair" in message:
            self.pools.paired_from(member, *message["pool_pair"])
        elif "pool_refused" in message:
            self.pools.refused_elsewhere(member, *message["pool_refused"])
        elif "began" in message:
            began(self.seeks, self.pools, message["began"])
        elif "private" in message:
            answer = self.chats.take_private(message["private"])  # kept, refused, or its player left
            if self._send is not None:
                self._send(member, answer)
        elif "private_kept" in message:
            self.chats.private_kept(message["private_kept"])
        elif "private_refused" in message:
            line, code, why = message["private_refused"]
            self.chats.private_refused(line, ProtocolError.relayed(code, why))
        elif "undelivered" in message:
            self.chats.private_not_delivered(message["undelivered"])
        elif "recall_talks" in message:
            nick, network = message["recall_talks"]
            lines = self.chats.recalled_talks(nick, network)
            if lines and self._send is not None:
                self._send(member, {"talks_recalled": [nick, network, lines]})
        elif "talks_recalled" in message:
            self.chats.talks_recalled(*message["talks_recalled"])
        else:
            log.warning("message of member %r not understood: %s", member, sorted(message))

    def not_delivered(self, member: str, message: dict[str, Any]) -> None:
        """A message nobody took: `member` is gone or cut off from Redis. Whoever waits for its answer
        is told; what only follows a table (its lines) is made good by the resync once it is back."""
        if "private" in message:
            self.chats.private_not_delivered(message["private"])
        elif "invite" in message:
            inviter, whom, _ = message["invite"]
            why = f"{whom} cannot be reached now."
            self.invitations.ended_elsewhere(member, inviter["nick"], whom, "refused", why)
        elif "accept_seek" in message:
            number, person = message["accept_seek"]
            self.seeks.not_delivered(member, number, person["nick"])
        elif "pool_pair" in message:
            pool, whom, person = message["pool_pair"]
            self.pools.refused_elsewhere(member, pool, person["nick"], whom, "gone")
        elif "enter" in message:
            uid, person = message["enter"]
            self.mirrors.refused(member, uid, person["nick"], f"Table {uid} cannot be reached now.")
        elif "do" in message:
            nick, _, table, *_ = message["do"]
            self.mirrors.not_done(member, nick, table, message.get("t"))

    def resync(self, member: str) -> None:
        """Messages between this member and `member` were lost: each side's view is sent again (the
        whole state of the tables here that its people follow; who of the people here sits at its)."""
        self.visitors.resync(member)
        if self._send is not None and member in self.mirrors.followed_owners():
            self._send(member, {"present": self.mirrors.present(member)})
        self.mirrors.send_again(member)

    def missed(self, member: str) -> None:
        """Messages of `member` to this member were lost (it is asked to send its view again): the
        answers to the actions sent to it may be among them, so those go again (Mirrors.send_again)."""
        self.mirrors.send_again(member)

    def sharing_tables(self) -> set[str]:
        """The members this one shares tables with."""
        return self.mirrors.followed_owners() | self.visitors.peers()

    def gone(self, member: str) -> None:
        """`member` left the cluster: its people leave the tables here, and its tables the people here."""
        self.visitors.member_gone(member)
        self.mirrors.owner_gone(member)
        self.invitations.member_gone(member)
