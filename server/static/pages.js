// What the client's pages (games.js, game.js, player.js, standings.js) share: the language, the header,
// links to players and games, a game's kind and result in words, and reading the server's JSON.

import { gameTypeText, resultText as sharedResultText } from "./protocol.js";
import { LANGUAGES, defaultLanguage, translator } from "./i18n.js";

export const $ = (selector) => document.querySelector(selector);
export let t = translator(localStorage.getItem("kropki.lang") || defaultLanguage());

export function element(tag, properties = {}, ...children) {
  const made = Object.assign(document.createElement(tag), properties);
  made.append(...children);
  return made;
}

/** A segment of the page's address as text: one that decodes to no UTF-8 (`%E0`) as it is written, since
 *  decodeURIComponent throws on it and the page's script would stop there. */
export function addressText(segment) {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** `root` leads from the page to the server's root: "" for /games, "../" for /game/<n> and /player/<nick>. */
export function playerLink(root, nick) {
  return element("a", { href: `${root}player/${encodeURIComponent(nick)}`, className: "nick", textContent: nick });
}

export function gameLink(root, number, text = `#${number}`) {
  return element("a", { href: `${root}game/${number}`, textContent: text });
}

/** One side of an archived game: its player's link, or a team game's players' links (its `players`,
 *  side n the n-th: odd sides blue, even red; docs/teams.md); a bot (the game's `bots`) marked as the
 *  lobby marks it. */
export function sideLinks(root, game, colour) {
  const link = (nick) => {
    const made = playerLink(root, nick);
    if (game.bots?.includes(nick)) made.textContent = `${nick} [${t("botMark")}]`;
    return made;
  };
  if (!game.players) return [link(colour === 1 ? game.blue : game.red)];
  const team = game.players.filter((_, index) => index % 2 === colour - 1);
  return team.flatMap((nick, index) => (index ? [", ", link(nick)] : [link(nick)]));
}

/** A game as one line: number, players, result, kind, date. */
export function gameRow(root, game) {
  const date = new Date(game.finished).toLocaleString();
  return element("li", { className: "game-row" },
    gameLink(root, game.number),
    element("span", { className: "players" }, ...sideLinks(root, game, 1), " – ", ...sideLinks(root, game, 2)),
    element("span", { className: "result", textContent: resultText(game.result, game.blue, game.red) }),
    element("span", { className: "kind", textContent: describe(game.gameType) }),
    element("span", { className: "rated", textContent: ratedText(game) }),
    element("time", { dateTime: game.finished, textContent: date }));
}

/** Whether a ranked game changed ratings, and if not, why (the server's `unrated`: docs/ratings.md). */
function ratedText(game) {
  if (game.rated) return t("gameRated");
  const why = game.unrated;
  return why ? t(`lineUnrated${why[0].toUpperCase()}${why.slice(1)}`) : "";
}

/** A game type as the lobby shows it. */
export function describe(gameType) {
  return gameTypeText(gameType, t);
}

/** `B+3`, `W+R`, `0`, `Void` in words, with the winner's nick. */
export function resultText(result, blue, red) {
  return result ? sharedResultText(result, blue, red, t) : "";
}

/** The JSON at `url`; on an error, the server's sentence (or the status) is thrown as an Error. */
export async function fetchJson(url) {
  const response = await fetch(url, { cache: "no-store" });
  const body = await response.json().catch(() => null);
  if (!response.ok) throw Object.assign(new Error(body?.error || `HTTP ${response.status}`), { status: response.status });
  return body;
}

/** Fills the header's texts and language choice; `render` draws the page again in a new language. */
export function startPage(render) {
  const languages = $("#language");
  languages.replaceChildren(...LANGUAGES.map((code) => element("option", { value: code, textContent: code.toUpperCase() })));
  languages.value = localStorage.getItem("kropki.lang") || defaultLanguage();
  const texts = () => {
    document.documentElement.lang = languages.value;
    for (const node of document.querySelectorAll("[data-text]")) node.textContent = t(node.dataset.text);
    for (const node of document.querySelectorAll("[data-label]")) node.title = node.ariaLabel = t(node.dataset.label);
  };
  languages.onchange = () => {
    localStorage.setItem("kropki.lang", languages.value);
    t = translator(languages.value);
    texts();
    render();
  };
  texts();
}

/** The page's error in words: 404 in the reader's language (`missing`), anything else as the server said. */
export function showFailure(error, missing) {
  const notice = $("#notice");
  notice.textContent = error.status === 404 ? t(missing) : t("notLoaded", { reason: error.message });
  notice.hidden = false;
}
