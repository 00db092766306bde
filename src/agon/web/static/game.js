// The game page. The board is the server's SVG; this module only adds clicks, keyboard focus
// and the panel. Every rule is the server's: legal roots, illegal moves and their reasons.
import { ApiError, LANG_KEY, api, capitalise, escapeHtml, inLanguage, onMessages, openSocket, preferredLanguage, rememberSeat, rememberedSeats } from "./api.js";

const page = document.getElementById("game");
const gameId = page.dataset.gameId;
const board = document.getElementById("board");
const message = document.getElementById("message");
const connection = document.getElementById("connection");
const movesList = document.getElementById("moves");
const dialog = document.getElementById("game-over");
const buttons = {
  pass: document.getElementById("pass-button"),
  undo: document.getElementById("undo-button"),
  hint: document.getElementById("hint-button"),
  resign: document.getElementById("resign-button"),
};

const token = seatToken();
let view = null;
let you = [];
let inviteToken = null;
let picked = []; // the board places picked so far for a move of several places, e.g. ["d4"]
let choices = new Map(); // the places that can come next: name → {legal, reason}
let overlay = null; // a board with highlights (what can follow, a hint) shown instead of the plain one
let shownSvg = null;
let busy = false;
let overShownAt = null; // revision whose game-over panel was shown
let resignArmed = null;
let offline = false; // the server cannot be reached: nothing can be sent until it is back

function seatToken() {
  const fromLink = new URLSearchParams(location.hash.slice(1)).get("token");
  if (fromLink) {
    rememberSeat(gameId, fromLink);
    return fromLink;
  }
  return rememberedSeats()[gameId]?.token ?? null;
}

// --- state of the page ------------------------------------------------------------------------

function myTurn() {
  return Boolean(view && view.status === "active" && view.to_move && you.includes(view.to_move));
}

function canAct() {
  return myTurn() && !busy && !offline;
}

function acceptView(next, personal = null) {
  if (view && next.revision < view.revision) return; // an older update that arrived late
  const changed = !view || next.revision !== view.revision;
  view = next;
  if (personal) {
    you = personal.you ?? [];
    inviteToken = personal.invite_token ?? null;
  }
  if (changed) {
    clearSelection(false);
    if (view.status === "active") overShownAt = null;
  }
  render();
  revisionShown();
}

function say(text, kind = "") {
  message.textContent = text ?? "";
  message.className = `message ${kind}`.trim();
}

// --- rendering ---------------------------------------------------------------------------------

/** What a screen reader says of a place: the server's words for it, and its marks. */
function itemLabel(item) {
  const parts = [item.getAttribute("aria-label") ?? item.dataset.place];
  if (item.classList.contains("highlight")) parts.push("highlighted");
  if (item.classList.contains("last")) parts.push("last move");
  return parts.join(", ");
}

function showBoard() {
  const svg = overlay ?? view.svg;
  const interactive = canAct();
  board.classList.toggle("interactive", interactive);
  board.classList.toggle("busy", busy);
  if (svg !== shownSvg) {
    const focused = document.activeElement?.closest?.("[data-place]");
    const focusedName = focused && board.contains(focused) ? focused.dataset.place : null;
    board.innerHTML = svg;
    shownSvg = svg;
    // The places are buttons: the board is a group of them, not a single image.
    board.querySelector("svg")?.setAttribute("role", "group");
    for (const item of board.querySelectorAll("[data-place]")) {
      item.setAttribute("role", "button");
      item.setAttribute("aria-label", itemLabel(item));
      item.classList.toggle("selected", picked.includes(item.dataset.place));
      if (item.dataset.place === focusedName) item.focus();
    }
  }
  for (const item of board.querySelectorAll("[data-place]")) {
    item.setAttribute("tabindex", interactive ? "0" : "-1");
  }
}

function modeText() {
  const players = view.players;
  const seat = you.length === 1 ? `You play ${capitalise(you[0])}` : "";
  if (view.mode === "local") return "Two players at this screen";
  if (view.mode === "computer") {
    const computer = players.black.kind === "computer" ? players.black : players.white;
    return [seat || "Watching", `against the ${computer.label.replace("Computer · ", "computer · ")}`]
      .join(" ");
  }
  return seat ? `${seat} against a friend` : "Watching a game between two players";
}

function turnText() {
  if (view.status === "over") return escapeHtml(view.headline ?? "Game over");
  const colour = capitalise(view.to_move);
  if (view.thinking) return `<span class="thinking">The computer (${colour}) is thinking</span>`;
  if (view.mode === "local") return `${colour} to move`;
  if (myTurn()) return `Your turn (${colour})`;
  if (you.length) return `Waiting for ${colour}`;
  return `${colour} to move`;
}

