// The archive's list (/games): every game or a player's (?nick=), newest first, a page at a time
// (?before=<number>: the games older than that one), read from /games.json.

import { $, element, fetchJson, gameRow, showFailure, startPage, t } from "./pages.js";

const PAGE = 30;
const asked = new URLSearchParams(location.search);
const nick = asked.get("nick") || "";
let games = [];

function render() {
  $("#heading").textContent = nick ? t("gamesOf", { nick }) : t("games");
  const list = $("#game-list");
  list.replaceChildren(...games.map((game) => gameRow("", game)));
  if (!games.length && $("#notice").hidden) list.append(element("li", { textContent: t("noGames") }));
  $("#newest").hidden = !asked.get("before");
  $("#newest").href = nick ? `games?nick=${encodeURIComponent(nick)}` : "games";
  $("#older").hidden = games.length < PAGE;
  if (games.length) {
    const older = new URLSearchParams({ ...(nick ? { nick } : {}), before: games.at(-1).number });
    $("#older").href = `games?${older}`;
  }
}

async function start() {
  startPage(render);
  $("#filter-nick").value = nick;
  const query = new URLSearchParams({ limit: PAGE });
  for (const name of ["nick", "before"]) if (asked.get(name)) query.set(name, asked.get(name));
  try {
    games = await fetchJson(`games.json?${query}`);
  } catch (error) {
    showFailure(error, "noGames");
  }
  render();
  document.body.dataset.ready = "true";
}

start();
