// The browser client: zagram's protocol only (a.kropki, auth.py), with the server's push connection
// (push.js) or, where it cannot connect, its opt-in long poll. Actions go through zagram's request
// endpoints (graczStawiaKropke, propose, dodajWpis, zapraszam...); one push connection or one long poll at
// a time reads the stream, so replies never overlap and msgNo only moves forward.
//
// Longer than 500 lines, with a reason: the stream's readers, the screens and the clicks share one state
// object that a new login replaces whole; what stands without it lives in modules of its own (protocol.js
// parsing, board.js drawing, lines.js server lines, alerts.js sounds and notifications, tournaments.js the
// tournaments the server runs, moderation.js reports and moderators' tools, push.js the push connection,
// i18n.js texts).

import {
  analysisGameType, buildGameType, colourOfSide, describeGameType, encodeText, gameTypeText, guestId, mayDo, moveOfNode, parseChatLine,
  parseClockLine, parseInvitationLine, parseProposalLine, parseReply, parseStateLine, parseTableLine, pointFromSgf, pointToSgf,
  position, registeredId, resultText, sgfNodes,
} from "./protocol.js";
import { CELL, at, drawPosition, svg } from "./board.js";
import { LANGUAGES, defaultLanguage, translator } from "./i18n.js";
import { refusalText, serverLineText } from "./lines.js";
import { allowNotifications, notifyAway, playSound, wakeSound } from "./alerts.js";
import { renderTournaments, showTournaments, stopTournaments } from "./tournaments.js";
import { BoardZoom } from "./zoom.js";
import { parsePoolLine, parseSeekLine, postSeek, renderQuickGame } from "./seeks.js";
import { lineMenu, nameMenu, renderModerationEntry, setUpModeration } from "./moderation.js";
import { renderAbsence } from "./absence.js";
import { pushing, readPushed, stopPushing } from "./push.js";

const LONG_POLL_SECONDS = 25;
const GIFT_SECONDS = 30; // a click on "+30″" beside the opponent's clock (dodajeCzas takes 1..3600)
const RETRY_MS = 1000;
const COMPUTER = new Set(["AI easy", "AI medium", "AI hard"]); // the server's AI players (docs/ai.md)
const MAX_NICK = 20; // characters (code points), a guest's star with them (docs/protocol.md)
const LOW_TIME_SECONDS = 10; // a player's clock under this sounds once a turn
const OUT_OF_THE_GAME = /^(left|resigned)(\d)$/; // a team player left the game (docs/teams.md)
const ARROWS = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] }; // the board's cursor
const ANNOUNCED_KEPT = 5; // lines left in the live region: a screen reader reads each as it comes

const $ = (selector) => document.querySelector(selector);
let lang = localStorage.getItem("kropki.lang") || defaultLanguage();
let t = translator(lang);

let session = null; // {id, nick, registered}
let generation = 0; // a new login starts a new poll loop; the old one stops
let seen = 0;
let state = freshState();
let hearing = false; // a reply read as it happens (not the whole state after a login): its news are said
let cursorSaid = ""; // what the live region last said of the board's cursor
const boardZoom = new BoardZoom($("#board"), { zoomIn: $("#zoom-in"), zoomOut: $("#zoom-out"), fit: $("#zoom-fit") });

function freshState() {
  return {
    people: [],
    info: new Map(),
    tables: new Map(), // lobby's view: uid -> {desc, status}
    games: new Map(), // tables this player sits at or watches: uid -> game state
    subscriptions: [0],
    invitation: { incoming: null, outgoing: null, rejected: null, pool: null }, // and the pool waited in (`w`)
    seeks: new Map(), // the lobby's open seeks by number (seeks.js)
    chats: new Map([["0", { title: () => t("lobby"), lines: [], keys: new Set(), unread: false }]]),
    activeChat: "0",
    drawing: { path: [], closed: false, targets: [] },
    aim: null, // a touch's point waiting for "Place" (two-step touch)
    cursor: null, // the keyboard's point on the board, while the board has the focus
    at: new Map(), // nick -> the tables they are at (getBMsg's `b` lines), for the lobby's table list
    showFinished: false,
    ignored: [], // the players this one ignores, as the server's `n` line lists them (docs/client.md)
    refusesGuestPrivates: null, // a registered player's setting, as the server's `a` line says (null: not yet)
  };
}

// --- requests ---------------------------------------------------------------------------------

function query(params) {
  return Object.entries(params)
    .map(([name, value]) => `${name}=${encodeURIComponent(value)}`)
    .join("&");
}

async function request(path, params, timeoutMs = 15000) {
  const response = await fetch(`${path}?${query(params)}`, { cache: "no-store", signal: AbortSignal.timeout(timeoutMs) });
  return (await response.text()).trim();
}

/** An action with the player's id; a refusal (`err.<code>`) is shown, and nothing else happens. */
async function act(params) {
  try {
    const answer = await request("a.kropki", { idGracza: session.id, ...params });
    if (answer.startsWith("err.")) notify(refusalText(answer, t));
    return answer;
  } catch {
    notify(t("reconnecting"));
    return null;
  }
}

// --- logging in -------------------------------------------------------------------------------

async function logIn({ nick, password, register }) {
  if (register && !password) {
    notify(t("passwordNeeded")); // an account without a password would be a guest's: say so, do nothing
    return;
  }
  const registered = Boolean(password);
  if (!registered && !nick.startsWith("*")) nick = `*${nick}`;
  // the field takes 20 characters, and the server's 20 count a guest's star: say so before asking it
  if (!registered && [...nick].length > MAX_NICK) {
    notify(t("guestNickTooLong"));
    return;
  }
  const id = registered ? registeredId(nick, password) : guestId();
  const failure = await sendLogin({ id, nick, registered }, register);
  if (failure) {
    notify(failure);
    return;
  }
  session = { id, nick, registered };
  sessionStorage.setItem("kropki.session", JSON.stringify(session));
  startPolling();
}

/**
 * zagram's auto-login link hands a session that another program (MultiPoints...) has open to this
 * browser. A link can carry anyone's id, so the player is asked first, with the nick shown, and the
 * server only resumes a live session of that id and nick, never makes one (docs/client.md).
 */
function askToTakeOver({ nick, id }) {
  const box = $("#takeover");
  $("#takeover-text").textContent = t("takeOverQuestion", { nick });
  $("#takeover-no").onclick = () => box.close();
  $("#takeover-yes").onclick = () => box.close("yes");
  // Escape closes it too, as Cancel; either way the focus goes to the log-in form (hidden once taken over)
  box.onclose = () => {
    $("#nick").focus();
    if (box.returnValue === "yes") takeOver({ nick, id });
  };
  box.showModal();
  $("#takeover-no").focus(); // the answer that changes nothing
}

/** Continue: the server resumes the link's session only if it is live under that nick. */
async function takeOver({ nick, id }) {
  let answer;
  try {
    answer = await request("a.kropki", { co: "resumeSession", idGracza: id, opis: nick, seeks: 1 });
  } catch {
    notify(t("reconnecting"));
    return;
  }
  if (answer !== "") {
    notify(answer === "err.notLoggedIn" ? t("linkNotLive") : refusalText(answer, t));
    return;
  }
  session = { id, nick, registered: !nick.startsWith("*") };
  sessionStorage.setItem("kropki.session", JSON.stringify(session));
  // the session kept the other program's language: what the server tells this player alone (a
  // refusal, a moderator's mute) is to read in this page's
  await act({ co: "changeLang", na: lang });
  startPolling();
}

/** Logs in (again) on the server; the reason it failed, or null. Every login says `seeks=1`: this client
 *  shows seeks as seeks (seeks.js), so the server offers it none as an invitation (docs/protocol.md). */
async function sendLogin({ id, nick, registered }, register = false) {
  let answer;
  try {
    if (!registered) {
      answer = await request("a.kropki", { co: "guestLogin", idGracza: id, opis: nick, lang, seeks: 1 });
      if (answer === "") return null;
      if (answer === "err.badNick") return t("badNick");
      if (answer === "err.nickInUse") return t("nickTaken");
      return refusalText(answer, t);
    }
    if (register) {
      answer = await request("auth.py", { co: "rejestruj", opisGracza: nick, idGracza: id, email: "v", lang, seeks: 1 });
      if (answer.startsWith("ok.zarejestrowalem")) return null;
      if (answer === "ok.tenOpisJestJuzZajety") return t("nickTaken");
      if (answer === "ok.niedozwolonyOpis") return t("badNick");
      return refusalText(answer, t);
    }
    answer = await request("auth.py", { co: "loguj", opisGracza: nick, idGracza: id, lang, seeks: 1 });
    if (answer.startsWith("ok.zalogowanyNaSerwer")) return null;
    return refusalText(answer, t);
  } catch {
    return t("reconnecting");
  }
}

