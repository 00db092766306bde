// A board of the server's SVG (the SVG contract: one element with data-place and aria-label
// for each place), its places made buttons, and moves made by picking places: the server says
// what the places picked so far make (a move, or the places that can follow). Used by the
// analysis board and the puzzles; nothing here knows a game.

/** What a screen reader says of a place: the server's words for it, and its marks. */
function itemLabel(item) {
  const parts = [item.getAttribute("aria-label") ?? item.dataset.place];
  if (item.classList.contains("highlight")) parts.push("highlighted");
  if (item.classList.contains("last")) parts.push("last move");
  return parts.join(", ");
}

export class Board {
  /**
   * @param frame the element the SVG goes in
   * @param ask (places) => the server's answer for the places picked (see choices)
   * @param play (move) => play the move the places make
   * @param say (text, kind) => show a message
   */
  constructor(frame, { ask, play, say }) {
    this.frame = frame;
    this.ask = ask;
    this.play = play;
    this.say = say;
    this.svg = null;
    this.overlay = null;
    this.shown = null;
    this.picked = [];
    this.choices = new Map();
    this.interactive = false;
    this.busy = false;
    frame.addEventListener("click", (event) => {
      const item = event.target.closest("[data-place]");
      if (item) this.chosen(item);
    });
    frame.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" && event.key !== " ") return;
      const item = event.target.closest("[data-place]");
      if (!item) return;
      event.preventDefault();
      this.chosen(item);
    });
  }

  /** Show ``svg`` (a new position: what was picked is forgotten); ``interactive``: the places
   * may be picked. */
  show(svg, interactive) {
    if (svg !== this.svg) this.clear();
    this.svg = svg;
    this.interactive = interactive;
    this.draw();
  }

  /** Show a board with marks (a hint, a line) instead of the position's own until the next
   * change. */
  mark(svg) {
    this.picked = [];
    this.choices = new Map();
    this.overlay = svg;
    this.draw();
  }

  clear() {
    this.picked = [];
    this.choices = new Map();
    this.overlay = null;
  }

  draw() {
    const svg = this.overlay ?? this.svg;
    this.frame.classList.toggle("interactive", this.interactive);
    if (svg !== this.shown) {
      const focused = document.activeElement?.closest?.("[data-place]");
      const focusedName = focused && this.frame.contains(focused) ? focused.dataset.place : null;
      this.frame.innerHTML = svg ?? "";
      this.shown = svg;
      this.frame.querySelector("svg")?.setAttribute("role", "group");
      for (const item of this.frame.querySelectorAll("[data-place]")) {
        item.setAttribute("role", "button");
        item.setAttribute("aria-label", itemLabel(item));
        item.classList.toggle("selected", this.picked.includes(item.dataset.place));
        if (item.dataset.place === focusedName) item.focus();
      }
    }
    for (const item of this.frame.querySelectorAll("[data-place]")) {
      item.setAttribute("tabindex", this.interactive ? "0" : "-1");
    }
  }

  async chosen(item) {
    if (!this.interactive || this.busy) return;
    const place = item.dataset.place;
    if (this.picked.length && this.picked[this.picked.length - 1] === place) {
      this.clear();
      this.draw();
      this.say("");
      return;
    }
    // A place that cannot follow the ones picked starts a new move. Even one the server marked
    // illegal is sent: playing it explains the rule.
    const places = this.picked.length && this.choices.has(place) ? [...this.picked, place] : [place];
    this.busy = true;
    try {
      this.say("");
      const answer = await this.ask(places);
      if (answer.move) {
        this.clear();
        this.draw();
        await this.play(answer.move);
        return;
      }
      if (answer.reason) {
        this.clear();
        this.draw();
        this.say(answer.reason, "error");
        return;
      }
      this.picked = places;
      this.choices = new Map(answer.choices.map((choice) => [choice.place, choice]));
      this.overlay = answer.svg;
      this.draw();
      const next = answer.choices.filter((choice) => choice.legal).map((choice) => choice.place);
      const last = places[places.length - 1];
      this.say(`${places.join(" ")}: pick a highlighted place (${next.join(", ")}), or ${last} again to cancel.`, "info");
    } catch (error) {
      this.clear();
      this.draw();
      this.say(error.message, "error");
    } finally {
      this.busy = false;
    }
  }
}
