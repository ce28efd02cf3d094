// Moderation in the client (docs/moderation.md, docs/client.md): a menu on a player's name and on a chat
// line (report, for everyone; mute, kick, ban and delete, for moderators), and the moderators' page of
// open reports, active sanctions and, for admins, the moderation log. What a player may do is read from
// the prestige field of their own `i` line (docs/protocol.md); the server checks every request again.

// {act, request, notify, t, me, info, focused, refocus}: what client.js lends, set once by setUpModeration
let hooks = null;

const REASONS = ["modSpam", "modInsults", "modCheating", "modOther"];
const DURATIONS = [["15m", "mod15m"], ["1h", "mod1h"], ["1d", "mod1d"], ["7d", "mod7d"], ["forever", "modForGood"]];
const CLOSINGS = [["none", "modActionNone"], ["delete", "modActionDelete"], ["mute", "modActionMute"],
  ["kick", "modActionKick"], ["ban", "modActionBan"]];
// What closes many reports at once (`what=closemany`): deleting a line is one report at a time
const MANY_CLOSINGS = CLOSINGS.filter(([value]) => value !== "delete");

export function setUpModeration(given) {
  hooks = given;
}

/** `P2x1c3`: prestige 2, sanctions up to level 1, deletes lines up to level 3; "" for everyone else. */
export function powersOf(prestige) {
  const level = (letter) => Number((new RegExp(`${letter}(\\d)`).exec(prestige || "") || [0, 0])[1]);
  return { prestige: level("P") || 1, sanction: level("x"), remove: level("c") };
}

function myPowers() {
  const me = hooks.me();
  return powersOf(me ? hooks.info(me.nick)?.prestige : "");
}

function make(tag, properties = {}, ...children) {
  const made = Object.assign(document.createElement(tag), properties);
  made.append(...children);
  return made;
}

/** Shows `dialog` (in the page already) as a modal one: the page under it inert, so the focus stays in
 *  it, and Escape closes it. Once closed it is removed, and the focus goes back to what opened it (to
 *  where the page lands a focus when that went or is hidden: client.js focusOpener). */
function openModal(dialog) {
  const opener = hooks.focused();
  dialog.addEventListener("close", () => {
    dialog.remove();
    hooks.refocus(opener);
  }, { once: true });
  dialog.showModal();
}

/** The line a modal dialog shows (and a screen reader says) what the page's notice bar, inert under it,
 *  would: client.js notify() writes into it while the dialog is open. */
function dialogNotice() {
  return make("p", { className: "notice", role: "status", hidden: true });
}

function choice(id, options) {
  return make("select", { id }, ...options.map(([value, key]) => make("option", { value, textContent: hooks.t()(key) })));
}

/** The ⋯ button after a player's name. */
export function nameMenu(nick) {
  return menuButton(() => openMenu({ nick }));
}

/** The ⋯ button on a chat line (`chat`: the client's key of the chat: "0", "t17" or "p<nick>"). */
export function lineMenu(line, chat) {
  const place = chat === "0" ? "0" : chat.startsWith("t") ? chat.slice(1) : `_${chat.slice(1)}`;
  return menuButton(() => openMenu({ nick: line.author, line: `${place}.${line.key}`, text: line.text, place }));
}

function menuButton(open) {
  const t = hooks.t();
  return make("button", { type: "button", className: "mod-menu", textContent: "⋯", title: t("modMenu"),
    ariaLabel: t("modMenu"), onclick: open });
}

/** The menu of one name or line: a reason, then Report; for a moderator, a duration and the sanctions. */
function openMenu(target) {
  const t = hooks.t();
  const dialog = make("dialog", { id: "mod-dialog", className: "mod-dialog" });
  dialog.setAttribute("aria-label", t("modMenu"));
  const title = target.line ? `${target.nick}: “${target.text}”` : target.nick;
  const reason = choice("mod-reason", REASONS.map((key) => [hooks.t("en")(key), key]));
  const details = make("input", { id: "mod-details", maxLength: 250, autocomplete: "off" });
  const reasonText = () => [reason.value, details.value.trim()].filter(Boolean).join(": ");
  dialog.append(
    make("p", { className: "mod-title", textContent: title }),
    dialogNotice(),
    make("label", {}, `${t("modReason")} `, reason),
    make("label", {}, `${t("modDetails")} `, details),
    make("button", { type: "button", id: "mod-report", textContent: t("modReport"), onclick: async () => {
      const answer = await hooks.act({ co: "report", reason: reasonText(), ...(target.line ? { line: target.line } : { whom: target.nick }) });
      if (answer?.startsWith("ok")) done(t("modReported"));
    } }),
  );
  const powers = myPowers();
  if (powers.sanction) {
    const lasting = choice("mod-for", DURATIONS);
    lasting.value = "1h";
    const sanction = (what) => async () => {
      const answer = await hooks.act({ co: "moderate", what, whom: target.nick, reason: reasonText(), ...(what === "kick" ? {} : { for: lasting.value }) });
      if (answer === "ok") done(t("modDone"));
    };
    dialog.append(
      make("label", {}, `${t("modFor")} `, lasting),
      make("button", { type: "button", id: "mod-mute", textContent: t("modMute"), onclick: sanction("mute") }),
      make("button", { type: "button", id: "mod-kick", textContent: t("modKick"), onclick: sanction("kick") }),
      make("button", { type: "button", id: "mod-ban", textContent: t("modBan"), onclick: sanction("ban") }),
    );
    if (target.nick.startsWith("*")) dialog.append(make("p", { className: "hint", textContent: t("modBanHint") }));
  }
  if (powers.remove && target.line && !target.place.startsWith("_")) {
    dialog.append(make("button", { type: "button", id: "mod-delete", textContent: t("modDeleteLine"), onclick: async () => {
      const answer = await hooks.act({ co: "dodajWpis", table: "delmsg", newMsgs: target.line });
      if (answer === "") done(t("modDone"));
    } }));
  }
  dialog.append(make("button", { type: "button", id: "mod-close", textContent: t("modClose"), onclick: () => dialog.close() }));
  document.body.append(dialog);
  openModal(dialog); // the focus on its first control, the reason
}

