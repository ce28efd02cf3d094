// The lobby's list of the tournaments the server runs (docs/tournaments.md, "Tournaments the server
// runs"): read from tournaments.json every 30 s and at once after the player joins or leaves. Joining
// and leaving are the protocol's own requests (joinTournament, leaveTournament), sent by the client's act.

const REFRESH_MS = 30_000;

let view = null; // {list, heading, nick, act, t, element, button}
let timer = null;
let read = []; // the last tournaments.json's unfinished tournaments

/** Starts (or, with a new login, restarts) the list; `act` sends a request with the player's id. */
export function showTournaments(options) {
  view = options;
  read = [];
  clearTimeout(timer);
  refresh();
}

export function stopTournaments() {
  clearTimeout(timer);
  view = null;
}

/** Again in the player's language. */
export function renderTournaments(t) {
  if (view === null) return;
  view.t = t;
  render();
}

async function refresh() {
  const asked = view;
  try {
    const response = await fetch("tournaments.json", { cache: "no-store" });
    if (response.ok) {
      const { tournaments } = await response.json();
      read = tournaments.filter((entry) => entry.state === "registering" || entry.state === "running");
    }
  } catch {
    // the next refresh tries again; the lobby's own poll tells the player when the server is away
  }
  if (view !== asked || view === null) return;
  render();
  timer = setTimeout(refresh, REFRESH_MS);
}

function when(text) {
  return new Date(text).toLocaleString(document.documentElement.lang, { dateStyle: "short", timeStyle: "short" });
}

function status(entry, t) {
  if (entry.state === "registering") return t("startsAt", { time: when(entry.startsAt) });
  if (entry.state !== "running") return t(entry.state === "cancelled" ? "tournamentCancelled" : "tournamentFinished");
  if (entry.kind === "arena") return t("endsAt", { time: when(entry.endsAt) });
  return t("roundOf", { round: entry.round, rounds: entry.rounds });
}

/** "swiss, 5 rounds · round 2 of 5 · players: 16": a tournament in one line, in the lobby and on its page. */
export function describeTournament(entry, t) {
  const kind = entry.kind === "arena" ? t("arenaOfMinutes", { minutes: entry.minutes }) : t("swissOfRounds", { rounds: entry.rounds });
  return `${kind} · ${status(entry, t)} · ${t("entrants", { count: entry.players.length })}`;
}

function render() {
  const { list, heading, nick, act, t, element, button } = view;
  heading.hidden = list.hidden = read.length === 0;
  list.replaceChildren(
    ...read.map((entry) => {
      const page = element("a", { href: `tournament/${encodeURIComponent(entry.name)}/standings`, target: "_blank", rel: "noopener", textContent: entry.name });
      const row = element(
        "li",
        {},
        element("span", { className: "what" }, page, ` · ${describeTournament(entry, t)}`),
      );
      row.dataset.tournament = entry.name;
      const joined = entry.players.includes(nick);
      const co = joined ? "leaveTournament" : "joinTournament";
      row.append(
        button(joined ? t("leaveTournament") : t("joinTournament"), async () => {
          await act({ co, tourn: entry.name });
          clearTimeout(timer);
          refresh();
        }, { className: joined ? "leave-tournament" : "join-tournament" }),
      );
      return row;
    }),
  );
}
