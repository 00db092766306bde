// The analysis board: a game of the arena (its review), a record imported or a position set up.
// Every position, value and judgement is the server's: this module steps through them, asks
// for analyses over a WebSocket (refined while the engine thinks) and draws the review's graph.
import { api, capitalise, escapeHtml, onMessages, openSocket } from "./api.js";
import { Board } from "./board.js";
import { readOptions, refreshConditions, variantFieldset } from "./forms.js";

const page = document.getElementById("analysis");
const gameId = page.dataset.gameId || null;
const messageBox = document.getElementById("message");
const connection = document.getElementById("connection");
const graphBox = document.getElementById("graph");
const movesList = document.getElementById("moves");
const moveValues = document.getElementById("move-values");
const buttons = {
  first: document.getElementById("first-button"),
  back: document.getElementById("back-button"),
  forward: document.getElementById("forward-button"),
  last: document.getElementById("last-button"),
  stop: document.getElementById("stop-button"),
  goOn: document.getElementById("go-on-button"),
  review: document.getElementById("review-button"),
  leave: document.getElementById("leave-variation"),
  share: document.getElementById("share-button"),
};

const ASK_AFTER_MS = 250; // a position shown this long is analysed (stepping fast asks nothing)
const POLL_MS = 1000;
const MAX_RECORD_CHARACTERS = 60000;

let line = null; // the game's line: {game, options, position, moves: [texts]}
let players = null; // {black, white}: who played, in words
let result = null; // the game's end in words, where known
let ply = 0; // the position after this many of the line's moves
let variation = []; // moves played on the board from there (a variation)
let view = null; // the position shown (POST /api/study/position)
const views = new Map(); // moves (text) → view
const analyses = new Map(); // position text → the latest analysis
let review = null; // the review, once made
let reviewStatus = null;
let showing = 0;
let analysable = true; // false for a game still being played: no help during a game

const board = new Board(document.getElementById("board"), {
  ask: (places) => api("/api/study/choices", {
    method: "POST", body: { ...lineBody(currentMoves()), picked: places },
  }),
  play: async (move) => playMove(move),
  say,
});

function say(text, kind = "") {
  messageBox.textContent = text ?? "";
  messageBox.className = `message ${kind}`.trim();
}

function currentMoves() {
  return [...line.moves.slice(0, ply), ...variation];
}

function lineBody(moves) {
  return { game: line.game, options: line.options, position: line.position, moves };
}

// --- the position shown ------------------------------------------------------------------------

async function positionOf(moves) {
  const key = moves.join(" ");
  if (!views.has(key)) {
    views.set(key, await api("/api/study/position", { method: "POST", body: lineBody(moves) }));
  }
  return views.get(key);
}

async function showPosition() {
  const token = ++showing;
  let found;
  try {
    found = await positionOf(currentMoves());
  } catch (error) {
    say(error.message, "error");
    return;
  }
  if (token !== showing) return;
  view = found;
  say("");
  render();
  writeHash();
  askAnalysis();
}

function goTo(target) {
  variation = [];
  ply = Math.max(0, Math.min(line.moves.length, target));
  showPosition();
}

function back() {
  if (variation.length) variation = variation.slice(0, -1);
  else if (ply > 0) ply -= 1;
  else return;
  showPosition();
}

function forward() {
  if (variation.length || ply >= line.moves.length) return;
  ply += 1;
  showPosition();
}

/** Play ``move`` on the board: the game's next move steps forward; any other starts (or goes
 * on with) a variation. */
function playMove(move) {
  if (!variation.length && ply < line.moves.length && line.moves[ply] === move) ply += 1;
  else variation = [...variation, move];
  showPosition();
}

// --- drawing ---------------------------------------------------------------------------------

