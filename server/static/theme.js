// Light or dark: the system's choice (prefers-color-scheme) unless the player picked one with the
// header's switch (#theme: auto, light, dark), remembered in localStorage for every page of the client.
// A classic script in <head>, not a module: modules run after the page is parsed, and a dark page would
// first flash white. It sets <html data-theme="light|dark">, which client.css's colours follow.

"use strict";

(() => {
  const KEY = "kropki.theme";
  const CHOICES = ["auto", "light", "dark"];
  const systemDark = window.matchMedia("(prefers-color-scheme: dark)");

  const choice = () => {
    const stored = localStorage.getItem(KEY);
    return CHOICES.includes(stored) ? stored : "auto";
  };

  const apply = () => {
    const chosen = choice();
    document.documentElement.dataset.theme = chosen === "auto" ? (systemDark.matches ? "dark" : "light") : chosen;
    const select = document.getElementById("theme");
    if (select) select.value = chosen;
  };

  apply();
  systemDark.addEventListener("change", apply); // the system turns dark at dusk: "auto" follows
  window.addEventListener("storage", (event) => { if (event.key === KEY) apply(); }); // another tab's choice
  document.addEventListener("DOMContentLoaded", () => {
    const select = document.getElementById("theme");
    if (!select) return;
    select.value = choice();
    select.addEventListener("change", () => {
      localStorage.setItem(KEY, select.value);
      apply();
    });
  });
})();
