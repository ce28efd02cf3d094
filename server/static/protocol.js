// The zagram wire format as the browser needs it: ids, text escaping, reply parsing, SGF records and
// the geometry of realms. Pure functions, no DOM, so the browser tests can call them directly.

export const ID_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.";
export const SGF_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
const ID_SALT = "9WB2qGYzzWry1vbVjoSK";

// SHA-1 by hand: WebCrypto exists only in secure contexts, and a server on a LAN is often plain http.
function sha1(bytes) {
  const words = [];
  const length = bytes.length;
  const padded = new Uint8Array(((length + 9 + 63) >> 6) << 6);
  padded.set(bytes);
  padded[length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 4, length * 8);
  view.setUint32(padded.length - 8, Math.floor(length / 0x20000000));
  let [h0, h1, h2, h3, h4] = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0];
  const rotl = (x, n) => (x << n) | (x >>> (32 - n));
  for (let block = 0; block < padded.length; block += 64) {
    for (let i = 0; i < 16; i++) words[i] = view.getUint32(block + 4 * i);
    for (let i = 16; i < 80; i++) words[i] = rotl(words[i - 3] ^ words[i - 8] ^ words[i - 14] ^ words[i - 16], 1);
    let [a, b, c, d, e] = [h0, h1, h2, h3, h4];
    for (let i = 0; i < 80; i++) {
      let f, k;
      if (i < 20) [f, k] = [(b & c) | (~b & d), 0x5a827999];
      else if (i < 40) [f, k] = [b ^ c ^ d, 0x6ed9eba1];
      else if (i < 60) [f, k] = [(b & c) | (b & d) | (c & d), 0x8f1bbcdc];
      else [f, k] = [b ^ c ^ d, 0xca62c1d6];
      const t = (rotl(a, 5) + f + e + k + words[i]) | 0;
      [e, d, c, b, a] = [d, c, rotl(b, 30), a, t];
    }
    [h0, h1, h2, h3, h4] = [(h0 + a) | 0, (h1 + b) | 0, (h2 + c) | 0, (h3 + d) | 0, (h4 + e) | 0];
  }
  const digest = new Uint8Array(20);
  const out = new DataView(digest.buffer);
  [h0, h1, h2, h3, h4].forEach((h, i) => out.setUint32(4 * i, h >>> 0));
  return digest;
}

