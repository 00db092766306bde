// The game page. The board is the server's SVG; this module only adds clicks, keyboard focus
// and the panel. Every rule is the server's: legal roots, illegal moves and their reasons.
import { LANG_KEY, api, capitalise, escapeHtml, preferredLanguage, rememberSeat, rememberedSeats } from "./api.js";

const page = document.getElementById("game");
const gameId = page.dataset.gameId;
const board = document.getElementById("board");
const message = document.getElementById("message");
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
let selected = null; // the picked pit (Alternator), e.g. "d4"
let targets = new Map(); // its neighbours: cell name → {legal, reason}
let overlay = null; // a board with highlights (legal roots, a hint) shown instead of the plain one
let shownSvg = null;
let busy = false;
let overShownAt = null; // revision whose game-over panel was shown
let resignArmed = null;

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
}

function say(text, kind = "") {
  message.textContent = text ?? "";
  message.className = `message ${kind}`.trim();
}

// --- rendering ---------------------------------------------------------------------------------

function itemName(item) {
  return item.dataset.cell ?? `point ${item.dataset.point}`;
}

/** What a screen reader says of a cell or point: read from the contract's classes. */
function itemLabel(item) {
  const parts = [itemName(item)];
  const size = item.querySelector(".size");
  if (size) parts.push(`tree of ${size.textContent}`);
  else if (item.classList.contains("pit")) parts.push("pit");
  const stone = item.querySelector(".stone");
  if (stone) parts.push(stone.classList.contains("black") ? "black stone" : "white stone");
  else if (item.dataset.point) parts.push("empty");
  if (item.classList.contains("highlight")) parts.push("highlighted");
  if (item.classList.contains("last")) parts.push("last move");
  return parts.join(", ");
}

function showBoard() {
  const svg = overlay ?? view.svg;
  const interactive = myTurn() && !busy;
  board.classList.toggle("interactive", interactive);
  board.classList.toggle("busy", busy);
  if (svg !== shownSvg) {
    const focused = document.activeElement?.closest?.("[data-cell], [data-point]");
    const focusedName = focused && board.contains(focused) ? itemName(focused) : null;
    board.innerHTML = svg;
    shownSvg = svg;
    // The cells are buttons: the board is a group of them, not a single image.
    board.querySelector("svg")?.setAttribute("role", "group");
    for (const item of board.querySelectorAll("[data-cell], [data-point]")) {
      item.setAttribute("role", "button");
      item.setAttribute("aria-label", itemLabel(item));
      item.classList.toggle("selected", Boolean(selected) && item.dataset.cell === selected);
      if (itemName(item) === focusedName) item.focus();
    }
  }
  for (const item of board.querySelectorAll("[data-cell], [data-point]")) {
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

const HOW_TO = {
  alternator: "Click a cell to draw a pit there, then a highlighted neighbour to be its root. "
    + "The larger tree attaches to the smaller; a tree scores for the colour of its root cell.",
  alak: "Click an empty point to place a stone. A chain shut in on both sides is captured.",
};

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
  document.getElementById("how-to").textContent = you.length && view.status === "active" ? HOW_TO[view.game] ?? "" : "";

  const seated = you.length > 0;
  const active = view.status === "active";
  for (const button of Object.values(buttons)) button.hidden = !seated;
  buttons.pass.hidden = !seated || !view.has_pass;
  buttons.undo.hidden = !seated || view.mode === "friend";
  buttons.pass.disabled = busy || !myTurn() || !view.can_pass;
  buttons.hint.disabled = busy || !myTurn();
  buttons.undo.disabled = busy || !view.undo_available;
  buttons.resign.disabled = busy || !active;
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

  if (view.status === "over" && overShownAt !== view.revision) {
    overShownAt = view.revision;
    showGameOver();
  }
}

function rulesLink() {
  const query = new URLSearchParams();
  const lang = preferredLanguage();
  if (lang) query.set("lang", lang);
  if (view.game === "alak") {
    query.set("rules", view.variant.rules);
    if (!view.variant.edge_capture) query.set("edge", "off");
  }
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
    say(error.message, "error");
  } finally {
    busy = false;
    if (view) render();
  }
}