async function logOut() {
  generation++;
  stopPushing();
  const id = session.id;
  session = null;
  sessionStorage.removeItem("kropki.session");
  try {
    await request("a.kropki", { co: "usunGracza", playerId: id });
  } catch {
    // the server logs a silent player out after a minute anyway
  }
  stopTournaments();
  state = freshState();
  render();
}

// --- the stream -------------------------------------------------------------------------------

function startPolling() {
  const mine = ++generation;
  stopPushing();
  seen = 0;
  state = freshState();
  render();
  poll(mine);
  askIgnored();
  askGuestPrivates();
  analyseAsked();
  showTournaments({ list: $("#hosted"), heading: $("#hosted-heading"), nick: session.nick, act, t, element, button });
}

async function poll(mine) {
  // after a failed poll the next one is not held: answered at once when the server is back, it takes
  // "Connection lost" away then, where a long poll would leave it up to LONG_POLL_SECONDS more
  let failed = false;
  while (session && mine === generation) {
    if (pushing()) {
      // the stream over a WebSocket (push.js); it ends on a close, then goes on from the same msgNo
      const params = { co: "getBMsg", playerId: session.id, msgNo: seen ? `${seen}.1` : "0.0" };
      await readPushed(params, take, () => session && mine === generation);
      if (session && mine === generation) await sleep(RETRY_MS);
      continue;
    }
    let body;
    try {
      // getBMsg: the `b` lines say who is at which table (the lobby hides finished tables nobody is at);
      // `.0` asks for everyone's `b` line, which the first reply (the whole state) carries
      const params = { co: "getBMsg", playerId: session.id, msgNo: seen ? `${seen}.1` : "0.0" };
      if (seen && !failed) params.wait = LONG_POLL_SECONDS;
      body = await request("a.kropki", params, (LONG_POLL_SECONDS + 15) * 1000);
    } catch {
      if (mine !== generation) return;
      notify(t("reconnecting"));
      failed = true;
      await sleep(RETRY_MS);
      continue;
    }
    failed = false;
    if (mine !== generation) return;
    await take(body);
  }
}

/** One reply of the stream, a poll's or a push frame: read, or its refusal shown. False when the stream
 *  must start again from `seen` (a refusal, a new login, the numbering started again). */
async function take(body) {
  const reply = parseReply(body);
  if (!reply) {
    // a refusal (err.tooFast, err.storage...) in words; anything else as the server sent it
    notify(body.startsWith("err.") ? refusalText(body, t) : t("refusedOther", { reason: body.slice(0, 80) }));
    await sleep(RETRY_MS);
    return false;
  }
  if (reply.status === "sd") {
    // the server forgot the session (a restart, or a minute without polls): log in again and
    // read the whole state afresh; the server seats the player back at a running game
    const failure = await sendLogin(session);
    if (failure) {
      notify(failure);
      await sleep(RETRY_MS);
    } else {
      seen = 0;
      askIgnored(); // a new session: a registered player's list is the account's, a guest's is empty
      askGuestPrivates();
    }
    return false;
  }
  clearNotice();
  const following = reply.last >= seen;
  if (!following) seen = 0; // numbering started again: the next reply is the full state
  else {
    const before = heard();
    hearing = seen > 0;
    apply(reply);
    hearing = false;
    seen = reply.last;
    react(before, heard());
  }
  render();
  return following;
}

function apply(reply) {
  const invitation = { incoming: null, outgoing: null, rejected: null, pool: null };
  state.subscriptions = reply.sections.map(([uid]) => uid);
  for (const [uid, lines] of reply.sections) {
    const historyStarted = new Set();
    for (const line of lines) readLine(uid, line, invitation, historyStarted);
  }
  state.invitation = invitation;
  for (const uid of state.games.keys()) {
    if (!state.subscriptions.includes(uid)) {
      state.games.delete(uid);
      state.chats.delete(`t${uid}`);
      if (state.activeChat === `t${uid}`) state.activeChat = "0";
    }
  }
}

function game(uid) {
  if (!state.games.has(uid)) {
    state.games.set(uid, {
      uid, people: [], desc: null, status: null, clock: null, setup: [], moves: [], proposal: null, drawing: {},
      gone: new Set(), // the sides of a team game whose players left it (its server lines say so)
    });
    state.chats.set(`t${uid}`, { title: () => `${t("table")} ${uid}`, lines: [], keys: new Set(), unread: false });
    state.activeChat = `t${uid}`;
  }
  return state.games.get(uid);
}

const READERS = [
  ["pr", (uid, body) => {
    people(uid).splice(0, Infinity, ...split(body));
    if (uid === 0) for (const nick of state.at.keys()) if (!state.people.includes(nick)) state.at.delete(nick);
  }],
  ["pa", (uid, body) => { const list = people(uid); for (const nick of split(body)) if (!list.includes(nick)) list.push(nick); }],
  ["pd", (uid, body) => {
    const list = people(uid);
    for (const nick of split(body)) {
      list.splice(list.indexOf(nick) >>> 0, 1);
      if (uid === 0) state.at.delete(nick);
    }
  }],
  ["b", (uid, body) => {
    const [nick, ...uids] = body.split(".");
    if (uid === 0) state.at.set(nick, uids.filter(Boolean).map(Number).filter((at) => at !== 0));
  }],
  ["gr", (uid, body) => { state.seeks.clear(); const keep = new Map(); for (const id of split(body).map(Number)) keep.set(id, state.tables.get(id) || {}); state.tables = keep; }],
  ["ga", (uid, body) => { for (const id of split(body).map(Number)) if (!state.tables.has(id)) state.tables.set(id, {}); }],
  ["gd", (uid, body) => { for (const id of split(body).map(Number)) state.tables.delete(id); }],
  ["sr", (uid, body) => { readRecord(game(uid), body); }],
  ["sa", (uid, body) => { readMoves(game(uid), body); }],
  ["vg", (uid, body, invitation) => { invitation.incoming = parseInvitationLine(body); }],
  ["vs", (uid, body, invitation) => { invitation.outgoing = parseInvitationLine(body); }],
  ["vr", (uid, body, invitation) => { invitation.rejected = body; }],
  ["ka", (uid, body) => { const seek = parseSeekLine(body); state.seeks.set(seek.number, seek); }],
  ["kd", (uid, body) => { state.seeks.delete(Number(body)); }],
  ["w", (uid, body, invitation) => { invitation.pool = parsePoolLine(body); }],
  ["d", (uid, body) => {
    const desc = parseTableLine(body);
    if (!desc) return;
    if (uid === 0) tableEntry(desc.uid).desc = desc;
    else game(uid).desc = desc;
  }],
  ["x", (uid, body) => {
    const status = parseStateLine(body);
    if (uid !== 0) {
      game(uid).status = status;
      return;
    }
    tableEntry(status.uid).status = status;
    // A game that ends with nothing to archive (no move yet) says so only in the lobby: the game
    // screen of that table must end too.
    const open = state.games.get(status.uid);
    if (open && status.result) open.status = status;
  }],
  ["f", (uid, body) => { game(uid).clock = { ...parseClockLine(body), at: Date.now() }; }],
  ["u", (uid, body) => { game(uid).proposal = parseProposalLine(body); }],
  ["o", (uid, body) => { const [side, where] = [body[0], body.slice(2)]; game(uid).drawing[side] = where === "-" ? null : where; }],
  ["n", (uid, body) => { state.ignored = split(body); }],
  ["aguestprivates.", (uid, body) => { state.refusesGuestPrivates = body === "off"; }],
  ["i", (uid, body) => {
    const [nick, avatar, flags, language, rating, , , , prestige] = body.split(".");
    state.info.set(nick, {
      avatar,
      free: !/[Nb]/.test(flags || ""),
      bot: (flags || "").includes("R"), // a program playing through the bot API (docs/bots.md)
      lang: language,
      rating: rating ? Number(rating) : null,
      prestige: prestige || "",
    });
  }],
];

function readLine(uid, line, invitation, historyStarted) {
  if (line.startsWith("cr") || line.startsWith("ca")) return readChat(uid, line, historyStarted);
  if (line.startsWith("cd")) return deleteChat(uid, line.slice(2));
  for (const [prefix, reader] of READERS) {
    if (line.startsWith(prefix)) return reader(uid, line.slice(prefix.length), invitation);
  }
}

function people(uid) {
  return uid === 0 ? state.people : game(uid).people;
}

function split(body) {
  return body ? body.split(".") : [];
}

function tableEntry(uid) {
  if (!state.tables.has(uid)) state.tables.set(uid, {});
  return state.tables.get(uid);
}

