// A tournament's standings page (docs/tournaments.md, "Standings"), at /tournament/<name>/standings:
// it reads standings.json beside it (the ranking is computed by the server) and shows the ranking and
// every table of the tournament; again every 30 s while a game is being played or, for a tournament the
// server runs, until it is over (an arena's standings have columns of their own).

import { $, addressText, element, playerLink as pagesPlayerLink, startPage, t } from "./pages.js";
import { resultText } from "./protocol.js";
import { describeTournament } from "./tournaments.js";

const REFRESH_MS = 30_000;
const RETRY_MS = 5_000;
const segments = location.pathname.split("/");
const nameInAddress = segments[segments.length - 2]; // as the address encodes it
const name = addressText(nameInAddress);
let read = null; // the last standings.json: {tournament, standings, tables, tablesLeftOut}
let missing = false; // no table was set up for this tournament
let timer = null;

/** A nick as a link to its player page (the page is two folders down: /tournament/<name>/standings). */
function playerLink(nick, className) {
  const link = pagesPlayerLink("../../", nick);
  link.classList.add(className);
  return link;
}

/** A side: one player, or a team's players ("*Ala, *Cid": docs/teams.md), each with a link of their own. */
function sideLinks(side, className) {
  const names = side.split(", ");
  const parts = names.flatMap((nick, index) => (index ? [", ", playerLink(nick, className)] : [playerLink(nick, className)]));
  return names.length > 1 ? element("span", { className }, ...parts) : parts[0];
}

function number(value) {
  return new Intl.NumberFormat(document.documentElement.lang, { maximumFractionDigits: 2 }).format(value);
}

function outcome(entry) {
  if (entry.state === "playing") return t("inProgress", { moves: entry.moves ?? 0 });
  if (entry.state === "cancelled") return t("cancelledByOrganiser");
  if (entry.state === "closed") return t("unfinished");
  return resultText(entry.result, entry.blue, entry.red, t);
}

/** The columns every ranking starts with: rank, player, points, games (and those in progress). */
function leadingCells(row) {
  const games = element("td", { className: "games" }, String(row.games));
  if (row.playing) games.append(element("span", { className: "playing", textContent: t("playingNow", { count: row.playing }) }));
  return [
    element("td", { className: "rank", textContent: String(row.rank) }),
    element("td", { className: "who" }, sideLinks(row.player, "nick")),
    element("td", { className: "points", textContent: number(row.points) }),
    games,
  ];
}

/** An arena ranks by lichess's points: its own columns (docs/tournaments.md, "Arena"). */
function renderArena() {
  const head = ["rankShort", "player", "pointsShort", "gamesPlayed", "winsShort", "sheet"];
  $("#standings thead tr").replaceChildren(...head.map((key) => element("th", { scope: "col", textContent: t(key) })));
  $("#standings tbody").replaceChildren(
    ...read.standings.map((row) => {
      const sheet = row.sheet.join(" ") + (row.onFire ? " 🔥" : "");
      return element(
        "tr",
        {},
        ...leadingCells(row),
        element("td", { className: "wins", textContent: String(row.wins) }),
        element("td", { className: "sheet", textContent: sheet }),
      );
    }),
  );
}

function renderStandings() {
  const hosted = read.hosted;
  $("#hosted-summary").hidden = !hosted;
  if (hosted) $("#hosted-summary").textContent = describeTournament(hosted, t);
  const rules = [t(hosted?.kind === "arena" ? "arenaRules" : "standingsRules")];
  if (hosted?.kind === "swiss") rules.push(t("byeRule"));
  $("#rules").textContent = rules.join(" ");
  if (hosted?.kind === "arena") {
    renderArena();
    return;
  }
  $("#standings tbody").replaceChildren(
    ...read.standings.map((row) =>
      element(
        "tr",
        {},
        ...leadingCells(row),
        element("td", { className: "buchholz", textContent: number(row.buchholz) }),
        element("td", { className: "berger", textContent: number(row.sonnebornBerger) }),
      ),
    ),
  );
}

function renderGames() {
  const leftOut = read.tablesLeftOut ?? 0; // the oldest tables of a big tournament: only in the results JSON
  $("#tables-left-out").hidden = !leftOut;
  $("#tables-left-out").textContent = leftOut ? t("tablesLeftOut", { count: leftOut }) : "";
  $("#games").replaceChildren(
    ...read.tables.map((entry) => {
      const item = element("li", { className: `state-${entry.state}` });
      item.dataset.table = entry.table;
      if (entry.round !== null) item.append(element("span", { className: "round", textContent: t("roundNumber", { round: entry.round }) }));
      item.append(
        element(
          "span",
          { className: "players" },
          sideLinks(entry.blue, "blue"),
          " – ",
          sideLinks(entry.red, "red"),
        ),
        element("span", { className: "outcome", textContent: outcome(entry) }),
      );
      if (entry.game !== null) item.append(element("a", { className: "game", href: `../../game/${entry.game}`, textContent: `#${entry.game}` }));
      if (entry.sgf) item.append(element("a", { className: "sgf", href: `../..${entry.sgf}`, textContent: "SGF" }));
      return item;
    }),
  );
}

function render() {
  document.title = t("standingsOf", { name });
  $("#title").textContent = t("standingsOf", { name });
  for (const item of document.querySelectorAll("[data-title]")) item.title = t(item.dataset.title);
  $("#page").hidden = missing;
  if (missing) notify(t("noTournament", { name }));
  if (!read) return;
  renderStandings();
  renderGames();
}

function notify(text) {
  const notice = $("#notice");
  notice.textContent = text;
  notice.hidden = !text;
}

async function load() {
  clearTimeout(timer);
  let again = REFRESH_MS;
  try {
    // asked again each time, answered 304 when its ETag still holds (docs/tournaments.md)
    const response = await fetch("standings.json", { cache: "no-cache" });
    missing = response.status === 404;
    if (response.ok) {
      read = await response.json();
      notify("");
    } else if (!missing) {
      throw new Error(`HTTP ${response.status}`);
    }
  } catch {
    notify(t("resultsNotLoaded"));
    again = RETRY_MS;
  }
  render();
  const playing = read?.tables.some((entry) => entry.state === "playing");
  const going = read?.hosted && ["registering", "running"].includes(read.hosted.state);
  if (playing || going || again === RETRY_MS) timer = setTimeout(load, again);
}

function start() {
  startPage(render); // the language menu and the [data-text] texts, as the archive's pages have them
  $("#results-json").href = `../${nameInAddress}`;
  $("#all-games").href = `../${nameInAddress}.sgf.zip`;
  render();
  load();
}

start();