async function send(path, body) {
  const answer = await api(`/api/games/${encodeURIComponent(gameId)}/${path}`, { method: "POST", body, token });
  acceptView(answer, answer);
  return answer;
}

function play(move) {
  return act(async () => {
    say("");
    try {
      await send("moves", { move });
    } catch (error) {
      clearSelection(true);
      throw error;
    }
  });
}

function clearSelection(redraw) {
  selected = null;
  targets = new Map();
  overlay = null;
  if (redraw && view) showBoard();
}

async function pickPit(cell) {
  const answer = await api(
    `/api/games/${encodeURIComponent(gameId)}/targets?cell=${encodeURIComponent(cell)}`, { token });
  if (answer.reason) {
    clearSelection(true);
    say(answer.reason, "error");
    return;
  }
  selected = answer.cell;
  targets = new Map(answer.targets.map((target) => [target.cell, target]));
  overlay = answer.svg;
  showBoard();
  const roots = answer.targets.filter((target) => target.legal).map((target) => target.cell);
  say(`Pit ${selected}: pick a highlighted root (${roots.join(", ")}), or ${selected} again to cancel.`, "info");
}

function onCellChosen(item) {
  if (!myTurn() || busy) return;
  if (item.dataset.point) {
    play(item.dataset.point);
    return;
  }
  const cell = item.dataset.cell;
  if (selected === cell) {
    clearSelection(true);
    say("");
  } else if (selected && targets.has(cell)) {
    // Even a target the server marked illegal is sent: its answer explains the rule.
    play(`${selected}-${cell}`);
  } else {
    act(() => pickPit(cell));
  }
}

board.addEventListener("click", (event) => {
  const item = event.target.closest("[data-cell], [data-point]");
  if (item) onCellChosen(item);
});

board.addEventListener("keydown", (event) => {
  if (event.key !== "Enter" && event.key !== " ") return;
  const item = event.target.closest("[data-cell], [data-point]");
  if (!item) return;
  event.preventDefault();
  onCellChosen(item);
});

buttons.pass.addEventListener("click", () => act(async () => {
  say("");
  await send("pass");
}));

buttons.undo.addEventListener("click", () => act(async () => {
  await send("undo");
  say("Move taken back.");
}));

buttons.hint.addEventListener("click", () => act(async () => {
  say("The computer is looking for a good move…");
  const hint = await api(`/api/games/${encodeURIComponent(gameId)}/hint`, { token });
  clearSelection(false);
  overlay = hint.svg;
  showBoard();
  const estimate = hint.value_text ? ` — estimated margin ${hint.value_text} for you` : "";
  const line = hint.pv.length > 1 ? `; expected line ${hint.pv.slice(0, 6).join(" ")}` : "";
  say(`Hint: ${hint.move}${estimate}${line}.`, "info");
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
  act(() => send("resign"));
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

// --- live updates --------------------------------------------------------------------------

let retryDelay = 500;

function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const socket = new WebSocket(`${scheme}://${location.host}/ws/games/${encodeURIComponent(gameId)}`);
  socket.addEventListener("open", () => {
    retryDelay = 500;
    page.dataset.live = "true";
  });
  socket.addEventListener("message", (event) => {
    const data = JSON.parse(event.data);
    if (data.type === "update") acceptView(data.view);
  });
  socket.addEventListener("close", (event) => {
    page.dataset.live = "false";
    if (event.code === 4404) return;
    setTimeout(() => {
      connect();
      refresh();
    }, retryDelay);
    retryDelay = Math.min(retryDelay * 2, 10000);
  });
}

async function refresh() {
  try {
    const answer = await api(`/api/games/${encodeURIComponent(gameId)}`, { token });
    acceptView(answer, answer);
    page.dataset.ready = "true";
  } catch (error) {
    say(error.message, "error");
  }
}

// A link to the other seat of this game, opened in this tab, changes only the fragment.
window.addEventListener("hashchange", () => location.reload());

window.addEventListener("storage", (event) => {
  if (event.key === LANG_KEY && view) render();
});

await refresh();
connect();