/** `sr(;AB[..]AW[..];B[..];W[..])`: start dots, when there are some, in a set-up node of their own,
 *  then one node per move; `sr(;GM[40])` for a game with neither (docs/protocol.md). */
function readRecord(table, body) {
  const nodes = sgfNodes(body);
  table.setup = nodes.flatMap((node) => [
    ...(node.AB || []).map((text) => [pointFromSgf(text), 1]),
    ...(node.AW || []).map((text) => [pointFromSgf(text), 2]),
  ]);
  table.moves = nodes.map(moveOfNode).filter(Boolean);
  if (table.uid === currentGame()?.uid) clearDrawing(false);
}

function readMoves(table, body) {
  for (const move of sgfNodes(body).map(moveOfNode).filter(Boolean)) {
    if (move.undo) table.moves.pop();
    else table.moves.push(move);
    // a move ends its side's drawing, at a team table its team's (the server sends no `o` for it)
    for (const side of Object.keys(table.drawing)) if (colourOfSide(Number(side)) === move.colour) delete table.drawing[side];
  }
  if (table.uid === currentGame()?.uid) clearDrawing(false);
}

function readChat(uid, line, historyStarted) {
  const parsed = parseChatLine(line.slice(2));
  if (!parsed) return;
  let key = uid === 0 ? "0" : `t${uid}`;
  if (uid === 0 && parsed.nick.includes("-")) {
    if (!["1", "2"].includes(parsed.type)) return; // "we talked" lists and conversation notices
    const [first, second] = parsed.nick.split("-");
    const other = first === session.nick ? second : first;
    key = `p${other}`;
    parsed.author = parsed.type === "1" ? first : second;
  } else {
    parsed.author = parsed.nick;
  }
  let chat = state.chats.get(key);
  if (!chat) {
    if (key.startsWith("t")) game(uid);
    else state.chats.set(key, { title: () => t("privateWith", { nick: key.slice(1) }), lines: [], keys: new Set(), unread: false });
    chat = state.chats.get(key);
  }
  if (line.startsWith("cr") && !historyStarted.has(key)) {
    historyStarted.add(key);
    chat.lines = [];
    chat.keys = new Set();
  }
  const unique = `${parsed.key}.${parsed.nick}`;
  if (chat.keys.has(unique)) return;
  chat.keys.add(unique);
  chat.lines.push(parsed);
  const out = !parsed.author && key.startsWith("t") && OUT_OF_THE_GAME.exec(parsed.type);
  if (out) game(uid).gone.add(Number(out[2]));
  if (parsed.type === "e") notify(parsed.text);
  // a game that ends void (an organiser's cancel, nobody came) is said in the notice bar as well
  if (!parsed.author && parsed.type === "Void" && line.startsWith("ca")) notify(serverLineText(parsed, t));
  if (key !== state.activeChat) chat.unread = true;
  // the lobby's chat is said only while it is the chat shown; a refusal (`e`) is said by notify()
  const shown = key !== "0" || state.activeChat === "0";
  if (hearing && line.startsWith("ca") && shown && parsed.type !== "e" && parsed.author !== session.nick) {
    if (!parsed.author) announce(serverLineText(parsed, t));
    else if (!isIgnored(parsed.author)) announce(`${parsed.author}: ${parsed.text}`);
  }
}

function deleteChat(uid, key) {
  const chat = state.chats.get(uid === 0 ? "0" : `t${uid}`);
  if (chat) chat.lines = chat.lines.filter((line) => line.key !== key);
}

// --- the game ---------------------------------------------------------------------------------

/** The game table shown: the newest one this player is at (sitting or watching). */
function currentGame() {
  const uids = state.subscriptions.filter((uid) => uid !== 0 && state.games.has(uid));
  return uids.length ? state.games.get(uids.at(-1)) : null;
}

/** The analyser of an analysis table (kind a), who places dots of both colours. */
function analysing(table) {
  return table?.desc?.kind === "a" && table.desc.analyser === session?.nick;
}

/** This player's side (its colour in a game of two; 1, 3... or 2, 4... at a team table), 0 for a
 *  spectator or a team player who left the game; at an analysis the colour chosen (else in turn). */
function mySide(table) {
  if (!table?.desc || !session) return 0;
  if (analysing(table)) return { blue: 1, red: 2 }[$("#next-colour").value] || table.status?.toMove || 1;
  const side = table.desc.players.indexOf(session.nick) + 1;
  return table.gone.has(side) ? 0 : side;
}

function playing(table) {
  return Boolean(table?.status) && table.status.result === null;
}

function adjacent([x1, y1], [x2, y2]) {
  return Math.max(Math.abs(x1 - x2), Math.abs(y1 - y2)) === 1;
}

function samePoint(a, b) {
  return a[0] === b[0] && a[1] === b[1];
}

function ringText(points) {
  return points.map(pointToSgf).join("");
}

function clearDrawing(tellServer) {
  const drawing = state.drawing;
  const hadRing = drawing.path.length > 0;
  state.drawing = { path: [], closed: false, targets: [] };
  const table = currentGame();
  if (tellServer && hadRing && table) act({ co: "okrazam", table: table.uid, where: "-" });
}

async function clickPoint(point) {
  const table = currentGame();
  const side = mySide(table);
  if (!side || !playing(table) || (table.status.toMove !== side && !analysing(table))) return;
  const chosen = analysing(table) && $("#next-colour").value;
  const place = (where) => act({ co: "graczStawiaKropke", table: table.uid, where, ...(chosen ? { colour: chosen } : {}) });
  const { dots, captured } = position(table.setup, table.moves);
  const key = pointToSgf(point);
  const owner = dots.get(key);
  if (owner && captured.has(key)) return;
  if (table.desc.rules !== "t") {
    if (!owner) await place(key);
    return;
  }
  const drawing = state.drawing;
  if (owner === colourOfSide(side)) {
    extendRing(drawing, point);
    render();
    if (drawing.path.length) act({ co: "okrazam", table: table.uid, where: `.${ringText(drawing.path)}` });
    return;
  }
  if (owner) {
    const at = drawing.targets.findIndex((target) => samePoint(target, point));
    if (at >= 0) drawing.targets.splice(at, 1);
    else drawing.targets.push(point);
    render();
    return;
  }
  let where = key;
  const path = drawing.path;
  if (drawing.closed) where += `.${ringText(path)}`;
  else if (path.length >= 3 && adjacent(point, path.at(-1)) && adjacent(point, path[0])) {
    where += `.${ringText([...path, point, path[0]])}`;
  }
  where += drawing.targets.map((target) => `!${pointToSgf(target)}`).join("");
  const answer = await place(where);
  if (answer === "") clearDrawing(false);
  render();
}

/** Whether a dot can be placed on `point` by this player now (what a tap aims at). */
function canPlace(point) {
  const table = currentGame();
  const side = mySide(table);
  if (!side || !playing(table) || (table.status.toMove !== side && !analysing(table))) return false;
  return !position(table.setup, table.moves).dots.has(pointToSgf(point));
}

/** A touch: the first tap on an empty point aims (a marker, the point's coordinates, nudges), a second
 *  tap on the same point or "Place" plays it; a finger cannot hit a 10-pixel point the first time. */
function tapPoint(point) {
  const aim = state.aim;
  if (!canPlace(point)) {
    state.aim = null;
    clickPoint(point);
  } else if (aim && samePoint(aim, point)) {
    placeAim();
  } else {
    state.aim = point;
  }
  render();
}

function placeAim() {
  const aim = state.aim;
  state.aim = null;
  if (aim && canPlace(aim)) clickPoint(aim);
  render();
}

/** The aim given up, by "Cancel" or Escape: nothing is played, and a focus in the aim's box, which goes
 *  with it, goes back to the board, where the aim began. */
function cancelAim() {
  const inBox = $("#aim").contains(document.activeElement);
  state.aim = null;
  if (inBox) $("#board").focus();
  render();
}

function nudgeAim(dx, dy) {
  const table = currentGame();
  if (!state.aim || !table?.desc) return;
  const [x, y] = state.aim;
  state.aim = onBoard(table.desc, [x + dx, y + dy]);
  render();
}

/** The nearest point of the board to `[x, y]`. */
function onBoard({ width, height }, [x, y]) {
  return [Math.min(width - 1, Math.max(0, x)), Math.min(height - 1, Math.max(0, y))];
}

/** A point chosen on the board: a click, a tap, or Enter or Space on the keyboard's cursor. */
function choosePoint(point, touch) {
  if (touch) tapPoint(point);
  else clickPoint(point);
}