function render() {
  board.show(view.svg, view.status === "active");
  const total = line.moves.length;
  const label = ply === 0 ? "Start" : `Move ${ply} of ${total}`;
  document.getElementById("ply-label").textContent = variation.length
    ? `${label} + ${variation.length}` : `${label}${ply === 0 ? ` (${total} move${total === 1 ? "" : "s"})` : ""}`;
  buttons.first.disabled = ply === 0 && !variation.length;
  buttons.back.disabled = ply === 0 && !variation.length;
  buttons.forward.disabled = Boolean(variation.length) || ply >= total;
  buttons.last.disabled = !variation.length && ply >= total;
  const variationBox = document.getElementById("variation");
  variationBox.hidden = !variation.length;
  document.getElementById("variation-text").textContent = variation.length
    ? `A variation after ${ply === 0 ? "the start" : `move ${ply}`}: ${variation.join(" ")}` : "";
  renderEvaluation();
  renderMoves();
  drawGraph();
}

function turnWords() {
  if (view.status === "over") {
    const score = `Black ${view.score_text.black}, White ${view.score_text.white}`;
    return `Game over: ${view.reason ?? "the end"} (${score})`;
  }
  return `${capitalise(view.to_move)} to play`;
}

/** The review's words for the position shown, where it is one of the game's. */
function reviewed() {
  if (!review || variation.length) return null;
  if (ply < review.moves.length) {
    const move = review.moves[ply];
    return { words: move.words_before, exact: move.exact, value_text: move.value_text_before };
  }
  return review.final ? { ...review.final, value_text: null } : null;
}

function renderEvaluation() {
  if (!analysable) {
    document.getElementById("study-sub").textContent = [turnWords(), result].filter(Boolean).join(" · ");
    document.getElementById("eval-words").textContent = "No analysis while the game is being played.";
    document.getElementById("eval-line-row").hidden = true;
    buttons.stop.disabled = true;
    buttons.goOn.hidden = true;
    moveValues.innerHTML = '<li class="empty">Once the game is over.</li>';
    return;
  }
  const found = analyses.get(view.position);
  const known = found ?? reviewed();
  document.getElementById("study-sub").textContent = [turnWords(), result].filter(Boolean).join(" · ");
  document.getElementById("eval-words").textContent = known ? capitalise(known.words) : "…";
  const badge = document.getElementById("eval-badge");
  badge.textContent = known ? (known.exact ? "exact" : "estimate") : "";
  badge.className = `badge ${known?.exact ? "exact" : ""}`;
  document.getElementById("eval-value").textContent = known?.value_text ?? "";
  document.getElementById("eval-source").textContent = found
    ? `(${sourceWords(found.source)})` : known ? "(from the review)" : "";
  const pv = found?.principal_variation ?? [];
  document.getElementById("eval-line-row").hidden = !pv.length;
  document.getElementById("eval-line").textContent = pv.join(" ");
  document.getElementById("eval-played").innerHTML = playedWords();
  document.getElementById("thinking").textContent = thinking ? "Thinking…" : "";
  document.getElementById("thinking").classList.toggle("thinking", thinking);
  buttons.stop.disabled = !thinking;
  buttons.goOn.hidden = thinking || !found || found.exact || view.status === "over";
  renderMoveValues(found);
}

function sourceWords(source) {
  return {
    final: "the game is over", store: "solved before", solver: "solved", engine: "the engine's estimate",
  }[source] ?? source;
}

function playedWords() {
  if (!review || variation.length || ply >= review.moves.length) return "";
  const move = review.moves[ply];
  const judged = move.judgement === "best" ? "a best move"
    : move.judgement === "good" ? "a good move" : `${article(move.judgement)} ${move.judgement}`;
  const lost = move.loss ? ` (it gave away ${move.loss})` : "";
  const best = move.judgement === "best" || !move.best_moves.length ? ""
    : `; best: ${escapeHtml(move.best_moves.slice(0, 3).join(", "))}`;
  return `In the game: <strong>${escapeHtml(move.move)}</strong>, <span class="judgement ${move.judgement}">${judged}</span>${lost}${best}.`;
}

