// The board as SVG: grid, coordinates, realms, dots (captured ones dimmed) and the last move's ring.
// Pure drawing, shared by the live client (client.js) and the game page (game.js); each adds its own
// layers (rings being drawn, click targets) to the parts it returns.

import { pointFromSgf } from "./protocol.js";

export const CELL = 20;
const MARGIN = 22;
const SVG = "http://www.w3.org/2000/svg";

export function svg(tag, attributes = {}) {
  const made = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) made.setAttribute(name, value);
  return made;
}

/** A board coordinate (0-based) in the SVG's units. */
export const at = (n) => MARGIN + n * CELL;

/** Sizes `board` (an <svg>) for width x height and returns its parts for `view` = protocol.js position(). */
export function drawPosition(board, width, height, view, last) {
  board.setAttribute("viewBox", `0 0 ${2 * MARGIN + (width - 1) * CELL} ${2 * MARGIN + (height - 1) * CELL}`);
  const parts = [];
  for (let x = 0; x < width; x++) {
    parts.push(svg("line", { class: "grid", x1: at(x), y1: at(0), x2: at(x), y2: at(height - 1) }));
    parts.push(Object.assign(svg("text", { class: "coordinate", x: at(x), y: MARGIN / 2 }), { textContent: x + 1 }));
  }
  for (let y = 0; y < height; y++) {
    parts.push(svg("line", { class: "grid", x1: at(0), y1: at(y), x2: at(width - 1), y2: at(y) }));
    parts.push(Object.assign(svg("text", { class: "coordinate", x: MARGIN / 2, y: at(y) }), { textContent: y + 1 }));
  }
  for (const { owner, ring } of view.realms) {
    parts.push(svg("polygon", { class: `realm realm-${owner}`, points: ring.map(([x, y]) => `${at(x)},${at(y)}`).join(" ") }));
  }
  for (const [key, colour] of view.dots) {
    const [x, y] = pointFromSgf(key);
    const dot = svg("circle", { cx: at(x), cy: at(y), r: 5, class: `dot dot-${colour}${view.captured.has(key) ? " captured" : ""}` });
    dot.dataset.dot = key;
    parts.push(dot);
  }
  if (last) parts.push(svg("circle", { class: "last", cx: at(last[0]), cy: at(last[1]), r: 8 }));
  return parts;
}
