// An opponent who left the game (docs/client.md, "An opponent who left"): read from the table's server
// lines (`away<side>`, `awayClock<side>`, `claimable<side>`, `back<side>`; docs/protocol.md), and shown
// above the game's actions: who left, when the claim opens (a countdown), then "Claim the win" and
// "Call it off". The server decides; a claim it refuses is said in the notice bar as any refusal is.

import { readServerLine } from "./lines.js";

const EVENT = /^(away|awayClock|claimable|back)([12])$/;
// the game ended, or the server restarted (it watches afresh then): nobody is away any more
const OVER = /^(?:[BW]\+.+|0|Void|restart)$/;
const CLAIM_AFTER = 60; // seconds, when a reworded line does not say

/** Who is away at a table, from its chat: side -> {since (Unix seconds), seconds, open, winnable,
 *  tournament}. */
export function absences(lines) {
  const away = new Map();
  for (const line of lines) {
    if (line.author) continue;
    if (OVER.test(line.type)) {
      away.clear();
      continue;
    }
    const found = EVENT.exec(line.type);
    if (!found) continue;
    const [, what, sideText] = found;
    const side = Number(sideText);
    const read = readServerLine(line);
    if (what === "back") away.delete(side);
    else if (what === "claimable") {
      const known = away.get(side) || { since: line.time, seconds: 0, tournament: false };
      away.set(side, { ...known, open: true, winnable: read?.key !== "lineClaimableShort" });
    } else {
      const seconds = Number(read?.values.seconds) || CLAIM_AFTER;
      away.set(side, { since: line.time, seconds, open: false, winnable: true, tournament: what === "awayClock" });
    }
  }
  return away;
}

/** The notice in `box` for the player of `side` (0: a spectator, who sees the chat's lines only).
 *  `claim(what)` sends `claim` or `abort`. */
export function renderAbsence(box, { lines, side, nicks, playing, t, element, button, claim }) {
  const opponent = side === 1 || side === 2 ? 3 - side : 0;
  const away = opponent && playing ? absences(lines).get(opponent) : undefined;
  box.hidden = !away;
  if (!away) {
    box.replaceChildren();
    return;
  }
  const nick = nicks[opponent - 1];
  if (away.tournament) {
    box.replaceChildren(element("span", { textContent: t("lineAwayClock", { nick }) }));
    return;
  }
  if (away.open) {
    box.replaceChildren(element("span", { textContent: t("opponentNotBack", { nick }) }),
      ...(away.winnable ? [button(t("claimWin"), () => claim("claim"), { id: "claim-win" })] : []),
      button(t("callOff"), () => claim("abort"), { id: "call-off" }));
    return;
  }
  const countdown = element("span", { className: "claim-opens" });
  countdown.dataset.opens = String((away.since + away.seconds) * 1000);
  box.replaceChildren(element("span", { textContent: `${t("opponentAway", { nick })} ` }), countdown);
  tick(t);
}

let ticking = null;

/** The countdowns, once a second while one is shown. */
function tick(t) {
  const countdowns = document.querySelectorAll(".claim-opens");
  for (const countdown of countdowns) {
    const opens = Number(countdown.dataset.opens);
    const seconds = Math.ceil((opens - Date.now()) / 1000);
    const time = new Date(opens).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
    countdown.textContent = seconds > 0 ? t("claimOpensAt", { time, seconds }) : t("claimSoon");
  }
  clearTimeout(ticking);
  ticking = countdowns.length ? setTimeout(() => tick(t), 1000) : null;
}