function article(word) {
  return /^[aeiou]/.test(word) ? "an" : "a";
}

function renderMoveValues(found) {
  if (view.status === "over") {
    moveValues.innerHTML = '<li class="empty">No move: the game is over.</li>';
    return;
  }
  const listed = found?.moves ?? view.legal_moves.map((move) => ({ move, value: null, value_text: null, best: false }));
  const exact = Boolean(found?.move_values);
  moveValues.innerHTML = listed.map((item) => {
    const mark = item.best ? (exact ? "best" : "engine's choice") : "";
    const outcome = item.outcome === 1 ? "wins" : item.outcome === -1 ? "loses" : item.outcome === 0 ? "draws" : "";
    return `<li><button type="button" class="move-value ${item.best ? "best" : ""} ${outcome}" data-move="${escapeHtml(item.move)}">
      <span class="move-text">${escapeHtml(item.move)}</span>
      <span class="value">${escapeHtml(item.value_text ?? (exact ? "" : "…"))}</span>
      ${mark ? `<span class="mark">${escapeHtml(mark)}</span>` : ""}
    </button></li>`;
  }).join("") || '<li class="empty">No legal move.</li>';
}

moveValues.addEventListener("click", (event) => {
  const item = event.target.closest("[data-move]");
  if (item) playMove(item.dataset.move);
});

const JUDGEMENT_MARKS = { inaccuracy: "?!", mistake: "?", blunder: "??" };

function renderMoves() {
  const total = line.moves.length;
  document.getElementById("move-count").textContent = total ? `(${total})` : "";
  if (!total) {
    movesList.innerHTML = '<li class="empty">No move: a position to study.</li>';
    return;
  }
  movesList.innerHTML = line.moves.map((move, index) => {
    const judged = review?.moves[index]?.judgement;
    const mover = line.players[index];
    const mark = JUDGEMENT_MARKS[judged] ?? "";
    const current = index + 1 === ply && !variation.length ? ' aria-current="true"' : "";
    return `<li><button type="button" class="move ${judged ?? ""}" data-ply="${index + 1}"${current}>
      <span class="ply">${index + 1}.</span>${mover ? `<i class="disc ${mover}" aria-label="${mover}"></i>` : ""}
      <span class="move-text">${escapeHtml(move)}</span><span class="mark" ${judged ? `title="${judged}"` : ""}>${mark}</span>
    </button></li>`;
  }).join("");
  movesList.querySelector("[aria-current]")?.scrollIntoView({ block: "nearest" });
}

movesList.addEventListener("click", (event) => {
  const item = event.target.closest("[data-ply]");
  if (item) goTo(Number(item.dataset.ply));
});

// --- the graph of the review ---------------------------------------------------------------------

const WIDTH = 640;
const HEIGHT = 170;
const PAD = 10;

