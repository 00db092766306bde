// The rules page: remember the chosen language (the server also keeps it in a cookie).
import { LANG_KEY, preferredLanguage } from "./api.js";

const article = document.querySelector(".rules-text");
const current = article?.getAttribute("lang");
const asked = new URLSearchParams(location.search).get("lang");
const remembered = preferredLanguage();

if (!asked && remembered && current && remembered !== current
    && document.querySelector(`.lang[data-lang="${remembered}"]`)) {
  location.replace(`?lang=${encodeURIComponent(remembered)}`);
} else if (current) {
  try { localStorage.setItem(LANG_KEY, current); } catch { /* storage refused: cookie remains */ }
}

for (const link of document.querySelectorAll(".lang")) {
  link.addEventListener("click", () => {
    try { localStorage.setItem(LANG_KEY, link.dataset.lang); } catch { /* cookie remains */ }
  });
}
