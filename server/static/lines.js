// What the server says, in the reader's language: a table's server lines and the refusals.
//
// A server line at a table is one English sentence for everyone there; its nickType (the event's
// code: `W+R`, `u1undo`, `l12`...) says what happened. The client says it again from the code and the
// names and numbers of the sentence, read with the same English sentence kept in server-words.js: the names
// come from the line itself, not from the table, because the colours swap with each new game on a
// table while its chat keeps the lines of the earlier games. A line it cannot read is shown as sent.

import { englishText } from "./i18n.js";

const WHAT = { score: "whatScore", terr: "whatTerr", drop: "whatDrop", draw: "whatDraw", new: "whatNew", undo: "whatUndo" };

// code -> the sentences (i18n keys) a line with that code may be; the first the text matches is it
// (the digit is a side: 1 or 2, at a team table up to 8; docs/teams.md)
const KINDS = [
  [/^stop[1-8]$/, ["lineStop"]],
  [/^u[1-8](\w+)$/, ["lineProposes"]],
  [/^ok[1-8](\w+)$/, ["lineAgreed"]],
  [/^agree[1-8](\w+)$/, ["lineAgreeWaiting"]],
  [/^reject[1-8](\w+)$/, ["lineDeclined"]],
  [/^cancel[1-8](\w+)$/, ["lineWithdrew"]],
  [/^t[1-8]$/, ["lineGift"]],
  [/^left[1-8]$/, ["lineLeft"]],
  [/^resigned[1-8]$/, ["lineResignedLeft"]],
  [/^[BW]\+R$/, ["lineResigned", "lineTeamLeft", "lineAbandonedWon"]],
  [/^[BW]\+T$/, ["lineOnTime"]],
  [/^[BW]\+F$/, ["lineForfeit"]],
  [/^[BW]\+\d+(?:,\d+)?$/, ["lineWon"]],
  [/^0$/, ["lineDraw", "lineDrawAgreed"]],
  [/^Void$/, ["lineCancelled", "lineNobodyCame", "lineOrganiserCancelled", "lineCalledOff"]],
  [/^l\d+$/, ["lineSaved"]],
  [/^rated$/, ["lineRated"]],
  [/^unratedComputer$/, ["lineUnratedComputer"]],
  [/^unratedFree$/, ["lineUnratedFree"]],
  [/^unratedTeam$/, ["lineUnratedTeam"]],
  [/^unratedUnfinished$/, ["lineUnratedUnfinished"]],
  [/^unratedCancelled$/, ["lineUnratedCancelled"]],
  [/^unratedAccount$/, ["lineUnratedAccount"]],
  [/^unratedShort$/, ["lineUnratedShort"]],
  [/^restart$/, ["lineRestart"]],
  [/^away[12]$/, ["lineAway"]], // a player who left a game of two, and came back (absence.js)
  [/^awayClock[12]$/, ["lineAwayClock"]],
  [/^claimable[12]$/, ["lineClaimable", "lineClaimableShort"]],
  [/^back[12]$/, ["lineBack"]],
  [/^unsaved$/, ["lineUnsaved"]],
];

const readers = new Map(); // i18n key -> the RegExp that reads its English sentence

function reader(key) {
  if (!readers.has(key)) {
    const escaped = englishText(key).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    readers.set(key, new RegExp(`^${escaped.replace(/\\\{(\w+)\\\}/g, "(?<$1>.+?)")}$`));
  }
  return readers.get(key);
}

/** Which sentence a server line is (its i18n key) and the names and numbers in it; null when its code
 *  or its text is not known. */
export function readServerLine(line) {
  for (const [code, keys] of KINDS) {
    if (!code.test(line.type)) continue;
    for (const key of keys) {
      const found = reader(key).exec(line.text);
      if (found) return { key, values: { ...found.groups } };
    }
    return null;
  }
  return null;
}

/** A server line (`{type, text}`, empty nick) in the reader's language; as sent when not known. */
export function serverLineText(line, t) {
  for (const [code, keys] of KINDS) {
    const kind = code.exec(line.type);
    if (!kind) continue;
    const what = kind[1];
    if (what !== undefined && !WHAT[what]) return line.text;
    for (const key of keys) {
      const found = reader(key).exec(line.text);
      if (found) return t(key, { ...found.groups, ...(what ? { what: t(WHAT[what]) } : {}) });
    }
    return line.text;
  }
  return line.text;
}

/** A refusal (`err.<code>`, `nieOk.<code>`, `err.missing.<name>`) as a sentence; an unknown one
 *  still says what the server answered. auth.py's bare `nieOk.` is zagram's answer to an internal
 *  error. */
export function refusalText(answer, t) {
  const banned = /^(?:err|nieOk)\.banned\.([^.]+)\.(.*)$/s.exec(answer); // docs/moderation.md
  if (banned) {
    const [, end, reason] = banned;
    if (end === "forGood") return t("bannedForGood", { reason });
    return t("bannedUntil", { until: end.replace("T", " ").replace("Z", " UTC"), reason });
  }
  const code = answer.replace(/^(err|nieOk)\./, "").split(".")[0] || "internal";
  const sentence = t(`err.${code}`);
  return sentence === `err.${code}` ? t("refusedOther", { reason: answer }) : sentence;
}