function drawGraph() {
  const status = document.getElementById("review-status");
  if (!review) {
    const running = reviewStatus?.status === "running";
    status.textContent = running ? `reviewing… ${reviewStatus.done} of ${reviewStatus.total} positions` : "";
    graphBox.innerHTML = running
      ? `<div class="graph-progress" role="progressbar" aria-valuemin="0" aria-valuemax="${reviewStatus.total}" aria-valuenow="${reviewStatus.done}"><span style="width: ${Math.round(100 * reviewStatus.done / Math.max(1, reviewStatus.total))}%"></span></div>`
      : `<p class="hint">${reviewStatus?.status === "failed" ? escapeHtml(reviewStatus.error ?? "The review failed.")
        : "Review the game for the graph of its values, and each move judged."}</p>`;
    return;
  }
  status.textContent = "";
  const points = review.points;
  const last = Math.max(1, points.length - 1);
  const values = points.map((point) => point.value ?? 0);
  const scale = Math.max(1, ...values.map(Math.abs));
  const x = (at) => PAD + (at * (WIDTH - 2 * PAD)) / last;
  const y = (value) => HEIGHT / 2 - (value / scale) * (HEIGHT / 2 - PAD);
  const path = points.map((point, index) => `${index ? "L" : "M"}${x(point.ply).toFixed(1)},${y(point.value ?? 0).toFixed(1)}`).join(" ");
  const area = `${path} L${x(points[points.length - 1].ply).toFixed(1)},${HEIGHT / 2} L${x(0)},${HEIGHT / 2} Z`;
  const step = (WIDTH - 2 * PAD) / last;
  const columns = points.map((point) => {
    const move = point.ply ? review.moves[point.ply - 1] : null;
    const title = move ? `Move ${point.ply}: ${move.move}, ${move.judgement} (${move.value_text_after})` : "Start";
    return `<rect class="column" data-ply="${point.ply}" x="${(x(point.ply) - step / 2).toFixed(1)}" y="0" width="${step.toFixed(1)}" height="${HEIGHT}"><title>${escapeHtml(title)}</title></rect>`;
  }).join("");
  const marks = review.moves.map((move, index) => {
    if (!JUDGEMENT_MARKS[move.judgement]) return "";
    const point = points[index + 1];
    return `<circle class="mark ${move.judgement}" data-ply="${index + 1}" cx="${x(index + 1).toFixed(1)}" cy="${y(point?.value ?? 0).toFixed(1)}" r="${move.judgement === "inaccuracy" ? 3.5 : 5}"><title>Move ${index + 1}: ${escapeHtml(move.move)}, ${move.judgement}</title></circle>`;
  }).join("");
  const here = variation.length ? "" : `<line class="here" x1="${x(ply)}" x2="${x(ply)}" y1="0" y2="${HEIGHT}"></line>`;
  graphBox.innerHTML = `<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="The values of the game's positions, move by move" preserveAspectRatio="none">
    <rect class="ground" x="0" y="0" width="${WIDTH}" height="${HEIGHT}"></rect>
    <line class="zero" x1="0" x2="${WIDTH}" y1="${HEIGHT / 2}" y2="${HEIGHT / 2}"></line>
    <path class="area" d="${area}"></path><path class="curve" d="${path}"></path>
    ${here}${marks}${columns}</svg>`;
  renderSummary();
}

function renderSummary() {
  const box = document.getElementById("summary");
  if (!review) {
    box.innerHTML = "";
    return;
  }
  box.innerHTML = ["black", "white"].map((colour) => {
    const player = review.players[colour];
    const accuracy = player.accuracy === null ? "—" : `${player.accuracy}%`;
    return `<div class="summary-row"><i class="disc ${colour}" aria-hidden="true"></i>
      <strong>${escapeHtml(player.name)}</strong>
      <span>accuracy ${accuracy}</span>
      <span class="judgement inaccuracy">${player.inaccuracies} inaccurac${player.inaccuracies === 1 ? "y" : "ies"}</span>
      <span class="judgement mistake">${player.mistakes} mistake${player.mistakes === 1 ? "" : "s"}</span>
      <span class="judgement blunder">${player.blunders} blunder${player.blunders === 1 ? "" : "s"}</span></div>`;
  }).join("");
}

graphBox.addEventListener("click", (event) => {
  const item = event.target.closest("[data-ply]");
  if (item) goTo(Number(item.dataset.ply));
});

// --- reviews ---------------------------------------------------------------------------------------

async function askReview() {
  const answer = gameId
    ? await api(`/api/games/${encodeURIComponent(gameId)}/review`)
    : await api("/api/study/review", { method: "POST", body: { ...lineBody(line.moves), players: playerNames() } });
  reviewStatus = answer;
  if (answer.status === "done") review = answer.review;
  buttons.review.hidden = Boolean(gameId) || answer.status !== "failed";
  if (answer.status === "running") setTimeout(() => followReview(), POLL_MS);
  if (view) render();
  page.dataset.review = answer.status;
}