function done(text) {
  document.querySelector("#mod-dialog")?.close();
  hooks.notify(text); // in the notice bar: the dialog is closed already
}

// --- the moderators' page ----------------------------------------------------------------------

/** The header's Moderation button, shown to moderators and admins only. */
export function renderModerationEntry() {
  if (!hooks) return;
  let open = document.querySelector("#moderation-open");
  if (!open) {
    open = make("button", { type: "button", id: "moderation-open", onclick: showModeration });
    document.querySelector("#logout").before(open);
  }
  open.textContent = hooks.t()("moderation");
  open.hidden = !hooks.me() || !myPowers().sanction;
  if (!open.hidden) return;
  const page = document.querySelector("#moderation"); // open, or still being read
  page?.close();
  page?.remove();
}

async function read(what) {
  const answer = await hooks.request("a.kropki", { co: "moderate", idGracza: hooks.me().id, what });
  if (!answer.startsWith("{")) throw new Error(answer);
  return JSON.parse(answer);
}

async function showModeration() {
  const t = hooks.t();
  let page = document.querySelector("#moderation");
  if (!page) {
    page = make("dialog", { id: "moderation", className: "mod-page" });
    page.setAttribute("aria-labelledby", "moderation-title");
    document.body.append(page); // shown once read: a second click meanwhile finds it
  }
  const powers = myPowers();
  let reports, sanctions, log = null;
  try {
    [reports, sanctions] = await Promise.all([read("reports"), read("sanctions")]);
    if (powers.prestige >= 3) log = await read("log");
  } catch (failure) {
    hooks.notify(hooks.refusal(String(failure.message || failure)));
    return;
  }
  const focused = page.contains(document.activeElement) ? document.activeElement.id : "";
  const notice = page.querySelector(".notice") || dialogNotice(); // kept: a closing's answer outlives the reading again
  page.replaceChildren(
    make("h2", { id: "moderation-title", textContent: t("moderation") }),
    make("button", { type: "button", id: "moderation-refresh", textContent: t("modRefresh"), onclick: showModeration }),
    make("button", { type: "button", id: "moderation-close", textContent: t("modClose"), onclick: () => page.close() }),
    notice,
    make("h3", { textContent: t("modOpenReports") }),
    ...(reports.reports.length ? [closingSelected()] : []),
    reports.reports.length
      ? make("ol", { id: "mod-reports" }, ...reports.reports.map(reportItem))
      : make("p", { id: "mod-reports", textContent: t("modNoReports") }),
    make("h3", { textContent: t("modActiveSanctions") }),
    sanctions.sanctions.length
      ? make("ul", { id: "mod-sanctions" }, ...sanctions.sanctions.map(sanctionItem))
      : make("p", { id: "mod-sanctions", textContent: t("modNoSanctions") }),
    ...(log ? [make("h3", { textContent: t("modLog") }), logTable(log.log)] : []),
  );
  if (!page.open) openModal(page); // the focus on its first control, Refresh
  else if (!page.contains(document.activeElement)) (document.getElementById(focused) || page.querySelector("#moderation-refresh")).focus();
}

/** Closes many reports with one request (docs/moderation.md, "Closing many reports"): `which` is
 * {reports: "3,8"} or {against: nick}; the page is read again once any closed. */
async function closeMany(which, action, lasting, note) {
  const answer = await hooks.act({ co: "moderate", what: "closemany", ...which, action, for: lasting,
    note: note.trim() });
  const closed = /^ok\.(\d+)\.(\d+)$/.exec(answer || "");
  if (!closed) return; // a refusal: act told it in the page's language, and nothing was closed
  hooks.notify(hooks.t()("modClosedMany", { closed: closed[1], open: closed[2] }));
  showModeration();
}