function render() {
  document.getElementById("game-title").textContent = view.description;
  document.getElementById("game-mode").textContent = modeText();
  document.title = `${view.description} — Agon`;
  showBoard();

  for (const colour of ["black", "white"]) {
    const card = document.getElementById(`player-${colour}`);
    const player = view.players[colour];
    const label = you.includes(colour) && you.length === 1 ? "You" : player.label;
    card.querySelector(".player-label").textContent = label;
    card.querySelector(".player-score").textContent = view.score_text[colour];
    card.classList.toggle("to-move", view.to_move === colour);
    const winner = view.status === "over" && view.result?.startsWith(colour === "black" ? "B" : "W");
    card.classList.toggle("winner", Boolean(winner));
  }
  const komi = view.komi ? ` (komi ${view.komi})` : "";
  document.querySelector("#player-white .player-score").title = `White's score${komi}`;
  document.getElementById("turn").innerHTML = turnText();
  document.getElementById("how-to").textContent = you.length && view.status === "active" ? inLanguage(view.click_help) : "";

  const seated = you.length > 0;
  const active = view.status === "active";
  for (const button of Object.values(buttons)) button.hidden = !seated;
  buttons.pass.hidden = !seated || !view.has_pass;
  buttons.undo.hidden = !seated || view.mode === "friend";
  buttons.hint.hidden = !seated || view.mode !== "computer"; // (no help against a person)
  buttons.pass.disabled = !canAct() || !view.can_pass;
  buttons.hint.disabled = !canAct();
  // The server offers no undo once the game is over; the status is checked too, so a view
  // from before that rule cannot re-enable it.
  buttons.undo.disabled = busy || offline || !active || !view.undo_available;
  buttons.resign.disabled = busy || offline || !active;
  if (!resignArmed) buttons.resign.textContent = "Resign";
  let note = document.querySelector(".spectator-note");
  if (!seated && !note) {
    note = document.createElement("p");
    note.className = "spectator-note";
    note.textContent = "You are watching this game: moves appear as they are played.";
    document.querySelector(".actions").after(note);
  }

  const invite = document.getElementById("invite");
  invite.hidden = !(inviteToken && active);
  if (inviteToken) {
    document.getElementById("invite-link").value = `${location.origin}/game/${gameId}#token=${inviteToken}`;
  }

  renderMoves();
  const record = `/api/games/${encodeURIComponent(gameId)}/record`;
  document.getElementById("export-link").href = record;
  document.getElementById("game-over-export").href = record;
  document.getElementById("rules-link").href = rulesLink();
  const review = `/analysis/${encodeURIComponent(gameId)}`;
  document.getElementById("review-link").href = review;
  document.getElementById("review-link").hidden = view.status !== "over";
  document.getElementById("game-over-review").href = review;

  if (view.status === "over" && overShownAt !== view.revision) {
    overShownAt = view.revision;
    showGameOver();
  }
}

function rulesLink() {
  const query = new URLSearchParams();
  const lang = preferredLanguage();
  if (lang) query.set("lang", lang);
  for (const [name, value] of Object.entries(view.rules_query)) query.set(name, value);
  const text = query.toString();
  return `/rules/${view.game}${text ? `?${text}` : ""}`;
}

function renderMoves() {
  const moves = view.moves;
  document.getElementById("move-count").textContent = moves.length ? `(${moves.length})` : "";
  if (!moves.length) {
    movesList.innerHTML = '<li class="empty">No move yet.</li>';
    return;
  }
  movesList.innerHTML = moves.map((move, index) => `
    <li class="${index === moves.length - 1 ? "last" : ""}">
      <span class="ply">${move.ply}.</span><i class="disc ${move.player}" aria-label="${move.player}"></i>
      <span class="move-text">${escapeHtml(move.text)}</span>
    </li>`).join("");
  movesList.scrollTop = movesList.scrollHeight;
}

function showGameOver() {
  document.getElementById("game-over-title").textContent = view.headline ?? "Game over";
  document.getElementById("game-over-reason").textContent = view.reason ? `${capitalise(view.reason)}.` : "";
  document.getElementById("game-over-score").innerHTML = ["black", "white"].map((colour) => `
    <span><i class="disc ${colour}" aria-hidden="true"></i>${capitalise(colour)} ${escapeHtml(view.score_text[colour])}</span>`).join("");
  if (!dialog.open) dialog.showModal();
}

// --- actions -----------------------------------------------------------------------------------

