// The player page (/player/<nick>): rating, results, a graph of the rating after each rated game (inline
// SVG), and recent games, from /player/<nick>.json. A guest's page has only the games.

import { svg } from "./board.js";
import { $, addressText, fetchJson, gameRow, showFailure, startPage, t } from "./pages.js";

const nick = addressText(location.pathname.split("/").pop());
const GRAPH = { width: 600, height: 220, left: 44, right: 12, top: 12, bottom: 24 };
let player = null;

/** One point per rated game, oldest on the left; the rating scale spans the lowest and highest. */
function drawGraph(ratings) {
  const graph = $("#rating-graph");
  const { width, height, left, right, top, bottom } = GRAPH;
  graph.setAttribute("viewBox", `0 0 ${width} ${height}`);
  const values = ratings.map((point) => point.rating);
  const low = Math.min(...values) - 10;
  const high = Math.max(...values) + 10;
  const x = (index) => left + (ratings.length === 1 ? (width - left - right) / 2 : (index * (width - left - right)) / (ratings.length - 1));
  const y = (rating) => top + ((high - rating) * (height - top - bottom)) / (high - low);
  const text = (content, attributes) => Object.assign(svg("text", attributes), { textContent: content });
  const parts = [
    svg("line", { class: "axis", x1: left, y1: top, x2: left, y2: height - bottom }),
    svg("line", { class: "axis", x1: left, y1: height - bottom, x2: width - right, y2: height - bottom }),
    text(Math.round(high), { class: "label", x: left - 4, y: top + 4, "text-anchor": "end" }),
    text(Math.round(low), { class: "label", x: left - 4, y: height - bottom, "text-anchor": "end" }),
    text(new Date(ratings[0].at).toLocaleDateString(), { class: "label", x: left, y: height - 6 }),
    text(new Date(ratings.at(-1).at).toLocaleDateString(), { class: "label", x: width - right, y: height - 6, "text-anchor": "end" }),
    svg("polyline", { class: "rating-line", points: ratings.map((point, index) => `${x(index)},${y(point.rating)}`).join(" ") }),
  ];
  ratings.forEach((point, index) => {
    const dot = svg("circle", { class: "rating-point", cx: x(index), cy: y(point.rating), r: 4 });
    dot.append(Object.assign(svg("title"), { textContent: `#${point.game}: ${point.rating}` }));
    parts.push(dot);
  });
  graph.replaceChildren(...parts);
}

function render() {
  if (!player) return;
  $("#heading").textContent = player.bot ? `${player.nick} [${t("botMark")}]` : player.nick;
  const registered = Boolean(player.registered);
  $("#standing").hidden = $("#record").hidden = $("#graph-box").hidden = !registered;
  $("#guest").hidden = registered;
  if (registered) {
    $("#rating").textContent = player.rating;
    $("#deviation").textContent = t("deviation", { deviation: player.deviation });
    $("#record").textContent = t("record", { wins: player.wins, draws: player.draws, losses: player.losses });
    $("#no-rated").hidden = player.ratings.length > 0;
    $("#rating-graph").hidden = !player.ratings.length;
    if (player.ratings.length) drawGraph(player.ratings);
  }
  $("#game-list").replaceChildren(...player.games.map((game) => gameRow("../", game)));
  $("#recent").hidden = !player.games.length;
  $("#all-of-them").textContent = t("gamesOf", { nick: player.nick });
  $("#all-of-them").href = `../games?nick=${encodeURIComponent(player.nick)}`;
}

async function start() {
  startPage(render);
  try {
    player = await fetchJson(`${encodeURIComponent(nick)}.json`);
  } catch (error) {
    showFailure(error, "noSuchPlayer");
    document.body.dataset.ready = "true";
    return;
  }
  $("#profile").hidden = false;
  render();
  document.body.dataset.ready = "true";
}

start();
