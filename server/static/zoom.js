// The board's zoom and pan, for a large board on a small screen: two fingers pinch, one finger (or the
// mouse) drags the board once it is zoomed in, Ctrl + wheel (a touchpad's pinch) zooms under the pointer,
// and the buttons − + ⤢ zoom out, in (around the aimed point, else the middle) and show it all.
// It only narrows the <svg>'s viewBox: every point keeps its own click target, so a tap lands where it
// looks, and the two-tap aim of client.js works the same at any zoom.

import { CELL } from "./board.js";

const STEP = 1.5; // one press of + or −, one notch of the wheel
const FEWEST_POINTS_ACROSS = 7; // as far as zooming in goes
const DRAG_SLOP = 8; // pixels a pressed pointer moves before it drags (and its click is not a click)

export class BoardZoom {
  /** `board` an <svg> that board.js draws; `buttons` {zoomIn, zoomOut, fit}, any of them absent. */
  constructor(board, buttons) {
    this.board = board;
    this.buttons = buttons;
    this.full = null; // the whole board's box in SVG units, as drawPosition() set it
    this.scale = 1;
    this.centre = [0, 0];
    this.pointers = new Map(); // pointerId -> [clientX, clientY] of a finger down or a mouse button held
    this.gesture = null;
    this.moved = false; // the last press dragged or pinched: its click is swallowed
    this.aim = null;
    board.addEventListener("pointerdown", (event) => this.press(event));
    board.addEventListener("pointermove", (event) => this.move(event));
    for (const end of ["pointerup", "pointercancel"]) board.addEventListener(end, (event) => this.release(event));
    board.addEventListener("click", (event) => this.swallowClick(event), { capture: true });
    board.addEventListener("wheel", (event) => this.wheel(event), { passive: false });
    // two fingers on the board pinch it, never scroll the page (the fingers' middle is never quite still);
    // a finger dragging the zoomed board makes no fling either, whose end would swallow the next tap
    board.addEventListener("touchstart", (event) => { if (event.touches.length > 1 && event.cancelable) event.preventDefault(); }, { passive: false });
    board.addEventListener("touchmove", (event) => {
      if ((event.touches.length > 1 || this.scale > 1) && event.cancelable) event.preventDefault();
    }, { passive: false });
    buttons.zoomIn?.addEventListener("click", () => this.zoomBy(STEP, this.aim || this.centre));
    buttons.zoomOut?.addEventListener("click", () => this.zoomBy(1 / STEP, this.centre));
    buttons.fit?.addEventListener("click", () => this.zoomBy(0, this.centre));
  }

  /** After each drawing (which set the whole board's viewBox): shows the zoomed part again. A board of
   *  another size starts whole; a newly aimed point (`aim`, SVG units, or null) is brought into view. */
  show(aim = null) {
    const { width, height } = this.board.viewBox.baseVal;
    if (!this.full || this.full.width !== width || this.full.height !== height) {
      this.full = { width, height };
      this.scale = 1;
      this.centre = [width / 2, height / 2];
    }
    const aimMoved = aim && !(this.aim && aim[0] === this.aim[0] && aim[1] === this.aim[1]);
    this.aim = aim;
    if (aimMoved) this.keepInView(aim);
    this.apply();
  }

  get maxScale() {
    return Math.max(1, this.full.width / (FEWEST_POINTS_ACROSS * CELL));
  }

  get view() {
    return { width: this.full.width / this.scale, height: this.full.height / this.scale };
  }

  apply() {
    if (!this.full) return;
    const { width, height } = this.view;
    const clamp = (value, size, whole) => Math.min(whole - size / 2, Math.max(size / 2, value));
    this.centre = [clamp(this.centre[0], width, this.full.width), clamp(this.centre[1], height, this.full.height)];
    const left = this.centre[0] - width / 2;
    const top = this.centre[1] - height / 2;
    this.board.setAttribute("viewBox", `${left} ${top} ${width} ${height}`);
    const zoomed = this.scale > 1;
    this.board.classList.toggle("zoomed", zoomed); // client.css: a finger on it drags the board, not the page
    if (this.buttons.zoomIn) this.buttons.zoomIn.disabled = this.scale >= this.maxScale;
    if (this.buttons.zoomOut) this.buttons.zoomOut.disabled = !zoomed;
    if (this.buttons.fit) this.buttons.fit.disabled = !zoomed;
  }