/** Whether the board has the keyboard's focus (a click or a tap focuses it too, and shows no cursor). */
function keyboardOnBoard() {
  return $("#board").matches(":focus-visible");
}

/** Where the cursor starts: on the last dot played, else in the middle of the board. */
function cursorStart(table) {
  return table.moves.findLast((move) => move.point)?.point || [Math.floor(table.desc.width / 2), Math.floor(table.desc.height / 2)];
}

function boardKey(event) {
  const table = currentGame();
  if (!table?.desc) return;
  if (event.key in ARROWS) {
    event.preventDefault();
    const [dx, dy] = ARROWS[event.key];
    const [x, y] = state.cursor || cursorStart(table);
    state.cursor = onBoard(table.desc, state.cursor ? [x + dx, y + dy] : [x, y]);
    render();
  } else if ((event.key === "Enter" || event.key === " ") && state.cursor) {
    event.preventDefault();
    choosePoint(state.cursor, false);
  }
}

/** A click on one's own dot in territory rules: start, extend, close or shorten the ring being drawn. */
function extendRing(drawing, point) {
  const path = drawing.path;
  const at = path.findIndex((p) => samePoint(p, point));
  if (drawing.closed) {
    drawing.closed = false;
    path.pop();
  }
  if (at === 0 && path.length >= 3) {
    path.push(point);
    drawing.closed = true;
  } else if (at >= 0) {
    path.splice(at + 1);
  } else if (path.length && adjacent(path.at(-1), point)) {
    path.push(point);
  } else {
    path.splice(0, Infinity, point);
  }
}

// --- rendering --------------------------------------------------------------------------------

// No redraw under a pressed button: the lists are drawn anew at every reply (several times a second
// with a busy lobby's news), and a control taken out between a press and its release lost the click.
// The redraw waits for the release, and comes after the click it makes.
let pressed = false;
let drawAfterRelease = false;

function pressEnded() {
  pressed = false;
  if (drawAfterRelease) {
    drawAfterRelease = false;
    setTimeout(render);
  }
}

document.addEventListener("pointerdown", () => { pressed = true; }, true);
for (const end of ["pointerup", "pointercancel"]) document.addEventListener(end, pressEnded, true);
window.addEventListener("blur", pressEnded); // a release outside the page may never be told

function render() {
  if (pressed) {
    drawAfterRelease = true;
    return;
  }
  const focused = focusedControl();
  renderPage();
  focusAgain(focused);
}

/** The focused control and how to find its like again after a render: render rebuilds lists,
 *  invitations and proposals whole, and a keyboard's focus would fall back to the page's start. */
function focusedControl() {
  const control = document.activeElement;
  if (!control || control === document.body) return null;
  const key = { id: control.id, place: control.parentElement?.closest("[id]")?.id, tag: control.tagName, text: control.textContent, row: rowOf(control) };
  return { control, key, index: lookAlikes(key).indexOf(control), keyboard: control.matches(":focus-visible") };
}

/** The data of a control's list row (a player's nick, a table's number), as text. */
function rowOf(control) {
  return JSON.stringify({ ...control.closest("li")?.dataset });
}

/** The controls of one place with the same id, or the same tag, text and row. */
function lookAlikes({ id, place, tag, text, row }) {
  if (id) return [document.getElementById(id)].filter(Boolean);
  const within = place && document.getElementById(place);
  return [...(within?.querySelectorAll(tag) || [])].filter((other) => other.textContent === text && rowOf(other) === row);
}

/** The focus back on the control, or its like, after a render. One gone with what it answered (an
 *  invitation, a proposal, a resignation) leaves a keyboard's focus at the landing instead. */
function focusAgain(focused) {
  if (!focused || focused.control.isConnected && shown(focused.control)) return;
  const alike = shownAgain(focused);
  if (alike) alike.focus();
  else if (focused.keyboard) landing()?.focus();
}

/** The focus back on what opened a dialog that closed: on it, or its like if its list was drawn again,
 *  and at the landing when it went or is hidden (a mouse's opener too: the dialog took the focus with it,
 *  which would fall back to the page's start). */
function focusOpener(focused) {
  ((focused && shownAgain(focused)) || landing())?.focus();
}

/** The focused control, or its like if its list was drawn again, where it is shown; else null. */
function shownAgain(focused) {
  const candidates = [focused.control, lookAlikes(focused.key)[Math.max(0, focused.index)]];
  return candidates.find((control) => control?.isConnected && shown(control)) || null;
}

/** Whether the element is drawn: checkVisibility() where the browser has it (Safari since 17.4 only), its
 *  boxes elsewhere (none under a hidden ancestor). */
function shown(element) {
  return element.checkVisibility ? element.checkVisibility() : element.getClientRects().length > 0;
}

/** Where a keyboard's focus goes when its control is gone: a place that says where the player is and
 *  does nothing on Enter (a second Enter would place a dot on the board, or join a pool), from which
 *  Tab goes on: the game's turn line, the lobby's list of players, or the log-in form's nick. */
function landing() {
  if (!$("#game").hidden && !$("#app").hidden) return $("#turn");
  return $("#app").hidden ? $("#nick") : $("#players-heading");
}

function renderPage() {
  document.documentElement.lang = lang;
  for (const element of document.querySelectorAll("[data-text]")) {
    if (!element.dataset.asking) element.textContent = t(element.dataset.text); // "Sure?" stays its 4 s
  }
  for (const element of document.querySelectorAll("[data-label]")) element.title = element.ariaLabel = t(element.dataset.label);
  $("#login").hidden = Boolean(session);
  $("#app").hidden = !session;
  $("#logout").hidden = !session;
  $("#sound-switch").hidden = !session;
  $("#notify-switch").hidden = !session || !("Notification" in window);
  $("#me").textContent = session ? session.nick : "";
  document.title = pageTitle();
  renderModerationEntry();
  if (!session) return;
  renderInvitation();
  renderQuickGame({ state, session, t, act, element, button, describe });
  renderPlayers();
  renderIgnored();
  renderGuestPrivates();
  renderTables();
  renderGame();
  renderChat();
}

function element(tag, properties = {}, ...children) {
  const made = Object.assign(document.createElement(tag), properties);
  made.append(...children);
  return made;
}

function button(label, onClick, extra = {}) {
  return element("button", { type: "button", textContent: label, onclick: onClick, ...extra });
}

function describe(gameType) {
  return gameTypeText(gameType, t);
}

function renderInvitation() {
  const box = $("#invitation");
  const { incoming, outgoing, rejected } = state.invitation;
  box.replaceChildren();
  if (incoming) {
    const accepted = incoming.accepted.includes(session.nick);
    box.append(
      element("p", { textContent: invitationText(incoming) }),
      ...(incoming.teams ? [waitingLine(incoming)] : []),
      element("div", {},
        ...(accepted ? [] : [button(t("accept"), () => act({ co: "zaproszenieTak" }), { id: "accept-invitation" })]),
        button(t("reject"), () => act({ co: "zaproszenieNie" }), { id: "reject-invitation" })),
    );
  }
  if (outgoing) {
    const text = outgoing.teams
      ? t("teamInvitationTo", { teams: teamsText(outgoing.teams), game: describe(outgoing.gameType) })
      : t("invitationTo", { nick: outgoing.nick, game: describe(outgoing.gameType) });
    box.append(
      element("p", { textContent: text }),
      ...(outgoing.teams ? [waitingLine(outgoing)] : []),
      button(t("cancel"), () => act({ co: "zaproszenieAnuluj" }), { id: "cancel-invitation" }),
    );
  }
  if (rejected) {
    box.append(
      element("p", { textContent: t("rejectedBy", { nick: rejected }) }),
      button(t("ok"), () => act({ co: "zaproszenieOdrzuconeOk" })),
    );
  }
  box.hidden = !box.childElementCount;
}

function invitationText(incoming) {
  return incoming.teams
    ? t("teamInvitationFrom", { nick: incoming.nick, teams: teamsText(incoming.teams), game: describe(incoming.gameType) })
    : t("invitationFrom", { nick: incoming.nick, game: describe(incoming.gameType) });
}

/** A team invitation's two teams as one line: "*Ala, *Cid – *Bob, *Dan". */
function teamsText(teams) {
  return teams.map((team) => team.join(", ")).join(" – ");
}

/** Who of a team invitation's players has not accepted yet (the inviter needs not). */
function waitingLine(invitation) {
  const [mine, theirs] = invitation.teams;
  const waiting = [...mine.slice(1), ...theirs].filter((nick) => !invitation.accepted.includes(nick));
  return element("p", { className: "waiting", textContent: t("waitingFor", { nicks: waiting.join(", ") }) });
}