function base64(bytes) {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** A registered player's id, zagram's recipe (spec 2.1): it is the password the server checks. */
export function registeredId(nick, password) {
  const digest = sha1(new TextEncoder().encode(nick + ID_SALT + password));
  return base64(digest).replaceAll("+", "_").replaceAll("/", ".").slice(0, 10);
}

/** A guest's id: 9 random characters of the id alphabet. */
export function guestId() {
  const random = crypto.getRandomValues(new Uint8Array(9));
  return Array.from(random, (n) => ID_ALPHABET[n % 64]).join("");
}

/** Free text to the server: `@` to `@A`, then `/` to `@S` (URL-encoding comes on top). */
export function encodeText(text) {
  return text.replaceAll("@", "@A").replaceAll("/", "@S");
}

const ENTITIES = { "&#60;": "<", "&#62;": ">", "&#39;": "'", "&#34;": '"', "&#45;": "-" };

/** Free text from the server: `@S`, `@A`, then the five entities, as zagram's clients read it. */
export function decodeText(text) {
  return text
    .replaceAll("@S", "/")
    .replaceAll("@A", "@")
    .replace(/&#(60|62|39|34|45);/g, (entity) => ENTITIES[entity]);
}

/** `ok/m<i>.<j>.<k>/q0/.../end` as {status, last, sections: [[table, [lines]]]}; null if malformed. */
export function parseReply(body) {
  const parts = body.trim().split("/");
  if (!["ok", "sd"].includes(parts[0]) || parts.at(-1) !== "end" || !/^m\d+\.\d+\.\d+$/.test(parts[1] || "")) {
    return null;
  }
  const [, last] = parts[1].slice(1).split(".").map(Number);
  const sections = [];
  for (const part of parts.slice(2, -1)) {
    if (/^q\d+$/.test(part)) sections.push([Number(part.slice(1)), []]);
    else if (sections.length) sections.at(-1)[1].push(part);
  }
  return { status: parts[0], last, sections };
}

/** `<time>_<n>.<nick>.<nickType>.<text>`: the text is the last field and may hold dots. */
export function parseChatLine(line) {
  const first = line.indexOf(".");
  const second = line.indexOf(".", first + 1);
  const third = line.indexOf(".", second + 1);
  if (first < 0 || second < 0) return null;
  const end = third < 0 ? line.length : third;
  return {
    key: line.slice(0, first),
    time: Number(line.slice(0, first).split("_")[0]),
    nick: line.slice(first + 1, second),
    type: line.slice(second + 1, end),
    text: third < 0 ? "" : decodeText(line.slice(third + 1)),
  };
}

/** `d<uid>.<gameType>.<blue>.<red>`: nicks hold no dots, a tournament name in the game type may. At a
 *  team table blue and red are the teams, each its nicks in its own order joined by `,` (docs/teams.md):
 *  `blue` and `red` are then the teams' names ("*Ala, *Cid"), `players` every nick in turn order (side n
 *  is players[n - 1]; a game of two has two). */
export function parseTableLine(body) {
  const fields = body.split(".");
  if (fields.length < 12) return null;
  const redTeam = fields.pop().split(",");
  const blueTeam = fields.pop().split(",");
  const uid = Number(fields.shift());
  const players = blueTeam.flatMap((nick, index) => [nick, redTeam[index]]);
  return {
    uid, gameType: fields.join("."), blue: blueTeam.join(", "), red: redTeam.join(", "), blueTeam, redTeam, players,
    teams: players.length > 2, ...describeGameType(fields.join(".")),
  };
}

/** The colour a side plays: odd sides blue (1), even sides red (2); a game of two's sides are its colours. */
export function colourOfSide(side) {
  return side % 2 ? 1 : 2;
}

/** `u<side><what>[.<sides that agreed>]` (a bare `u`: none) as {by, what, agreed}. */
export function parseProposalLine(body) {
  const found = /^(\d)([a-z]+)(?:\.([\d,]*))?$/.exec(body);
  if (!found) return null;
  return { by: Number(found[1]), what: found[2], agreed: found[3] ? found[3].split(",").map(Number) : [] };
}

/** `vg`/`vs` after the two letters: `<nick>.<gameType>`, a team invitation's with `.<the inviter's
 *  team>.<the other team>.<who accepted>` after the game type's nine fields (docs/protocol.md). */
export function parseInvitationLine(body) {
  const [nick, ...fields] = body.split(".");
  const gameType = fields.slice(0, 9).join(".");
  if (fields.length < 11) return { nick, gameType, teams: null, accepted: [] };
  const [mine, theirs, accepted] = fields.slice(9);
  return { nick, gameType, teams: [mine.split(","), theirs.split(",")], accepted: accepted ? accepted.split(",") : [] };
}

/** The parts of a new-format game type the client shows and plays by. */
export function describeGameType(text) {
  const fields = text.split(".");
  const head = fields[0] || "";
  return {
    width: Number(head.slice(0, 2)),
    height: Number(head.slice(2, 4)),
    rules: head[4], // s standard, t territory, n no territory
    instantWin: Number(head.slice(5) || 0),
    start: fields[1] || "",
    kind: fields[3] || "F",
    timed: fields[4] === "a",
    startTime: Number(fields[5] || 0),
    addedTime: Number(fields[6] || 0),
    tournament: decodeText(fields.slice(8).join(".")), // escaped as free text is (docs/protocol.md)
    analyser: /^c___[SUsue]*n(.+)$/.exec(fields[7] || "")?.[1] || "", // analysis tables (kind a) only
    rights: playerRights(fields[7] || ""),
  };
}

/** Each colour's rights letters (`SRAUTP`, blue upper case, red lower) from the opt field, as the server
 *  reads it (docs/gametype.md): empty, or without `_`, means every right for both. */
function playerRights(opt) {
  if (!opt.includes("_")) return { 1: "SRAUTP", 2: "SRAUTP" };
  const [, blue = "", red = ""] = opt.split("_");
  return { 1: blue.toUpperCase(), 2: red.toUpperCase() };
}

/** Whether `colour` (1 blue, 2 red) has `right` (an upper-case letter of `SRAUTP`) at a table of `desc`. */
export function mayDo(desc, colour, right) {
  return Boolean(desc.rights?.[colour]?.includes(right));
}

/** The new-format game type of an invitation. */
export function buildGameType({ width, height, rules, crosses, who, kind, startMinutes, addedSeconds }) {
  const time = startMinutes > 0 ? ["a", String(startMinutes * 60), String(addedSeconds)] : ["n", "", ""];
  return [...boardFields(width, height, rules, crosses), who, kind, ...time, "", ""].join(".");
}

/** An analysis table's game type: the analyser places dots of both colours, from an archived game or not. */
export function analysisGameType({ width, height, rules, crosses = 0, archive = null, analyser }) {
  const [board, crossesField] = boardFields(width, height, rules, crosses);
  const start = archive ? `SGFz${archive}` : crossesField;
  return [board, start, "a", "a", "n", "", "", `c___SUsuen${analyser}`, ""].join(".");
}

/** The first two fields of a new-format game type: size and rules, then the starting crosses. */
function boardFields(width, height, rules, crosses) {
  const size = String(width).padStart(2, "0") + String(height).padStart(2, "0");
  return [`${size}${rules}0`, crosses === 0 ? "" : String(crosses)];
}

/** `x<uid>.<side on move>.<result>.<archive number>`. */
export function parseStateLine(body) {
  const [uid, side, result, archive] = body.split(".");
  return { uid: Number(uid), toMove: Number(side), result: result === "-" ? null : result.replace(",", "."), archive: archive || null };
}

/** A game type in the reader's words (`t`, i18n.js's translator): size, rules, crosses, kind, time. */
export function gameTypeText(gameType, t) {
  const type = describeGameType(gameType);
  const rules = { s: t("rulesStan"), t: t("rulesTerr"), n: t("rulesNoT") }[type.rules] || type.rules;
  const kind = { R: t("kindRanked"), A: t("kindComputer"), a: t("kindAnalysis") }[type.kind] || t("kindFree");
  const crosses = ["1", "2", "4"].includes(type.start) ? ` +${type.start}` : "";
  const time = type.timed ? `, ${type.startTime / 60}′ + ${type.addedTime}″` : "";
  return `${type.width}×${type.height} ${rules}${crosses}, ${kind}${time}`;
}

/** A result (`B+R`, `W+3`, `0`, `Void`) in words, with the translator `t` of i18n.js. */
export function resultText(result, blue, red, t) {
  if (result === "0") return t("draw");
  if (result === "Void") return t("voided");
  const winner = result[0] === "B" ? blue : red;
  const how = result.slice(2);
  const key = { R: "winsByResignation", T: "winsOnTime", F: "winsByForfeit" }[how] || "winsByPoints";
  return t(key, { nick: winner, points: how.replace(",", ".") }); // a whole sentence in every language
}

/** `f<side>_<blue>.<red>[.g<grace>]`: whole seconds left, `p` before a paused clock, the grace the side
 *  on move has before its clock runs; nothing after `_` = no clock. */
export function parseClockLine(body) {
  const [side, rest] = body.split("_");
  if (!rest) return { toMove: Number(side), clocks: null, grace: 0 };
  const [blue, red, extra] = rest.split(".");
  const clocks = [blue, red].map((text) => ({ paused: text.startsWith("p"), seconds: Number(text.replace("p", "")) }));
  // `g<seconds>`: the side on move's grace (sayHi, or after a restart), spent before its clock runs
  const grace = extra?.startsWith("g") ? Number(extra.slice(1)) || 0 : 0;
  return { toMove: Number(side), clocks, grace };
}

export function pointFromSgf(text) {
  return [SGF_LETTERS.indexOf(text[0]), SGF_LETTERS.indexOf(text[1])];
}

export function pointToSgf([x, y]) {
  return SGF_LETTERS[x] + SGF_LETTERS[y];
}

function pointsOf(text) {
  const points = [];
  for (let i = 0; i + 1 < text.length; i += 2) points.push(pointFromSgf(text.slice(i, i + 2)));
  return points;
}

/** One SGF node `;B[cd.ring]BL[57]` or `;UB[cd]` as its properties: {B: ["cd.ring"], BL: ["57"]}. */
function parseNode(text) {
  const properties = {};
  const pattern = /([A-Za-z]+)((?:\[(?:\\.|[^\]\\])*\])+)/gs;
  for (const [, name, values] of text.matchAll(pattern)) {
    properties[name] = [...values.matchAll(/\[((?:\\.|[^\]\\])*)\]/gs)].map((m) => m[1].replace(/\\(.)/gs, "$1"));
  }
  return properties;
}

