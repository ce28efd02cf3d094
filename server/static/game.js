// The game page (/game/<n>): an archived game replayed move by move from /game/<n>.json, in which the
// server's engine gives every move's realms and the dots it captured and freed; the page only draws them.

import { drawPosition } from "./board.js";
import { $, describe, element, fetchJson, resultText, showFailure, sideLinks, startPage, t } from "./pages.js";
import { pointFromSgf } from "./protocol.js";
import { BoardZoom } from "./zoom.js";

const number = location.pathname.split("/").pop();
const COLOUR = { B: 1, W: 2 };
let game = null;
let shown = 0; // how many moves are on the board
const zoom = new BoardZoom($("#board"), { zoomIn: $("#zoom-in"), zoomOut: $("#zoom-out"), fit: $("#zoom-fit") });

/** The position after `count` moves, in the shape board.js draws (protocol.js position()'s). */
function positionAfter(count) {
  const dots = new Map();
  const realms = [];
  const captured = new Set();
  for (const [colour, points] of Object.entries(game.setup)) for (const point of points) dots.set(point, COLOUR[colour]);
  for (const move of game.moves.slice(0, count)) {
    if (move.dot) dots.set(move.dot, COLOUR[move.colour]);
    for (const { owner, ring } of move.realms) realms.push({ owner, ring: ring.map(pointFromSgf) });
    for (const point of move.taken) captured.add(point);
    for (const point of move.freed) captured.delete(point);
  }
  const score = count ? game.moves[count - 1].score : [0, 0];
  return { dots, realms, captured, score: { 1: score[0], 2: score[1] } };
}

function moveText(move, index) {
  const [x, y] = move.dot ? pointFromSgf(move.dot) : [];
  const where = move.dot ? `${x + 1}:${y + 1}` : move.realms.length ? t("ringOnly") : t("stopPressed");
  const taken = move.taken.length ? ` · ${t("captures", { count: move.taken.length })}` : "";
  return `${index + 1}. ${t(move.colour === "B" ? "blue" : "red")} ${where}${taken}`;
}

/** Shows the position after `count` moves and says it; the focus, if it was on a move of the list,
 *  follows to the shown one. */
function go(count) {
  const inList = $("#move-list").contains(document.activeElement);
  shown = Math.max(0, Math.min(game.moves.length, count));
  render();
  if (inList) listStop().focus();
  const said = t("moveOf", { move: shown, moves: game.moves.length });
  $("#announcer").textContent = shown ? `${said}: ${moveText(game.moves[shown - 1], shown - 1)}` : said;
}

/** The move list's one Tab stop: the shown move's button, or the first move's before any is shown. */
function listStop() {
  return $("#move-list").querySelector(`[data-move="${Math.max(shown, 1)}"] button`);
}

/** The move list, made once (and again in another language); render() marks the current move. */
function renderMoves() {
  $("#move-list").replaceChildren(...game.moves.map((move, index) => {
    const item = element("li", {}, element("button", { type: "button", className: `move move-${COLOUR[move.colour]}`, textContent: moveText(move, index), tabIndex: -1 }));
    item.dataset.move = index + 1;
    return item;
  }));
}

function render() {
  if (!game) return;
  $("#heading").textContent = t("gameNumber", { number: game.number });
  $("#result").textContent = resultText(game.result, game.blue, game.red);
  $("#kind").textContent = describe(game.gameType);
  const view = positionAfter(shown);
  $("#blue-score").textContent = view.score[1];
  $("#red-score").textContent = view.score[2];
  const board = $("#board");
  const last = shown ? game.moves[shown - 1].dot : null;
  board.replaceChildren(...drawPosition(board, game.width, game.height, view, last && pointFromSgf(last)));
  board.setAttribute("aria-label", t("board", { width: game.width, height: game.height }));
  zoom.show();
  $("#move-counter").textContent = t("moveOf", { move: shown, moves: game.moves.length });
  // aria-disabled, not disabled: a disabled button would drop the keyboard's focus at either end
  $("#first").ariaDisabled = $("#previous").ariaDisabled = String(shown === 0);
  $("#next").ariaDisabled = $("#last").ariaDisabled = String(shown === game.moves.length);
  const list = $("#move-list");
  for (const stale of list.querySelectorAll("[aria-current], [tabindex='0']")) {
    stale.removeAttribute("aria-current");
    stale.tabIndex = -1;
  }
  if (!game.moves.length) return;
  listStop().tabIndex = 0;
  list.querySelector(`[data-move="${shown}"] button`)?.setAttribute("aria-current", "step");
  list.querySelector("[aria-current]")?.scrollIntoView({ block: "nearest" });
}

async function start() {
  startPage(() => {
    if (game) renderMoves();
    render();
  });
  $("#first").onclick = () => go(0);
  $("#previous").onclick = () => go(shown - 1);
  $("#next").onclick = () => go(shown + 1);
  $("#last").onclick = () => go(game.moves.length);
  $("#move-list").onclick = (event) => {
    const item = event.target.closest("li[data-move]");
    if (item) go(Number(item.dataset.move));
  };
  document.addEventListener("keydown", (event) => {
    if (!game || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.target.closest("input, select, textarea")) return; // a field's keys are its own
    const keys = { ArrowLeft: shown - 1, ArrowRight: shown + 1, Home: 0, End: game.moves.length };
    if (event.target.closest("#move-list")) Object.assign(keys, { ArrowUp: shown - 1, ArrowDown: shown + 1 });
    const to = keys[event.key];
    if (to === undefined) return;
    event.preventDefault();
    go(to);
  });
  try {
    game = await fetchJson(`${number}.json`);
  } catch (error) {
    showFailure(error, "noSuchGame");
    document.body.dataset.ready = "true";
    return;
  }
  $("#blue-name").replaceChildren(...sideLinks("../", game, 1));
  $("#red-name").replaceChildren(...sideLinks("../", game, 2));
  $("#sgf").href = `../sgf/${game.number}`;
  $("#sgf").download = `kropki-${game.number}.sgf`;
  $("#analyse").href = `../?analyse=${game.number}`;
  $("#replay").hidden = false;
  renderMoves();
  shown = game.moves.length;
  render();
  document.body.dataset.ready = "true";
}

start();