function renderPlayers() {
  const list = $("#players");
  list.replaceChildren(
    ...state.people.map((nick) => {
      const info = state.info.get(nick) || { free: true };
      const named = info.bot ? `${nick} [${t("botMark")}]` : nick;
      const label = info.rating ? `${named} (${info.rating})` : named;
      const row = element("li", { className: info.free ? "" : "busy" }, playerLink(nick, { className: "nick", textContent: label }));
      row.dataset.nick = nick;
      if (nick !== session.nick) {
        const computer = COMPUTER.has(nick);
        row.append(button(computer ? t("play") : t("invite"), () => invite(nick), { disabled: !info.free, className: "invite" }));
        if (!computer) {
          row.append(button(t("message"), () => openPrivate(nick), { className: "message" }));
          const ignoring = isIgnored(nick);
          row.append(button(ignoring ? t("unignore") : t("ignore"), () => setIgnored(nick, !ignoring), { className: "ignore" }));
          row.append(nameMenu(nick));
        }
      } else {
        row.append(element("span", { textContent: `(${t("you")})` }));
      }
      return row;
    }),
  );
}

/** The players this one ignores, each with a button to stop; hidden while there are none. */
function renderIgnored() {
  const list = $("#ignored");
  list.replaceChildren(
    ...state.ignored.map((nick) => {
      const row = element("li", {}, playerLink(nick, { className: "nick", textContent: nick }));
      row.dataset.nick = nick;
      row.append(button(t("unignore"), () => setIgnored(nick, false), { className: "unignore" }));
      return row;
    }),
  );
  list.hidden = $("#ignored-heading").hidden = $("#ignored-hint").hidden = !state.ignored.length;
}

function isIgnored(nick) {
  const key = nick.toLowerCase();
  return state.ignored.some((ignored) => ignored.toLowerCase() === key);
}

/** Ignore a player or stop: the server hides their lines from now on and answers with the whole list. */
function setIgnored(nick, ignore) {
  act({ co: "dodajWpis", table: ignore ? "ignore" : "unignore", newMsgs: encodeText(`_${nick}`) });
}

function askIgnored() {
  act({ co: "dodajWpis", table: "ignore", newMsgs: "" });
}

/** A registered player's "No private messages from guests", as the server last said it. */
function renderGuestPrivates() {
  $("#guest-privates-switch").hidden = !session.registered || state.refusesGuestPrivates === null;
  $("#guest-privates").checked = Boolean(state.refusesGuestPrivates);
}

/** The setting is the account's: a guest has none to ask for (the server would refuse to change it). */
function askGuestPrivates() {
  if (session?.registered) act({ co: "dodajWpis", table: "guestprivates", newMsgs: "" });
}

/** Who is at each table, from everyone's `b` line. */
function peopleAtTables() {
  const count = new Map();
  for (const uids of state.at.values()) for (const uid of uids) count.set(uid, (count.get(uid) || 0) + 1);
  return count;
}

function renderTables() {
  const list = $("#tables");
  const here = peopleAtTables();
  // a finished game nobody is at any more leaves the list (it stays reachable with "Show finished")
  const over = (uid, status) => Boolean(status?.result) && !here.get(uid) && !state.subscriptions.includes(uid);
  const finished = [...state.tables.entries()].filter(([uid, { status }]) => over(uid, status)).length;
  const finishedButton = $("#show-finished");
  finishedButton.hidden = !finished;
  finishedButton.textContent = state.showFinished ? t("hideFinished") : t("showFinished", { count: finished });
  list.replaceChildren(
    ...[...state.tables.entries()].filter(([uid, { status }]) => state.showFinished || !over(uid, status)).map(([uid, { desc, status }]) => {
      const players = desc ? [" ", ...teamLinks(desc.blueTeam), " – ", ...teamLinks(desc.redTeam)] : [];
      const result = status?.result && desc ? ` · ${resultText(status.result, desc.blue, desc.red, t)}` : "";
      const people = here.get(uid) ? ` · ${t("peopleHere", { count: here.get(uid) })}` : "";
      const what = `${desc ? ` · ${describe(desc.gameType)}` : ""}${result}${people}`;
      const row = element("li", {}, element("span", { className: "what" }, `#${uid}`, ...players, what));
      row.dataset.table = uid;
      if (!state.subscriptions.includes(uid)) {
        row.append(button(t("watch"), () => act({ co: "zmienStol", newTable: uid }), { className: "watch" }));
      }
      return row;
    }),
  );
}

/** A nick as a link to its player page, in a new tab so that a game in progress stays open. */
function playerLink(nick, properties = { textContent: nick }) {
  return element("a", { href: `player/${encodeURIComponent(nick)}`, target: "_blank", rel: "noopener", ...properties });
}

/** A side's player, or a team's players each as a link; the one on move (a nick) marked, and a bot as
 *  the lobby marks it (the `R` of its `i` line). */
function teamLinks(team, onMove = null) {
  return team.flatMap((nick, index) => {
    const named = state.info.get(nick)?.bot ? `${nick} [${t("botMark")}]` : nick;
    const link = playerLink(nick, { textContent: named, className: nick === onMove ? "turn" : "" });
    return index ? [", ", link] : [link];
  });
}

function renderGame() {
  const table = currentGame();
  $("#game").hidden = !table?.desc;
  if (!table?.desc) {
    if ($("#app").classList.contains("full-screen")) setFullScreen(false);
    return;
  }
  const { desc, status } = table;
  const side = mySide(table);
  const view = position(table.setup, table.moves);
  const onMove = playing(table) && desc.kind !== "a" ? desc.players[status.toMove - 1] : null;
  $("#blue-name").replaceChildren(...teamLinks(desc.blueTeam, desc.teams ? onMove : null));
  $("#red-name").replaceChildren(...teamLinks(desc.redTeam, desc.teams ? onMove : null));
  $("#blue-score").textContent = view.score[1];
  $("#red-score").textContent = view.score[2];
  for (const [which, number] of [["blue", 1], ["red", 2]]) {
    $(`.player.${which}`).classList.toggle("on-move", playing(table) && colourOfSide(status.toMove) === number);
  }
  const analysis = desc.kind === "a";
  let turn = "";
  if (status?.result) turn = t("gameOver", { result: resultText(status.result, desc.blue, desc.red, t) });
  else if (analysis) turn = t("analysisBy", { nick: desc.analyser });
  else if (status && side === status.toMove) turn = t("yourMove");
  else if (status) turn = t("theirMove", { nick: desc.players[status.toMove - 1] });
  if (analysing(table) && playing(table)) turn = t("nextDotIs", { colour: t(side === 1 ? "blue" : "red") });
  $("#turn").textContent = side ? turn : `${t("watching")} · ${turn}`;
  renderEvent(table);
  renderClocks();
  renderBoard(table, view, side);
  const box = $("#board").viewBox.baseVal;
  $("#board").style.aspectRatio = `${box.width} / ${box.height}`;
  $("#board").ariaLabel = t("board", { width: desc.width, height: desc.height });
  renderAim(table);
  const cursor = renderCursor(table, view);
  const marked = state.aim || cursor;
  boardZoom.show(marked && marked.map(at));
  const watching = table.people.filter((nick) => !desc.players.includes(nick) && nick !== desc.analyser);
  $("#watchers").hidden = !watching.length;
  $("#watchers").textContent = t("watchers", { nicks: watching.join(", ") });
  $("#full-screen").textContent = t($("#app").classList.contains("full-screen") ? "leaveFullScreen" : "fullScreen");
  renderProposal(table, side);
  renderAbsence($("#absence"), {
    lines: state.chats.get(`t${table.uid}`)?.lines || [], side: desc.teams ? 0 : side, nicks: desc.players,
    playing: playing(table) && desc.kind !== "a", t, element, button, claim: (what) => propose(table, what),
  });
  const live = playing(table);
  const contest = !analysis; // an analysis has no score to agree, nobody to resign to, no next game
  const shown = {
    undo: side && live && table.moves.length > 0,
    score: side && live && contest,
    terr: side && live && contest && desc.rules === "t",
    drop: side && live && contest,
    resign: side && live && contest,
    new: side && !live && contest,
  };
  for (const action of document.querySelectorAll("[data-propose]")) {
    action.hidden = !shown[action.dataset.propose];
  }
  $("#stop").hidden = !(side && live && contest && desc.rules === "n" && status.toMove === side);
  renderClockActions(table, side && live && contest ? colourOfSide(side) : 0);
  $("#analysis-colour").hidden = !(analysing(table) && live);
  $("#clear-ring").hidden = !(state.drawing.path.length || state.drawing.targets.length);
  $("#ring-hint").hidden = !(side && live && desc.rules === "t");
  const sgf = $("#sgf");
  sgf.hidden = !status?.archive;
  if (status?.archive) {
    sgf.href = `sgf/${status.archive}`;
    sgf.download = `kropki-${status.archive}.sgf`;
  }
  $("#analyse").hidden = !status?.archive;
}

