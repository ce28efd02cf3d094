// Telling a player who is looking elsewhere: short sounds made in the browser (no files to load) and
// browser notifications, each behind the player's own switch (remembered in localStorage).

// Each sound a few short tones (frequency Hz, seconds).
const SOUNDS = {
  move: [[660, 0.06]],
  capture: [[520, 0.08], [780, 0.14]],
  start: [[440, 0.08], [554, 0.08], [660, 0.14]],
  lowTime: [[880, 0.12], [880, 0.12]],
};

let audio = null;

/** A browser lets a page make sounds only after the player touched it: the first touch wakes them. */
export function wakeSound() {
  try {
    audio ??= new AudioContext();
    audio.resume().catch(() => {});
  } catch {
    // no sound in this browser
  }
}

export function playSound(name) {
  if (localStorage.getItem("kropki.sound") === "off") return;
  try {
    audio ??= new AudioContext();
    let start = audio.currentTime;
    for (const [frequency, seconds] of SOUNDS[name]) {
      const tone = audio.createOscillator();
      const volume = audio.createGain();
      tone.frequency.value = frequency;
      volume.gain.setValueAtTime(0.2, start);
      volume.gain.exponentialRampToValueAtTime(0.001, start + seconds);
      tone.connect(volume).connect(audio.destination);
      tone.start(start);
      tone.stop(start + seconds);
      start += seconds;
    }
  } catch {
    // no sound in this browser
  }
}

/** A browser notification, when the player opted in and is looking at another tab or window. */
export function notifyAway(title, text, tag) {
  if (localStorage.getItem("kropki.notify") !== "on" || !("Notification" in window)) return;
  if (Notification.permission !== "granted" || (document.visibilityState === "visible" && document.hasFocus())) return;
  try {
    new Notification(title, { body: text, tag });
  } catch {
    // a browser that only notifies from a service worker (Android's Chrome): the tab's title still says it
  }
}

/** The player's switch: asks the browser's permission when turned on; whether notifications are on now. */
export async function allowNotifications(wanted) {
  const on = wanted && (Notification.permission === "granted" || (await Notification.requestPermission()) === "granted");
  localStorage.setItem("kropki.notify", on ? "on" : "off");
  return on;
}