/** The nodes of `(;root;node;...)` or `;node;node` (an `sa` line), split outside brackets. */
export function sgfNodes(text) {
  const nodes = [];
  let depth = 0;
  let current = null;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === "\\" && depth) {
      if (current !== null) current += char + (text[i + 1] ?? "");
      i++;
      continue;
    }
    if (char === "[") depth++;
    if (char === "]") depth--;
    if (!depth && (char === ";" || char === "(" || char === ")")) {
      if (current !== null) nodes.push(parseNode(current));
      current = char === ";" ? "" : null;
      continue;
    }
    if (current !== null) current += char;
  }
  if (current !== null) nodes.push(parseNode(current));
  return nodes;
}

/** A move node as {colour: 1 blue | 2 red, point, rings, undo}; null for a node that is not a move. */
export function moveOfNode(node) {
  for (const [name, colour, undo] of [["B", 1, false], ["W", 2, false], ["UB", 1, true], ["UW", 2, true]]) {
    if (node[name]) {
      const [dot, ...rings] = node[name][0].split(".");
      return { colour, point: dot ? pointFromSgf(dot) : null, rings: rings.map(pointsOf), undo };
    }
  }
  return null;
}

/** Strictly inside a closed lattice ring (first point = last); points on the ring are not. */
export function inside([px, py], ring) {
  let crossings = 0;
  for (let i = 0; i + 1 < ring.length; i++) {
    const [x1, y1] = ring[i];
    const [x2, y2] = ring[i + 1];
    if (x1 === px && y1 === py) return false;
    if (y1 > py !== y2 > py && px < x1 + ((py - y1) * (x2 - x1)) / (y2 - y1)) crossings++;
  }
  return crossings % 2 === 1;
}

/**
 * The position after a list of moves: who owns each dot, the realms in order, and which dots are
 * captured. A dot belongs to the newest realm holding it; it is captured when that realm is the
 * enemy's (a bigger realm of its owner frees it again), which is also how the scores are counted.
 */
export function position(setup, moves) {
  const dots = new Map();
  const realms = [];
  for (const [point, colour] of setup) dots.set(pointToSgf(point), colour);
  for (const move of moves) {
    if (move.point) dots.set(pointToSgf(move.point), move.colour);
    for (const ring of move.rings) {
      const owner = dots.get(pointToSgf(ring[0])) ?? move.colour;
      realms.push({ owner, ring });
    }
  }
  const captured = new Set();
  const score = { 1: 0, 2: 0 };
  for (const [key, colour] of dots) {
    const point = pointFromSgf(key);
    for (let i = realms.length - 1; i >= 0; i--) {
      if (inside(point, realms[i].ring)) {
        if (realms[i].owner !== colour) {
          captured.add(key);
          score[realms[i].owner]++;
        }
        break;
      }
    }
  }
  return { dots, realms, captured, score };
}
