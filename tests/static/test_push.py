"""The built-in client's transports (server/static/push.js) in Debian's Chromium: the stream over a
push connection by default, long polls where a WebSocket cannot connect, and long polls when asked."""

from __future__ import annotations

from playwright.sync_api import Browser, Request, WebSocketRoute, expect

from tests.static.served import ServerInThread
from tests.static.test_client import Player, start_game


class Watched(Player):
    """A player whose page's push connections and long polls are counted."""

    def __init__(self, browser: Browser, server: ServerInThread, page: str = "/") -> None:
        super().__init__(browser, server)
        self.sockets: list[str] = []
        self.long_polls = 0
        self.short_polls_answered = 0
        self.page.on("websocket", lambda socket: self.sockets.append(socket.url))
        self.page.on("request", self._count)
        self.page.on("requestfinished", self._count_answered)
        self.page.goto(f"{server.base}{page}")

    def _count(self, request: Request) -> None:
        url = request.url
        if "co=getBMsg" in url and "wait=" in url:
            self.long_polls += 1

    def _count_answered(self, request: Request) -> None:
        url = request.url
        if "co=getBMsg" in url and "wait=" not in url:
            self.short_polls_answered += 1


def test_the_stream_comes_over_a_push_connection_with_no_long_polls(
    browser: Browser, server: ServerInThread
) -> None:
    ala, bob = Watched(browser, server), Watched(browser, server)
    start_game(ala, bob)
    ala.play("bc")
    bob.sees_dot("bc")
    ala.say("pushed to you")
    bob.sees_chat("pushed to you")
    for player in (ala, bob):
        assert [url.split("?")[0].rsplit("/", 1)[1] for url in player.sockets] == ["push"]
        assert player.long_polls == 0
        player.close()


def test_where_a_websocket_cannot_connect_the_client_long_polls(
    browser: Browser, server: ServerInThread
) -> None:
    """A proxy that does not pass WebSockets: here the browser's own route ends every one before its
    first frame. The client reads the stream with long polls, and the game goes on."""
    ala, bob = Watched(browser, server), Watched(browser, server)
    blocked: list[str] = []

    def refuse(socket: WebSocketRoute) -> None:
        blocked.append(socket.url)
        socket.close(code=1011, reason="no WebSockets here")

    ala.context.route_web_socket("**/push*", refuse)
    start_game(ala, bob)
    ala.play("bc")
    bob.sees_dot("bc")
    bob.play("cc")
    ala.sees_dot("cc")
    ala.say("over long polls")
    bob.sees_chat("over long polls")
    assert blocked and ala.long_polls > 0
    assert bob.long_polls == 0
    ala.close()
    bob.close()


def test_transport_poll_in_the_address_keeps_the_page_on_long_polls(
    browser: Browser, server: ServerInThread
) -> None:
    ala, bob = Watched(browser, server, "/?transport=poll"), Watched(browser, server)
    start_game(ala, bob)
    ala.play("bc")
    bob.sees_dot("bc")
    assert ala.sockets == [] and ala.long_polls > 0
    assert bob.sockets and bob.long_polls == 0
    ala.close()
    bob.close()


def test_on_long_polls_connection_lost_goes_as_soon_as_the_server_answers_again(
    browser: Browser, server: ServerInThread
) -> None:
    """The connection cut (the context offline) and back, with nothing happening meanwhile: the poll sent
    after a failed one is answered at once, so "Connection lost" goes then, not when a long poll ends up
    to 25 s later; the next polls are long ones again, and only that one is not."""
    ala, bob = Watched(browser, server, "/?transport=poll"), Watched(browser, server)
    ala.log_in("Ala")
    bob.log_in("Bob")
    expect(ala.page.locator('#players li[data-nick="*Bob"]')).to_have_count(1)
    assert ala.short_polls_answered == 1  # the session's first: the whole state
    ala.context.set_offline(True)
    bob.say("still there?")  # ends Ala's waiting poll: the next one fails
    notice = ala.page.locator("#notice")
    expect(notice).to_have_text("Connection lost; trying again…")
    ala.context.set_offline(False)
    expect(notice).to_be_hidden(timeout=5_000)
    ala.sees_chat("still there?")
    bob.say("back")
    ala.sees_chat("back")
    assert ala.short_polls_answered == 2
    ala.close()
    bob.close()