async function act(work) {
  if (busy) return;
  busy = true;
  render();
  try {
    await work();
  } catch (error) {
    if (error.status === 0) connectionLost();
    say(error.message, "error");
  } finally {
    busy = false;
    if (view) render();
  }
}

// --- changes and questions: on the game's socket where it is open, else by HTTP ---------------

// A change answered on the socket is shown once its update comes; if that takes longer than
// this, the page asks for the game instead.
const UPDATE_WAIT_MS = 3000;
let nextMessageId = 1;
const answersAwaited = new Map(); // a message's id → {resolve, reject}
let revisionsAwaited = []; // {revision, resolve}: changes made, their updates not yet shown

/** Make a change, `{type: "move", move, revision}`, `{type: "undo", revision}` or `{type:
 * "resign"}`: on the game's socket where it is open (docs/web.md, Moves on the game's socket),
 * else by HTTP; done once the page shows the game after it. */
async function send(change) {
  const open = openSocketNow();
  if (open) {
    await shown(await sendOnSocket(open, change));
    return;
  }
  const { type, ...body } = change;
  const path = type === "move" ? "moves" : type;
  const answer = await api(`/api/games/${encodeURIComponent(gameId)}/${path}`, { method: "POST", body, token });
  acceptView(answer, answer);
}

/** Send a change or a question on the socket: the game's revision once the server has made
 * the change, or the question's answer (an ApiError, as an HTTP request's, where it refuses it
 * or the socket closes first). */
function sendOnSocket(open, message) {
  const id = nextMessageId++;
  return new Promise((resolve, reject) => {
    answersAwaited.set(id, { resolve, reject });
    open.send(JSON.stringify({ ...message, token, id }));
  });
}

function answerArrived(data) {
  const awaited = answersAwaited.get(data.id);
  if (!awaited) return;
  answersAwaited.delete(data.id);
  if (data.type === "done") awaited.resolve(data.revision);
  else if (data.type === "choices") awaited.resolve(data.answer);
  else awaited.reject(new ApiError(data.detail ?? `The server answered ${data.status}.`, data.status));
}

/** What the places picked make (GET /choices' answer): asked on the socket where it is open. */
function askChoices(places) {
  const open = openSocketNow();
  if (open) return sendOnSocket(open, { type: "choices", picked: places });
  const query = encodeURIComponent(places.join(","));
  return api(`/api/games/${encodeURIComponent(gameId)}/choices?picked=${query}`, { token });
}

function answersLost() {
  const lost = new ApiError("The connection was lost. The board shows the game once it is back.", 0);
  for (const awaited of answersAwaited.values()) awaited.reject(lost);
  answersAwaited.clear();
}

/** Resolves once the page shows `revision` or later (asking for the game if its update is late). */
function shown(revision) {
  if (view && view.revision >= revision) return Promise.resolve();
  return new Promise((resolve) => {
    revisionsAwaited.push({ revision, resolve });
    setTimeout(async () => {
      if (!view || view.revision < revision) await refresh();
      resolve();
    }, UPDATE_WAIT_MS);
  });
}

function revisionShown() {
  const waiting = revisionsAwaited.filter((awaited) => awaited.revision > view.revision);
  for (const awaited of revisionsAwaited) if (awaited.revision <= view.revision) awaited.resolve();
  revisionsAwaited = waiting;
}

function clearSelection(redraw) {
  picked = [];
  choices = new Map();
  overlay = null;
  if (redraw && view) showBoard();
}

/** What the places picked so far make, as the server says: a move to play, or the places
 * that can come next (highlighted), or why none can. A place the last answer named the move
 * of is that move, without asking again. */
async function pick(places) {
  const named = places.length > 1 ? choices.get(places[places.length - 1])?.move : null;
  const answer = named ? { move: named } : await askChoices(places);
  if (answer.move) {
    clearSelection(false);
    try {
      await send({ type: "move", move: answer.move, revision: view.revision });
    } catch (error) {
      clearSelection(true);
      throw error;
    }
    return;
  }
  if (answer.reason) {
    clearSelection(true);
    say(answer.reason, "error");
    return;
  }
  picked = places;
  choices = new Map(answer.choices.map((choice) => [choice.place, choice]));
  overlay = answer.svg;
  showBoard();
  const next = answer.choices.filter((choice) => choice.legal).map((choice) => choice.place);
  const last = places[places.length - 1];
  say(`${places.join(" ")}: pick a highlighted place (${next.join(", ")}), or ${last} again to cancel.`, "info");
}