function playerNames() {
  const names = {};
  for (const colour of ["black", "white"]) names[colour] = String(players?.[colour] ?? "?").slice(0, 64);
  return names;
}

async function followReview() {
  try {
    await askReview();
  } catch (error) {
    say(error.message, "error");
    buttons.review.hidden = Boolean(gameId);
  }
}

buttons.review.addEventListener("click", () => {
  buttons.review.hidden = true;
  followReview();
});

// --- analyses, refined over a WebSocket ------------------------------------------------------------

let socket = null;
let requestId = 0;
let wanted = null; // {id, position}: the analysis asked for
let thinking = false;
let askTimer = null;
let retryTimer = null;

function connect() {
  const opened = openSocket("/ws/analysis");
  socket = opened;
  opened.addEventListener("open", () => {
    connection.textContent = "";
    page.dataset.live = "true";
    if (wanted) sendAnalyse();
  });
  onMessages(opened, received, (error) => {
    connection.textContent = `A message of the analysis could not be read: ${error.message}`;
  });
  opened.addEventListener("close", () => {
    page.dataset.live = "false";
    if (thinking) {
      thinking = false;
      if (view) renderEvaluation();
    }
    connection.textContent = "The analysis connection was lost — reconnecting…";
    setTimeout(connect, 1000);
  });
}

