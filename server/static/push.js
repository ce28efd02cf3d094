// The stream over a WebSocket (`/push`, docs/protocol.md "Push"): each frame is the reply a poll would
// get, in order, sent as things happen; the server sends the first at once. Where no frame comes (a
// proxy that does not pass WebSockets, or ends them), the client long-polls for a while and then tries
// again. `?transport=poll` in the page's address keeps the page on long polls (docs/client.md).

const PUSH_AGAIN_AFTER_MS = 60_000; // long polls this long after a WebSocket that brought no frame

const forcedToPoll = new URLSearchParams(location.search).get("transport") === "poll";
let blockedUntil = 0;
let current = null;

/** Whether the stream should be read over a WebSocket now (or long-polled). */
export function pushing() {
  return !forcedToPoll && "WebSocket" in window && Date.now() >= blockedUntil;
}

/**
 * Reads one push connection to its end: `take(body)` for every frame in order (it answers false when
 * the stream must start again, from the msgNo it keeps); `alive()` false stops reading. A connection
 * that ended before its first frame sends the client to long polls for a while.
 */
export async function readPushed(params, take, alive) {
  const stream = new Frames(address(params));
  current = stream;
  try {
    for (let body = await stream.next(); body !== null; body = await stream.next()) {
      if (!alive() || !(await take(body))) return;
    }
    if (!stream.delivered) blockedUntil = Date.now() + PUSH_AGAIN_AFTER_MS;
  } finally {
    stream.close();
    if (current === stream) current = null;
  }
}

/** Ends the connection being read (a log-out, a new login). */
export function stopPushing() {
  current?.close();
}

function address(params) {
  const url = new URL("push", document.baseURI);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  url.search = new URLSearchParams(params).toString();
  return url.href;
}

/** A WebSocket's frames as a queue: `next()` is the next frame, or null once the connection closed. */
class Frames {
  constructor(url) {
    this.frames = [];
    this.waiting = null;
    this.delivered = false; // a frame came: the WebSocket passes
    this.ended = false;
    this.socket = new WebSocket(url);
    this.socket.onmessage = (event) => {
      this.delivered = true;
      this.deliver(event.data);
    };
    this.socket.onclose = () => {
      this.ended = true;
      this.deliver(null);
    };
  }

  next() {
    if (this.frames.length) return Promise.resolve(this.frames.shift());
    if (this.ended) return Promise.resolve(null);
    return new Promise((resolve) => { this.waiting = resolve; });
  }

  deliver(frame) {
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = null;
      resolve(frame);
    } else if (frame !== null) {
      this.frames.push(frame);
    }
  }

  close() {
    if (this.socket.readyState <= WebSocket.OPEN) this.socket.close(1000);
    this.ended = true;
    this.deliver(null);
  }
}