/** Open an analysis table of one's own: of the game shown when it is archived, else of the "New game" board. */
function openAnalysis(archived) {
  const [width, height] = $("#size").value.split("x").map(Number);
  const board = archived
    ? { width: archived.desc.width, height: archived.desc.height, rules: archived.desc.rules, archive: archived.status.archive }
    : { width, height, rules: $("#rules").value, crosses: Number($("#crosses").value) };
  act({ co: "zapraszam", whom: session.nick, gameType: analysisGameType({ ...board, analyser: session.nick }) });
}

/** The game page's "Continue on an analysis table" (`?analyse=<number>`), done once logged in. */
async function analyseAsked() {
  const number = sessionStorage.getItem("kropki.analyse");
  if (!number) return;
  sessionStorage.removeItem("kropki.analyse");
  try {
    const response = await fetch(`game/${number}.json`);
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const archived = await response.json();
    openAnalysis({ desc: describeGameType(archived.gameType), status: { archive: number } });
  } catch {
    notify(t("noSuchGame"));
  }
}

/** Drawn every half second: a text or title is written only when it changed, since each write of a
 *  text, even the same one, lays the page out again (21 times in 10 s of a game left alone, where the
 *  running clock shows 10 new seconds). */
function renderClocks() {
  const table = currentGame();
  for (const [which, index] of [["blue", 0], ["red", 1]]) {
    const clock = table?.clock?.clocks?.[index];
    const shown = $(`#${which}-clock`);
    if (!clock) {
      change(shown, "textContent", "");
      continue;
    }
    const running = playing(table) && !clock.paused && colourOfSide(table.clock.toMove) === index + 1;
    // the grace (sayHi, or after a restart) runs first: the clock stands still as the server's does
    const passed = running ? Math.floor((Date.now() - table.clock.at) / 1000) : 0;
    const left = Math.max(0, clock.seconds - Math.max(0, passed - table.clock.grace));
    const graceLeft = running ? Math.max(0, table.clock.grace - passed) : 0;
    change(shown, "textContent", `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`);
    change(shown, "title", clock.paused ? t("clockPaused") : graceLeft ? t("graceLeft", { seconds: graceLeft }) : "");
    shown.classList.toggle("in-grace", graceLeft > 0);
    shown.classList.toggle("paused", clock.paused);
    const side = mySide(table);
    if (running && side && index + 1 === colourOfSide(side) && !analysing(table)) warnLowTime(table, left);
  }
}

function change(element, property, value) {
  if (element[property] !== value) element[property] = value;
}

/** Beside the opponent's clock: 30 seconds for them, and a pause of their clock, where `colour` (0:
 *  neither) has those rights (lichess puts its "+15 seconds" there too). */
function renderClockActions(table, colour) {
  const clocks = colour ? table.clock?.clocks : null;
  for (const [which, index] of [["blue", 0], ["red", 1]]) {
    const actions = $(`#${which}-clock-actions`);
    const opponents = Boolean(clocks) && index !== colour - 1;
    const give = opponents && mayDo(table.desc, colour, "T");
    const pause = opponents && mayDo(table.desc, colour, "P");
    actions.hidden = !(give || pause);
    actions.querySelector(".give-time").hidden = !give;
    const button = actions.querySelector(".pause-clock");
    button.hidden = !pause;
    if (pause) {
      const paused = clocks[index].paused;
      button.textContent = paused ? "▶\uFE0E" : "⏸\uFE0E";
      button.title = button.ariaLabel = t(paused ? "resumeClock" : "pauseClock");
      button.dataset.paused = paused ? "1" : "";
    }
  }
}

function renderBoard(table, view, side) {
  const { width, height } = table.desc;
  const board = $("#board");
  const parts = drawPosition(board, width, height, view, table.moves.at(-1)?.point);
  const drawings = [];
  if (side && state.drawing.path.length) drawings.push(state.drawing.path);
  for (const [who, where] of Object.entries(table.drawing)) {
    if (where && Number(who) !== side) drawings.push(where.split(".").slice(1).join("").match(/../g) || []);
  }
  for (const path of drawings) {
    const points = path.map((p) => (typeof p === "string" ? pointFromSgf(p) : p));
    parts.push(svg("polyline", { class: "drawing", points: points.map(([x, y]) => `${at(x)},${at(y)}`).join(" ") }));
  }
  for (const [x, y] of state.drawing.targets) parts.push(svg("circle", { class: "target", cx: at(x), cy: at(y), r: 9 }));
  drawnLayer.replaceChildren(...parts);
  const hits = hitTargets(width, height);
  if (board.firstChild !== drawnLayer || board.lastChild !== hits) board.replaceChildren(drawnLayer, hits);
}

// What a render draws (the aim and the cursor too), replaced at every render, under the points' click
// targets (transparent), which stay in place: every reply draws the board again (several times a second
// with a busy lobby's news), and the targets need not be taken out and put back each time (a press on
// one lost its click so, until no redraw came under a press: `render`).
const drawnLayer = svg("g", { class: "drawn" });
let hitTargetsMade = { size: "", layer: null };

/** One click target per point, in a layer made once per board size: on a 39x32 board new targets would
 *  be 1,248 elements at each render, and an element a player (or a test) has just found would be gone a
 *  moment later. */
function hitTargets(width, height) {
  const size = `${width}x${height}`;
  if (hitTargetsMade.size === size) return hitTargetsMade.layer;
  const layer = svg("g", { class: "hits" });
  for (let x = 0; x < width; x++) {
    for (let y = 0; y < height; y++) {
      const hit = svg("rect", { class: "hit", x: at(x) - CELL / 2, y: at(y) - CELL / 2, width: CELL, height: CELL });
      hit.dataset.point = pointToSgf([x, y]);
      layer.append(hit);
    }
  }
  hitTargetsMade = { size, layer };
  return layer;
}

/** The aimed point of a two-step touch: a ring with lines along its row and column. */
function renderAim(table) {
  const aim = state.aim && canPlace(state.aim) ? state.aim : null;
  state.aim = aim;
  $("#aim").hidden = !aim;
  if (!aim) return;
  const [x, y] = aim;
  const { width, height } = table.desc;
  $("#aim-at").textContent = t("aimAt", { x: x + 1, y: y + 1 });
  drawnLayer.append(
    svg("line", { class: "aim-line", x1: at(0), y1: at(y), x2: at(width - 1), y2: at(y) }),
    svg("line", { class: "aim-line", x1: at(x), y1: at(0), x2: at(x), y2: at(height - 1) }),
    Object.assign(svg("circle", { class: "aim", cx: at(x), cy: at(y), r: 8 }), { id: "aim-marker" }),
  );
}

/** The keyboard's cursor, while the board has the keyboard's focus: a square on its point, and its
 *  coordinates and what is there said when either changes. The cursor's point, or null. */
function renderCursor(table, view) {
  if (!keyboardOnBoard()) return null;
  state.cursor = onBoard(table.desc, state.cursor || cursorStart(table));
  const [x, y] = state.cursor;
  drawnLayer.append(svg("rect", { class: "cursor", x: at(x) - CELL / 2, y: at(y) - CELL / 2, width: CELL, height: CELL }));
  const key = pointToSgf(state.cursor);
  const colour = view.dots.get(key);
  const name = !colour ? "cursorEmpty" : `${colour === 1 ? "cursorBlue" : "cursorRed"}${view.captured.has(key) ? "Captured" : ""}`;
  const text = t(name, { x: x + 1, y: y + 1 });
  if (text !== cursorSaid) announce(text);
  cursorSaid = text;
  return state.cursor;
}

/** A tournament game says so to everyone at it: the tournament, its round, a link to the standings. */
function renderEvent(table) {
  const label = $("#event-label");
  const name = table.desc.tournament;
  label.hidden = !name;
  if (!name) return;
  if (table.round === undefined) {
    table.round = null;
    findRound(table, name);
  }
  const text = table.round ? t("eventRound", { event: name, round: table.round }) : name;
  const standings = element("a", { href: `tournament/${encodeURIComponent(name)}/standings`, target: "_blank", textContent: t("standings") });
  label.replaceChildren(element("span", { textContent: `${text} · ` }), standings);
}

/** The round is not on the wire; the organisers' results (`/tournament/<name>`) list it per table, once
 *  the server has stored the new table (a moment after it appears): asked a few times. */