function send(message) {
  if (socket?.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
}

function sendAnalyse() {
  thinking = true;
  send({ type: "analyse", id: wanted.id, game: line.game, options: line.options, position: wanted.position });
  if (view) renderEvaluation();
}

/** Ask for the analysis of the position shown (unless an exact one is known), once it has been
 * shown a moment. */
function askAnalysis(force = false) {
  if (!analysable) return;
  clearTimeout(askTimer);
  clearTimeout(retryTimer);
  const position = view.position;
  const known = analyses.get(position);
  if (wanted && wanted.position !== position) {
    if (thinking) send({ type: "stop" });
    wanted = null;
    thinking = false;
  }
  if (!force && (known?.exact || view.status === "over" && known)) {
    renderEvaluation();
    return;
  }
  askTimer = setTimeout(() => {
    if (view.position !== position) return;
    wanted = { id: ++requestId, position };
    sendAnalyse();
  }, force ? 0 : ASK_AFTER_MS);
}

function received(message) {
  if (!wanted || message.id !== wanted.id) return; // an answer about a position left since
  if (message.type === "analysis") {
    analyses.set(wanted.position, message.analysis);
    thinking = message.thinking;
  } else if (message.type === "busy") {
    thinking = false;
    say(`${capitalise(message.detail)}: the analysis goes on in ${message.retry_after} s.`, "info");
    const position = wanted.position;
    retryTimer = setTimeout(() => {
      if (view?.position === position) askAnalysis(true);
    }, message.retry_after * 1000);
  } else if (message.type === "error") {
    thinking = false;
    say(message.detail, "error");
  } else if (message.type === "stopped") {
    thinking = false;
  }
  if (view) renderEvaluation();
}

buttons.stop.addEventListener("click", () => {
  send({ type: "stop", id: wanted?.id ?? null });
  thinking = false;
  renderEvaluation();
});

buttons.goOn.addEventListener("click", () => askAnalysis(true));

// --- stepping: buttons and keys ---------------------------------------------------------------------

buttons.first.addEventListener("click", () => goTo(0));
buttons.back.addEventListener("click", back);
buttons.forward.addEventListener("click", forward);
buttons.last.addEventListener("click", () => goTo(line.moves.length));
buttons.leave.addEventListener("click", () => goTo(ply));

document.addEventListener("keydown", (event) => {
  if (!line || document.getElementById("study").hidden) return;
  if (event.target.closest?.("input, textarea, select") || event.altKey || event.ctrlKey || event.metaKey) return;
  const action = { ArrowLeft: back, ArrowRight: forward, Home: () => goTo(0), End: () => goTo(line.moves.length) }[event.key];
  if (!action) return;
  event.preventDefault();
  action();
});

buttons.share.addEventListener("click", async () => {
  try {
    await navigator.clipboard.writeText(location.href);
    say("Link copied.", "info");
  } catch {
    say(`The link: ${location.href}`, "info");
  }
});

// --- the address: what to show, shared by its link ---------------------------------------------------

function writeHash() {
  const query = new URLSearchParams();
  if (!gameId) {
    query.set("game", line.game);
    query.set("options", JSON.stringify(line.options));
    if (line.position) query.set("position", line.position);
    if (line.moves.length) query.set("moves", line.moves.join(" "));
  }
  query.set("ply", String(ply));
  history.replaceState(null, "", `#${query.toString()}`);
}

function readHash() {
  const query = new URLSearchParams(location.hash.slice(1));
  let options = {};
  try {
    options = JSON.parse(query.get("options") ?? "{}") ?? {};
  } catch {
    options = {};
  }
  const moves = (query.get("moves") ?? "").split(" ").filter(Boolean);
  const at = Number.parseInt(query.get("ply") ?? "", 10);
  return {
    game: query.get("game"), options, position: query.get("position") || null, moves,
    ply: Number.isFinite(at) ? at : null,
  };
}

// --- starting: a game of the arena, a line from the address, or the set-up ---------------------------

/** Study ``spec`` (every move checked by the server), from the position after ``at`` moves. */
async function study(spec, who, at) {
  line = { game: spec.game, options: spec.options, position: spec.position || null, moves: spec.moves };
  const final = await positionOf(line.moves);
  line.moves = final.moves.map((move) => move.text);
  line.players = final.moves.map((move) => move.player);
  views.set(line.moves.join(" "), final);
  players = who;
  document.getElementById("setup").hidden = true;
  document.getElementById("study").hidden = false;
  document.getElementById("study-title").textContent = final.description;
  document.title = `${final.description}: analysis — Agon`;
  if (who) result = `Black: ${who.black} · White: ${who.white}`;
  buttons.review.hidden = Boolean(gameId) || line.moves.length === 0;
  ply = at === null || at === undefined ? 0 : Math.max(0, Math.min(line.moves.length, at));
  await showPosition();
  page.dataset.ready = "true";
}

async function studyGame() {
  const game = await api(`/api/games/${encodeURIComponent(gameId)}`);
  const link = document.getElementById("game-link");
  link.href = `/game/${encodeURIComponent(gameId)}`;
  link.hidden = false;
  const who = { black: game.players.black.label, white: game.players.white.label };
  analysable = game.status === "over";
  await study({ game: game.game, options: game.variant, position: null, moves: game.moves.map((m) => m.text) },
    who, readHash().ply);
  result = [game.headline, `Black: ${who.black} · White: ${who.white}`].filter(Boolean).join(" · ");
  render();
  if (game.status !== "over") {
    say("The game is still being played: its review opens once it is over.", "info");
    return;
  }
  await followReview();
}

// --- the set-up: a record imported, or a position ---------------------------------------------------

let meta = null;
let previewTimer = null;
let previewAsked = 0;
const setupGame = document.getElementById("setup-game");
const positionText = document.getElementById("position-text");
const setupError = document.getElementById("setup-error");
const setupBoard = document.getElementById("setup-board");

function setupFieldset() {
  return document.querySelector(`#setup-variants .variant[data-game="${CSS.escape(setupGame.value)}"]`);
}

function setupOptions() {
  return readOptions(setupFieldset());
}

function refreshSetup() {
  for (const block of document.querySelectorAll("#setup-variants .variant")) {
    block.hidden = block !== setupFieldset();
    block.disabled = block.hidden;
  }
  refreshConditions(setupFieldset(), meta.games[setupGame.value]);
}

/** The board of the position text, or what is wrong with it. */
async function preview(startPosition = false) {
  const asked = ++previewAsked;
  const body = { game: setupGame.value, options: setupOptions(), position: startPosition ? null : positionText.value };
  try {
    const found = await api("/api/study/position", { method: "POST", body });
    if (asked !== previewAsked) return;
    if (startPosition) positionText.value = found.position;
    setupBoard.innerHTML = found.svg;
    setupBoard.classList.remove("invalid");
    setupError.textContent = "";
    positionText.setAttribute("aria-invalid", "false");
    document.getElementById("setup-submit").disabled = false;
  } catch (error) {
    if (asked !== previewAsked) return;
    setupBoard.classList.add("invalid");
    setupError.textContent = error.message;
    positionText.setAttribute("aria-invalid", "true");
    document.getElementById("setup-submit").disabled = true;
  }
}

async function showSetup() {
  document.getElementById("setup").hidden = false;
  meta = await api("/api/meta");
  const variants = document.getElementById("setup-variants");
  for (const [name, game] of Object.entries(meta.games)) {
    setupGame.append(new Option(game.title, name));
    variants.append(variantFieldset(name, game));
  }
  refreshSetup();
  variantShown = JSON.stringify([setupGame.value, setupOptions()]);
  await preview(true);
  page.dataset.ready = "true";
}

let variantShown = null; // the variant whose start position the set-up shows

/** The chosen variant's start position, where the game or an option changed. */
function variantChanged() {
  refreshSetup();
  const variant = JSON.stringify([setupGame.value, setupOptions()]);
  if (variant === variantShown) return;
  variantShown = variant;
  preview(true);
}

setupGame.addEventListener("change", variantChanged);
document.getElementById("setup-variants").addEventListener("change", variantChanged);
document.getElementById("start-position").addEventListener("click", () => preview(true));
positionText.addEventListener("input", () => {
  previewAsked += 1; // (a start position on its way no longer replaces what is typed)
  clearTimeout(previewTimer);
  previewTimer = setTimeout(() => preview(false), 300);
});

document.getElementById("setup-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    await study({ game: setupGame.value, options: setupOptions(), position: positionText.value.trim(), moves: [] }, null, 0);
  } catch (error) {
    setupError.textContent = error.message;
  }
});

