// The lobby's "Quick game" part (docs/client.md): the server's quick-pairing pools, joined and left with
// one click, and the open seeks, each accepted (or, one's own, cancelled) with one click; a seek is posted
// with the "New game" form's settings and an optional rating range. The lines are the protocol's
// extensions (docs/protocol.md, "Seeks and quick pairing"): `ka`/`kd` in the lobby, `w` while waiting.

// The server's pools (server/hub/seeks.py, POOLS; tests/static/test_seeks.py keeps the two in step):
// name -> game type, shown in the reader's words.
export const POOLS = {
  "20x20_3_2": "2020s0.4.s.R.a.180.2..",
  "25x25_5_5": "2525s0.4.s.R.a.300.5..",
  "39x32_5_5": "3932s0.4.s.R.a.300.5..",
  "39x32_15_10": "3932s0.4.s.R.a.900.10..",
};

/** `ka<number>.<nick>.<lowest>.<highest>.<gameType>`: the game type is the rest, dots and all. */
export function parseSeekLine(body) {
  const [number, nick, lowest, highest, ...gameType] = body.split(".");
  return {
    number: Number(number),
    nick,
    lowest: lowest ? Number(lowest) : null,
    highest: highest ? Number(highest) : null,
    gameType: gameType.join("."),
  };
}

/** `w<pool>.<seconds waited>.<rating gap allowed>.<players waiting>`. */
export function parsePoolLine(body) {
  const [pool, waited, gap, waiting] = body.split(".");
  return { pool, waited: Number(waited), gap: Number(gap), waiting: Number(waiting) };
}

/** The pools and the seeks as they stand. `view`: {state, session, t, act, element, button, describe}. */
export function renderQuickGame({ state, session, t, act, element, button, describe }) {
  const waiting = state.invitation.pool;
  document.querySelector("#pools").replaceChildren(
    ...Object.entries(POOLS).map(([name, gameType]) => {
      const here = waiting?.pool === name;
      const row = element("li", { className: here ? "waiting" : "" }, element("span", { className: "what" }, describe(gameType)));
      row.dataset.pool = name;
      if (here) {
        row.append(
          element("span", { className: "pool-wait", textContent: t("waitingInPool", { seconds: waiting.waited, count: waiting.waiting, gap: waiting.gap }) }),
          button(t("leavePool"), () => act({ co: "leavePool" }), { className: "leave-pool" }),
        );
      } else {
        row.append(button(t("joinPool"), () => act({ co: "joinPool", pool: name }), { className: "join-pool" }));
      }
      return row;
    }),
  );
  const seeks = [...state.seeks.values()];
  document.querySelector("#no-seeks").hidden = seeks.length > 0;
  document.querySelector("#seeks").replaceChildren(
    ...seeks.map((seek) => {
      const rating = state.info.get(seek.nick)?.rating;
      const who = rating ? `${seek.nick} (${rating})` : seek.nick;
      const range = seek.lowest === null && seek.highest === null
        ? ""
        : ` · ${t("seekRange", { lowest: seek.lowest ?? "", highest: seek.highest ?? "" })}`;
      const row = element("li", {}, element("span", { className: "what" }, `${who} · ${describe(seek.gameType)}${range}`));
      row.dataset.seek = seek.number;
      row.append(
        seek.nick === session.nick
          ? button(t("cancel"), () => act({ co: "cancelSeek", seek: seek.number }), { className: "cancel-seek" })
          : button(t("play"), () => act({ co: "acceptSeek", seek: seek.number }), { className: "accept-seek" }),
      );
      return row;
    }),
  );
}

/** Post a seek of `gameType` with the form's rating range (either side may be empty). */
export function postSeek(act, gameType) {
  const bound = (id) => document.querySelector(id).value.trim();
  act({ co: "seek", gameType, minRating: bound("#min-rating"), maxRating: bound("#max-rating") });
}