async function findRound(table, name) {
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      const response = await fetch(`tournament/${encodeURIComponent(name)}`, { headers: { Accept: "application/json" } });
      const row = response.ok && (await response.json()).tables?.find(
        (listed) => listed.table === table.uid && listed.blue === table.desc.blue && listed.red === table.desc.red);
      if (row) {
        table.round = row.round;
        render();
        return;
      }
    } catch {
      // the label keeps the tournament's name alone
    }
    await sleep(RETRY_MS);
  }
}

function setFullScreen(on) {
  $("#app").classList.toggle("full-screen", on);
  // the browser's own full screen where it has one; the class alone gives the game the whole window
  if (on && document.fullscreenEnabled && !document.fullscreenElement) $("#app").requestFullscreen().catch(() => {});
  if (!on && document.fullscreenElement) document.exitFullscreen().catch(() => {});
}

// --- telling a player who is elsewhere ---------------------------------------------------------

/** Whether this player is to move in a game (an analysis is nobody's turn). */
function myTurn(table) {
  const side = mySide(table);
  return Boolean(side) && playing(table) && table.status.toMove === side && !analysing(table);
}

/** What the sounds and notifications compare before and after a reply. */
function heard() {
  const table = currentGame();
  const invitation = state.invitation.incoming?.nick ?? null;
  const rejected = state.invitation.rejected;
  if (!table?.desc) return { uid: null, invitation, rejected };
  const side = mySide(table);
  const { score } = position(table.setup, table.moves);
  return {
    uid: table.uid,
    moves: table.moves.length,
    captured: score[1] + score[2],
    over: Boolean(table.status?.result),
    myTurn: myTurn(table),
    player: Boolean(side) && table.desc.kind !== "a",
    invitation,
    rejected,
  };
}

function react(before, after) {
  const table = currentGame();
  if (after.invitation && after.invitation !== before.invitation) {
    const { nick, gameType } = state.invitation.incoming;
    notifyAway(t("title"), t("notifyInvitation", { nick, game: describe(gameType) }), "invitation");
    announce(invitationText(state.invitation.incoming));
  }
  if (after.rejected && after.rejected !== before.rejected) announce(t("rejectedBy", { nick: after.rejected }));
  if (!after.uid) return;
  const sameGame = after.uid === before.uid && !(before.over && !after.over);
  if (!sameGame) {
    if (after.player && !after.over && after.moves === 0) playSound("start");
  } else if (after.moves > before.moves) {
    playSound(after.captured > before.captured ? "capture" : "move");
    announceMoves(table, table.moves.slice(before.moves));
    if (after.captured > before.captured) {
      const { score } = position(table.setup, table.moves);
      announce(t("captureScore", { blue: score[1], red: score[2] }));
    }
  }
  if (after.myTurn && !(sameGame && before.myTurn)) {
    const opponent = colourOfSide(mySide(table)) === 1 ? table.desc.red : table.desc.blue;
    notifyAway(t("title"), t("notifyYourMove", { nick: opponent }), `move${after.uid}`);
  }
}

/** The other side's new dots, said with their player and point (this player's own are not news). */
function announceMoves(table, moves) {
  if (analysing(table)) return; // every dot of an analysis is the analyser's own
  const side = mySide(table);
  const mine = side ? colourOfSide(side) : 0; // a spectator hears both colours
  for (const { colour, point } of moves) {
    if (!point || colour === mine) continue;
    const nick = colour === 1 ? table.desc.blue : table.desc.red;
    announce(t("movedTo", { nick, x: point[0] + 1, y: point[1] + 1 }));
  }
}

function warnLowTime(table, left) {
  if (left > LOW_TIME_SECONDS) table.lowTimeWarned = false;
  else if (!table.lowTimeWarned) {
    table.lowTimeWarned = true;
    playSound("lowTime");
    announce(t("lowTime", { seconds: left }));
  }
}

function pageTitle() {
  const table = currentGame();
  if (session && table?.desc && myTurn(table)) return `● ${t("yourMove")} · ${t("title")}`;
  if (session && state.invitation.incoming) return `● ${t("invitedTitle")} · ${t("title")}`;
  return t("title");
}

function renderProposal(table, side) {
  const box = $("#proposal");
  box.replaceChildren();
  const proposal = table.proposal;
  if (!proposal || !playing(table) && proposal.what !== "new") {
    box.hidden = true;
    return;
  }
  const what = t(`prop${proposal.what[0].toUpperCase()}${proposal.what.slice(1)}`);
  const proposer = table.desc.players[proposal.by - 1];
  const code = `${proposal.by}${proposal.what}`;
  if (side && proposal.by === side) {
    box.append(element("span", { textContent: t("youPropose", { what }) }),
      button(t("cancel"), () => propose(table, `cancel${code}`), { id: "cancel-proposal" }));
  } else {
    box.append(element("span", { textContent: t("proposes", { nick: proposer, what }) }));
    if (proposal.agreed.length) {
      const agreed = proposal.agreed.map((agreeing) => table.desc.players[agreeing - 1]).join(", ");
      box.append(element("span", { className: "agreed", textContent: ` · ${t("agreedSoFar", { nicks: agreed })}` }));
    }
    if (side && !proposal.agreed.includes(side)) {
      const agree = proposal.what === "new" ? "new" : `ok${code}`;
      box.append(button(t("accept"), () => propose(table, agree), { id: "accept-proposal" }));
      if (proposal.what !== "new") box.append(button(t("reject"), () => propose(table, `reject${code}`), { id: "reject-proposal" }));
    }
  }
  box.hidden = false;
}

function renderChat() {
  if (!state.chats.has(state.activeChat)) state.activeChat = "0";
  const active = state.chats.get(state.activeChat);
  active.unread = false;
  $("#chat-tabs").replaceChildren(
    ...[...state.chats.entries()].map(([key, chat]) => {
      const tab = button(chat.title(), () => { state.activeChat = key; render(); }, { className: chat.unread ? "unread" : "" });
      tab.setAttribute("aria-pressed", String(key === state.activeChat));
      tab.dataset.chat = key;
      return tab;
    }),
  );
  const list = $("#chat-lines");
  const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 30;
  const game = state.activeChat.startsWith("t") ? state.games.get(Number(state.activeChat.slice(1))) : null;
  list.replaceChildren(
    // the server leaves out what ignored players say from now on; what came before goes from view too
    ...active.lines.filter((line) => !line.author || !isIgnored(line.author)).map((line) => {
      const time = new Date(line.time * 1000).toLocaleTimeString(lang, { hour: "2-digit", minute: "2-digit" });
      const item = element("li", {});
      if (!line.author) {
        item.className = line.type === "e" ? "server error" : "server";
        item.textContent = `${time} ${line.type === "e" ? line.text : serverLineText(line, t)}`;
      } else {
        const team = (colour) => (colour === 1 ? game.desc.blueTeam : game.desc.redTeam).includes(line.author);
        const colour = game?.desc ? (team(1) ? 1 : team(2) ? 2 : 0) : 0;
        item.append(`${time} `, element("b", { className: colour ? `nick-${colour}` : "", textContent: line.author }), `: ${line.text}`);
        if (line.author !== session.nick && !COMPUTER.has(line.author)) item.append(" ", lineMenu(line, state.activeChat));
      }
      return item;
    }),
  );
  if (atBottom) list.scrollTop = list.scrollHeight;
}

// --- actions ----------------------------------------------------------------------------------

/** The game set in "New game"; against the computer it is of kind A and standard rules. */
function inviteGameType(computer) {
  const [width, height] = $("#size").value.split("x").map(Number);
  return buildGameType({
    width,
    height,
    rules: computer ? "s" : $("#rules").value,
    crosses: Number($("#crosses").value),
    who: $("#who").value,
    kind: computer ? "A" : $("#kind").value,
    startMinutes: Math.max(0, Math.floor(Number($("#minutes").value) || 0)),
    addedSeconds: Math.max(0, Math.floor(Number($("#added").value) || 0)),
  });
}

function invite(nick) {
  act({ co: "zapraszam", whom: nick, gameType: inviteGameType(COMPUTER.has(nick)) });
}

/** A team game (docs/teams.md): the form's team-mates and opponents, named in turn order after this
 *  player, an opponent first: *Bob, *Cid, *Dan for team-mate *Cid against *Bob and *Dan. */
function inviteTeams() {
  const nicks = (id) => $(id).value.split(",").map((nick) => nick.trim()).filter(Boolean);
  const [mates, opponents] = [nicks("#team-mates"), nicks("#opponents")];
  if (!mates.length || opponents.length !== mates.length + 1) {
    notify(t("teamSizes"));
    return;
  }
  const whom = opponents.flatMap((nick, index) => (index < mates.length ? [nick, mates[index]] : [nick]));
  act({ co: "zapraszam", whom: whom.join(","), gameType: inviteGameType(false) });
}