function onPlaceChosen(item) {
  if (!canAct()) return;
  const place = item.dataset.place;
  if (picked.length && picked[picked.length - 1] === place) {
    clearSelection(true);
    say("");
    return;
  }
  // A place that cannot follow the ones picked starts a new move. Even one the server marked
  // illegal is sent: playing it explains the rule.
  const places = picked.length && choices.has(place) ? [...picked, place] : [place];
  act(async () => {
    say("");
    await pick(places);
  });
}

board.addEventListener("click", (event) => {
  const item = event.target.closest("[data-place]");
  if (item) onPlaceChosen(item);
});

board.addEventListener("keydown", (event) => {
  if (event.key !== "Enter" && event.key !== " ") return;
  const item = event.target.closest("[data-place]");
  if (!item) return;
  event.preventDefault();
  onPlaceChosen(item);
});

buttons.pass.addEventListener("click", () => act(async () => {
  say("");
  await send({ type: "move", move: "pass", revision: view.revision });
}));

buttons.undo.addEventListener("click", () => act(async () => {
  await send({ type: "undo", revision: view.revision });
  say("Move taken back.");
}));

buttons.hint.addEventListener("click", () => act(async () => {
  say("The computer is looking for a good move…");
  const hint = await api(`/api/games/${encodeURIComponent(gameId)}/hint`, { token });
  clearSelection(false);
  overlay = hint.svg;
  showBoard();
  const worth = hint.value_text ? ` — ${hint.value_text}` : "";
  const line = hint.pv.length > 1 ? `; expected line ${hint.pv.slice(0, 6).join(" ")}` : "";
  say(`Hint: ${hint.move}${worth}${line}.`, "info");
}));

buttons.resign.addEventListener("click", () => {
  if (!resignArmed) {
    buttons.resign.textContent = "Click again to resign";
    resignArmed = setTimeout(() => {
      resignArmed = null;
      buttons.resign.textContent = "Resign";
    }, 4000);
    return;
  }
  clearTimeout(resignArmed);
  resignArmed = null;
  act(() => send({ type: "resign" }));
});

document.getElementById("copy-invite").addEventListener("click", async () => {
  const field = document.getElementById("invite-link");
  try {
    await navigator.clipboard.writeText(field.value);
    say("Invitation link copied.");
  } catch {
    field.select();
    say("Select the link and copy it.");
  }
});

// --- live updates and reconnection -------------------------------------------------------------

// A server that comes back is found again within about a second: retries start at 250 ms and
// double up to 1 s, never longer.
const FIRST_RETRY_MS = 250;
const LONGEST_RETRY_MS = 1000;
let retryDelay = FIRST_RETRY_MS;
let socket = null;

function showOffline(lost) {
  if (offline === lost) return;
  offline = lost;
  connection.textContent = lost ? "Connection lost — reconnecting…" : "";
  page.classList.toggle("offline", lost);
  if (view) render();
}

/** The game's socket where it is open now, else null. */
function openSocketNow() {
  return socket && socket.readyState === WebSocket.OPEN ? socket : null;
}

/** A request found no server: say so, and let the socket's reconnection find it again. */
function connectionLost() {
  showOffline(true);
  openSocketNow()?.close();
}

function connect() {
  const opened = openSocket(`/ws/games/${encodeURIComponent(gameId)}`, token);
  socket = opened;
  opened.addEventListener("open", async () => {
    retryDelay = FIRST_RETRY_MS;
    page.dataset.live = "true";
    if (!offline) return;
    // Back: the socket brings the public view; this seat's own (its colours, its buttons)
    // comes with the token.
    if (await refresh() && opened.readyState === WebSocket.OPEN) showOffline(false);
  });
  onMessages(opened, (data) => {
    if (data.type === "update") acceptView(data.view);
    else answerArrived(data);
  }, (error) => say(`An update could not be read: ${error.message}`, "error"));
  opened.addEventListener("close", (event) => {
    page.dataset.live = "false";
    answersLost();
    if (event.code === 4404) return;
    showOffline(true);
    setTimeout(connect, retryDelay);
    retryDelay = Math.min(retryDelay * 2, LONGEST_RETRY_MS);
  });
}

/** Fetches this seat's view; false when no server answered. */
async function refresh() {
  try {
    const answer = await api(`/api/games/${encodeURIComponent(gameId)}`, { token });
    acceptView(answer, answer);
    page.dataset.ready = "true";
    return true;
  } catch (error) {
    if (error.status === 0) {
      connectionLost();
      return false;
    }
    say(error.message, "error");
    return true;
  }
}

// A link to the other seat of this game, opened in this tab, changes only the fragment.
window.addEventListener("hashchange", () => location.reload());

window.addEventListener("storage", (event) => {
  if (event.key === LANG_KEY && view) render();
});

await refresh();
connect();