/** The form above the reports that closes the ticked ones. */
function closingSelected() {
  const t = hooks.t();
  const action = choice("mod-many-action", MANY_CLOSINGS);
  const lasting = choice("mod-many-for", DURATIONS);
  lasting.value = "1d";
  const note = make("input", { id: "mod-many-note", maxLength: 300, autocomplete: "off" });
  return make("div", { id: "mod-many", className: "mod-closing" },
    make("label", {}, `${t("modCloseWith")} `, action),
    make("label", {}, `${t("modFor")} `, lasting),
    make("label", {}, `${t("modNote")} `, note),
    make("button", { type: "button", id: "mod-close-selected", textContent: t("modCloseSelected"), onclick: () => {
      const ticked = [...document.querySelectorAll("#mod-reports .mod-select:checked")].map((box) => box.value);
      if (!ticked.length) {
        hooks.notify(t("modSelectFirst"));
        return;
      }
      closeMany({ reports: ticked.join(",") }, action.value, lasting.value, note.value);
    } }),
  );
}

function placeText(report) {
  const t = hooks.t();
  if (!report.place) return t("modPlacePlayer");
  if (report.place === "0") return t("modPlaceLobby");
  if (report.place.startsWith("_")) return t("modPlacePrivate");
  return t("modPlaceTable", { uid: report.place });
}

function reportItem(report) {
  const t = hooks.t();
  const item = make("li", { className: "mod-report" });
  item.dataset.report = report.number;
  const at = report.at.replace("T", " ").replace("Z", " UTC");
  const tick = make("input", { type: "checkbox", className: "mod-select", value: String(report.number) });
  item.append(make("p", {}, make("label", {}, tick, " ", t("modReportHead", { ...report, at, place: placeText(report) }))));
  item.append(make("ol", { className: "mod-context" }, ...report.lines.map((line) => {
    const said = make("li", { className: line.reported ? "reported" : "" });
    said.append(make("b", { textContent: line.nick || "—" }), `: ${line.text}`, line.deleted ? ` ${t("modDeleted")}` : "");
    return said;
  })));
  const action = choice(`mod-action-${report.number}`, CLOSINGS.filter(([value]) => value !== "delete" || (report.line && !report.place.startsWith("_"))));
  const lasting = choice(`mod-for-${report.number}`, DURATIONS);
  lasting.value = "1d";
  const note = make("input", { id: `mod-note-${report.number}`, maxLength: 300, autocomplete: "off" });
  item.append(make("div", { className: "mod-closing" },
    make("label", {}, `${t("modCloseWith")} `, action),
    make("label", {}, `${t("modFor")} `, lasting),
    make("label", {}, `${t("modNote")} `, note),
    make("button", { type: "button", className: "mod-close-report", textContent: t("modCloseReport"), onclick: async () => {
      const answer = await hooks.act({ co: "moderate", what: "close", report: report.number, action: action.value,
        for: lasting.value, reason: report.reason, note: note.value.trim() });
      if (answer === "ok") showModeration();
    } }),
    make("button", { type: "button", className: "mod-close-against", textContent: t("modCloseAgainst", { nick: report.reported }),
      onclick: () => {
        if (action.value === "delete") {
          hooks.notify(t("modDeleteOneAtATime"));
          return;
        }
        closeMany({ against: report.reported }, action.value, lasting.value, note.value);
      } }),
  ));
  return item;
}

function sanctionItem(sanction) {
  const t = hooks.t();
  const lobby = sanction.kind === "registered" || sanction.kind === "slow";
  const words = [
    lobby ? t(`modKind_${sanction.kind}`, { seconds: sanction.seconds }) : `${sanction.target}: ${t(`modKind_${sanction.kind}`)}`,
    sanction.until ? t("modUntil", { until: sanction.until.replace("T", " ").replace("Z", " UTC") }) : t("modForGood"),
    sanction.network ? `[${sanction.network}]` : "",
    sanction.reason ? `(${sanction.reason})` : "",
    t("modBy", { by: sanction.by }),
  ];
  const item = make("li", { className: "mod-sanction" }, words.filter(Boolean).join(" "));
  item.dataset.target = sanction.target;
  const lift = lobby ? { what: "lobby", mode: "normal" } : { what: sanction.kind === "mute" ? "unmute" : "unban", whom: sanction.target };
  item.append(" ", make("button", { type: "button", className: "mod-lift", textContent: t("modLift"), onclick: async () => {
    if ((await hooks.act({ co: "moderate", ...lift })) === "ok") showModeration();
  } }));
  return item;
}

function logTable(lines) {
  const row = (cells, tag) => make("tr", {}, ...cells.map((text) => make(tag, { textContent: text })));
  return make("table", { id: "mod-log" },
    make("tbody", {}, ...lines.slice().reverse().map((line) =>
      row([line.at.replace("T", " ").replace("Z", ""), line.actor, line.action, line.target, line.detail, line.reason], "td"))));
}