// What ends or abandons a game asks once: the first click turns the button into a question for a few
// seconds, and only a second click within them does it (a click slipping onto it does nothing).
const CONFIRMED = new Set(["resign", "drop", "score", "terr"]);
const CONFIRM_SECONDS = 4;

function askedOnce(action) {
  if (action.dataset.asking) {
    withdrawAsking(action);
    return true;
  }
  action.textContent = t("confirmAgain"); // its name too, as a screen reader says it
  action.classList.add("asking");
  action.dataset.asking = String(setTimeout(() => endAsking(action), CONFIRM_SECONDS * 1000));
  return false;
}

/** The question over before its time: answered, or taken back by Escape. */
function withdrawAsking(action) {
  clearTimeout(Number(action.dataset.asking));
  endAsking(action);
}

function endAsking(action) {
  action.textContent = t(action.dataset.text);
  action.classList.remove("asking");
  delete action.dataset.asking;
}

function propose(table, proposal) {
  act({ co: "propose", table: table.uid, proposal });
}

function openPrivate(nick) {
  const key = `p${nick}`;
  if (!state.chats.has(key)) {
    state.chats.set(key, { title: () => t("privateWith", { nick }), lines: [], keys: new Set(), unread: false });
  }
  state.activeChat = key;
  render();
  $("#chat-text").focus();
}

async function sendChat(event) {
  event.preventDefault();
  const input = $("#chat-text");
  const text = input.value.trim();
  if (!text) return;
  const key = state.activeChat;
  const table = key === "0" ? "0" : key.startsWith("t") ? key.slice(1) : `_${key.slice(1)}`;
  const answer = await act({ co: "dodajWpis", table, newMsgs: encodeText(text) });
  if (answer === "") input.value = "";
}

function notify(text) {
  // an open modal dialog (moderation.js) leaves the page under it inert, its notice bar unseen and unheard
  const notice = document.querySelector("dialog[open] .notice") || $("#notice");
  if (notice.hidden || notice.textContent !== text) announce(text); // "Connection lost" once, not each second
  notice.textContent = text;
  notice.hidden = false;
}

/** Said by a screen reader when it can (the live region is polite): a new line each time, so that the
 *  same words twice are said twice, and only the last few kept. */
function announce(text) {
  const region = $("#announcer");
  region.append(element("p", { textContent: text }));
  while (region.childElementCount > ANNOUNCED_KEPT) region.firstElementChild.remove();
}

/** Hides "Connection lost" once the server answers again, wherever notify() wrote it: the notice bar, or
 *  the line of a dialog open then (and maybe still). */
function clearNotice() {
  for (const notice of document.querySelectorAll("#notice, dialog .notice")) {
    if (notice.textContent === t("reconnecting")) notice.hidden = true;
  }
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function setLanguage(code) {
  lang = code;
  t = translator(lang);
  localStorage.setItem("kropki.lang", lang);
  if (session) act({ co: "changeLang", na: lang });
  render();
  renderTournaments(t);
}

function start() {
  const languages = $("#language");
  languages.replaceChildren(...LANGUAGES.map((code) => element("option", { value: code, textContent: code.toUpperCase() })));
  languages.onchange = () => setLanguage(languages.value);
  $("#login").onsubmit = (event) => {
    event.preventDefault();
    logIn({ nick: $("#nick").value.trim(), password: $("#password").value });
  };
  $("#register").onclick = () => {
    if ($("#login").reportValidity()) logIn({ nick: $("#nick").value.trim(), password: $("#password").value, register: true });
  };
  $("#logout").onclick = logOut;
  $("#notice").onclick = () => { $("#notice").hidden = true; };
  // a keyboard's click on the bar, which is no control to reach, and on the aim's "Cancel": Escape,
  // unless an open dialog takes it
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Escape" || document.querySelector("dialog[open]")) return;
    $("#notice").hidden = true;
    if (state.aim) cancelAim();
  });
  $("#chat-form").onsubmit = sendChat;
  $("#board").onclick = (event) => {
    const point = event.target.dataset?.point;
    if (point) choosePoint(pointFromSgf(point), event.pointerType === "touch");
  };
  $("#board").onkeydown = boardKey;
  // a click focuses the board too: only a keyboard's focus shows the cursor, so only it draws the board
  $("#board").onfocus = () => { if (keyboardOnBoard()) render(); };
  $("#board").onblur = () => {
    cursorSaid = ""; // back on the board, the cursor is said again
    if ($("#board .cursor")) render();
  };
  $("#aim-place").onclick = placeAim;
  $("#aim-cancel").onclick = cancelAim;
  for (const nudge of document.querySelectorAll("[data-nudge]")) {
    nudge.onclick = () => nudgeAim(...nudge.dataset.nudge.split(",").map(Number));
  }
  $("#full-screen").onclick = () => {
    setFullScreen(!$("#app").classList.contains("full-screen"));
    render();
  };
  document.onfullscreenchange = () => {
    if (document.fullscreenElement) return;
    setFullScreen(false);
    render();
  };
  $("#show-finished").onclick = () => { state.showFinished = !state.showFinished; render(); };
  $("#guest-privates").onchange = async () => {
    await act({ co: "dodajWpis", table: "guestprivates", newMsgs: $("#guest-privates").checked ? "off" : "on" });
    render(); // as the server has it: a refused change (too fast, storage) does not stay ticked
  };
  $("#sound").checked = localStorage.getItem("kropki.sound") !== "off";
  $("#sound").onchange = () => localStorage.setItem("kropki.sound", $("#sound").checked ? "on" : "off");
  $("#notify").checked = localStorage.getItem("kropki.notify") === "on" && window.Notification?.permission === "granted";
  $("#notify").onchange = async () => {
    const on = await allowNotifications($("#notify").checked);
    if ($("#notify").checked && !on) notify(t("notificationsBlocked"));
    $("#notify").checked = on;
  };
  // a browser lets a page make sounds only after the player touched it: the first touch wakes the sound
  document.addEventListener("pointerdown", wakeSound, { once: true });
  for (const action of document.querySelectorAll("[data-propose]")) {
    action.onclick = () => {
      if (CONFIRMED.has(action.dataset.propose) && !askedOnce(action)) return;
      propose(currentGame(), action.dataset.propose);
    };
    action.onkeydown = (event) => {
      if (event.key === "Escape" && action.dataset.asking) withdrawAsking(action);
    };
  }
  $("#stop").onclick = () => act({ co: "stopMove", stol: currentGame().uid });
  for (const button of document.querySelectorAll(".give-time")) {
    button.onclick = () => act({ co: "dodajeCzas", stol: currentGame().uid, ile: GIFT_SECONDS });
  }
  for (const button of document.querySelectorAll(".pause-clock")) {
    button.onclick = () => act({ co: "pauseClock", table: currentGame().uid, what: button.dataset.paused ? "u" : "p" });
  }
  $("#clear-ring").onclick = () => { clearDrawing(true); render(); };
  $("#leave").onclick = () => act({ co: "zmienStol", newTable: 0 });
  $("#open-analysis").onclick = () => openAnalysis(null);
  $("#invite-team").onclick = inviteTeams;
  $("#post-seek").onclick = () => postSeek(act, inviteGameType(false));
  $("#analyse").onclick = () => openAnalysis(currentGame());
  $("#next-colour").onchange = render;
  setInterval(renderClocks, 500);
  setUpModeration({
    act,
    request,
    notify,
    t: (language) => (language ? translator(language) : t),
    refusal: (answer) => refusalText(answer, t),
    me: () => session,
    info: (nick) => state.info.get(nick),
    focused: focusedControl,
    refocus: focusOpener,
  });

  // zagram's auto-login links: index.html?id=ID&opis=NICK[&lang=LL]; the id leaves the address bar at once
  const link = new URLSearchParams(location.search);
  if (link.get("lang") && LANGUAGES.includes(link.get("lang"))) lang = link.get("lang");
  t = translator(lang);
  languages.value = lang; // the link's language shown as the page's
  if (/^\d{1,12}$/.test(link.get("analyse") || "")) {
    sessionStorage.setItem("kropki.analyse", link.get("analyse"));
    history.replaceState(null, "", location.pathname);
  }
  if (link.get("id") && link.get("opis")) {
    history.replaceState(null, "", location.pathname);
    askToTakeOver({ nick: link.get("opis"), id: link.get("id") });
  } else {
    const saved = sessionStorage.getItem("kropki.session");
    if (saved) {
      session = JSON.parse(saved);
      sendLogin(session).then((failure) => (failure ? logOut().then(() => notify(failure)) : startPolling()));
    }
  }
  render();
}

start();