const recordText = document.getElementById("record-text");
const importError = document.getElementById("import-error");

document.getElementById("record-file").addEventListener("change", async (event) => {
  const file = event.target.files?.[0];
  importError.textContent = "";
  if (!file) return;
  if (file.size > MAX_RECORD_CHARACTERS) {
    importError.textContent = `The file is over ${MAX_RECORD_CHARACTERS.toLocaleString("en")} bytes: is it an Agon record?`;
    return;
  }
  recordText.value = await file.text();
});

document.getElementById("import-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  importError.textContent = "";
  const text = recordText.value;
  if (!text.trim()) {
    importError.textContent = "Paste a record first, or choose its file.";
    return;
  }
  if (text.length > MAX_RECORD_CHARACTERS) {
    importError.textContent = `The record is over ${MAX_RECORD_CHARACTERS.toLocaleString("en")} characters.`;
    return;
  }
  try {
    const record = await api("/api/study/record", { method: "POST", body: { record: text } });
    await study({ game: record.game, options: record.variant, position: record.position, moves: record.moves },
      record.players, 0);
    result = [record.result, `Black: ${record.players.black ?? "?"} · White: ${record.players.white ?? "?"}`]
      .filter(Boolean).join(" · ");
    render();
  } catch (error) {
    importError.textContent = error.message;
  }
});

// --- off we go ----------------------------------------------------------------------------------------

connect();
try {
  if (gameId) {
    await studyGame();
  } else {
    const wantedLine = readHash();
    if (wantedLine.game) await study(wantedLine, null, wantedLine.ply);
    else await showSetup();
  }
} catch (error) {
  document.getElementById("study").hidden = false;
  say(error.message, "error");
  page.dataset.ready = "true";
}