  /** Zooms by `factor` (0: the whole board), `point` (SVG units) staying where it is on the screen. */
  zoomBy(factor, point) {
    if (!this.full) return;
    const scale = factor ? Math.min(this.maxScale, Math.max(1, this.scale * factor)) : 1;
    const before = this.view;
    this.scale = scale;
    const after = this.view;
    const [x, y] = point;
    const left = x - ((x - (this.centre[0] - before.width / 2)) * after.width) / before.width;
    const top = y - ((y - (this.centre[1] - before.height / 2)) * after.height) / before.height;
    this.centre = [left + after.width / 2, top + after.height / 2];
    this.apply();
  }

  /** A point (SVG units) out of view, as a nudged aim can be, is brought a cell inside it; one in view
   *  stays where it is, so that a second tap on it lands on it again. */
  keepInView([x, y]) {
    const { width, height } = this.view;
    const seen = (value, centre, size) => Math.abs(value - centre) <= size / 2;
    if (seen(x, this.centre[0], width) && seen(y, this.centre[1], height)) return;
    const inside = (value, centre, size) => Math.min(value - CELL + size / 2, Math.max(value + CELL - size / 2, centre));
    this.centre = [inside(x, this.centre[0], width), inside(y, this.centre[1], height)];
  }

  /** A point of the screen in SVG units. */
  toBoard(clientX, clientY) {
    const point = new DOMPoint(clientX, clientY).matrixTransform(this.board.getScreenCTM().inverse());
    return [point.x, point.y];
  }

  press(event) {
    if (event.pointerType === "mouse" && event.button !== 0) return;
    if (!this.pointers.size) this.moved = false;
    this.pointers.set(event.pointerId, [event.clientX, event.clientY]);
    if (this.pointers.size === 2) {
      const [a, b] = [...this.pointers.values()];
      this.gesture = { pinch: true, distance: Math.hypot(a[0] - b[0], a[1] - b[1]), scale: this.scale, at: this.toBoard(...middle(a, b)) };
      this.moved = true;
    } else if (this.pointers.size === 1) {
      this.gesture = { pinch: false, from: [event.clientX, event.clientY], last: [event.clientX, event.clientY] };
    }
  }

  move(event) {
    if (!this.pointers.has(event.pointerId) || !this.gesture) return;
    this.pointers.set(event.pointerId, [event.clientX, event.clientY]);
    const gesture = this.gesture;
    if (gesture.pinch) {
      const [a, b] = [...this.pointers.values()];
      const distance = Math.hypot(a[0] - b[0], a[1] - b[1]);
      if (!gesture.distance || !distance) return;
      this.scale = Math.min(this.maxScale, Math.max(1, (gesture.scale * distance) / gesture.distance));
      this.apply();
      // the board's point that was under the fingers' middle stays under it as they move
      const [x, y] = this.toBoard(...middle(a, b));
      this.centre = [this.centre[0] + gesture.at[0] - x, this.centre[1] + gesture.at[1] - y];
      this.apply();
      return;
    }
    const [x, y] = [event.clientX, event.clientY];
    if (this.scale === 1) return; // the whole board in view: a finger scrolls the page as before
    if (!this.moved && Math.hypot(x - gesture.from[0], y - gesture.from[1]) < DRAG_SLOP) return;
    if (!this.moved) {
      this.moved = true;
      this.board.setPointerCapture(event.pointerId); // the drag goes on past the board's edge
    }
    const [fromX, fromY] = this.toBoard(...gesture.last);
    const [toX, toY] = this.toBoard(x, y);
    gesture.last = [x, y];
    this.centre = [this.centre[0] - (toX - fromX), this.centre[1] - (toY - fromY)];
    this.apply();
  }

  release(event) {
    if (!this.pointers.delete(event.pointerId)) return;
    if (this.pointers.size === 1) {
      // one finger of a pinch lifted: the other drags on from where it is
      const [rest] = this.pointers.values();
      this.gesture = { pinch: false, from: rest, last: rest };
    } else if (!this.pointers.size) {
      this.gesture = null;
    }
  }

  /** A press that dragged or pinched is not a click on a point. */
  swallowClick(event) {
    if (!this.moved) return;
    this.moved = false;
    event.stopPropagation();
    event.preventDefault();
  }

  wheel(event) {
    if (!event.ctrlKey || !this.full) return; // a plain wheel scrolls the page
    event.preventDefault();
    this.zoomBy(STEP ** (-event.deltaY / 100), this.toBoard(event.clientX, event.clientY));
  }
}

function middle(a, b) {
  return [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2];
}
