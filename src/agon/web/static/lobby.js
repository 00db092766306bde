// The lobby: start a game, resume one of yours, or watch one in progress. The games and their
// options are the server's (/api/meta): the form is built from them.
import { api, escapeHtml, inLanguage, rememberSeat, rememberedSeats } from "./api.js";
import { element, readOptions, refreshConditions, variantFieldset } from "./forms.js";

const form = document.getElementById("new-game");
const errorBox = document.getElementById("form-error");
const levelSelect = document.getElementById("level");
let meta = null;

function value(name) {
  return form.elements[name].value;
}

function chosenGame() {
  return form.querySelector("input[name=game]:checked")?.value;
}

function chosenVariant() {
  return form.querySelector(`.variant[data-game="${CSS.escape(chosenGame() ?? "")}"]`);
}

// --- building the form from the games' options -------------------------------------------------

function gameChoice(name, game) {
  const input = element("input", { type: "radio", name: "game", value: name });
  const body = element("span", { class: "choice-body" }, [
    element("strong", { text: game.title }),
    element("small", { text: inLanguage(game.summary) }),
  ]);
  return element("label", { class: "choice" }, [input, body]);
}

function buildGames() {
  const choices = document.getElementById("game-choice");
  const variants = document.getElementById("variants");
  for (const [name, game] of Object.entries(meta.games)) {
    choices.append(gameChoice(name, game));
    variants.append(variantFieldset(name, game));
  }
  const wanted = new URLSearchParams(location.search).get("game");
  const radio = form.querySelector(`input[name=game][value="${CSS.escape(wanted ?? "")}"]`)
    ?? form.querySelector("input[name=game]");
  if (radio) radio.checked = true;
}

// --- the form as the choices change ------------------------------------------------------------

function refreshForm() {
  const chosen = chosenVariant();
  for (const block of form.querySelectorAll(".variant")) {
    block.hidden = block !== chosen;
    block.disabled = block !== chosen;
  }
  if (chosen) refreshConditions(chosen, meta.games[chosenGame()]);
  const opponent = value("opponent");
  form.querySelector(".level-field").hidden = opponent !== "computer";
  form.querySelector(".colour-field").hidden = opponent === "local";
  fillLevels();
}

function fillLevels() {
  if (!meta) return;
  const previous = levelSelect.value || meta.default_level;
  const game = chosenGame();
  const calibrated = calibratedLevels(game, options());
  const own = calibrated ? calibrated.levels : meta.levels.filter((level) => !level.games);
  const programs = meta.levels.filter((level) => level.games && level.games.includes(game));
  levelSelect.replaceChildren(
    ...[...own, ...programs].map((level) => {
      const option = new Option(levelText(level, calibrated), level.key);
      option.selected = level.key === previous;
      return option;
    }),
  );
}

/** The chosen variant's calibration (its levels chosen and rated by measured strength), if it
 * has one: every option the form gives has the calibrated value. */
function calibratedLevels(game, chosen) {
  return (meta.calibrated_levels?.[game] ?? []).find((entry) =>
    Object.entries(chosen).every(([name, value]) => entry.options[name] === value));
}

/** A level as the list shows it: its name, rating, time a move and agent. */
function levelText(level, calibrated) {
  const thinks = level.seconds
    ? `${level.seconds} s a move`
    : level.measured_seconds != null ? `about ${seconds(level.measured_seconds)} s a move`
    : "at once";
  if (!level.rating) {
    const rated = level.games ? "" : ", not rated on this board";
    return `${level.label}: ${thinks} (${level.agent}${rated})`;
  }
  return `${level.label}: Elo ${rated(level.rating)} over ${calibrated.anchor}, ${thinks} (${level.agent})`;
}

/** A rating with its 95% interval: "1385 ±260"; "636+" where a sweep leaves it open above;
 * "about 338" where sweeps both ways leave it open on either side. */
function rated({ elo, low, high }) {
  if (high == null && low == null) return `about ${elo}`;
  if (high == null) return `${elo}+`;
  if (low == null || low === high) return `${elo}`;
  return `${elo} ±${Math.round((high - low) / 2)}`;
}

function seconds(value) {
  return value < 0.01 ? "0.01" : value < 1 ? value.toFixed(2) : value.toFixed(1);
}

/** The chosen game's options as the form gives them (fields that do not apply left out). */
function options() {
  return readOptions(chosenVariant());
}

form.addEventListener("change", refreshForm);

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  errorBox.textContent = "";
  const button = form.querySelector("button[type=submit]");
  button.disabled = true;
  try {
    const created = await api("/api/games", {
      method: "POST",
      body: {
        game: chosenGame(),
        options: options(),
        opponent: value("opponent"),
        level: levelSelect.value || undefined,
        colour: value("colour"),
      },
    });
    rememberSeat(created.id, created.token);
    location.assign(created.url);
  } catch (error) {
    errorBox.textContent = error.message;
    button.disabled = false;
  }
});

// --- the lists of games ------------------------------------------------------------------------

function describe(game) {
  const names = ["black", "white"].map((colour) => game.players[colour].label);
  return `${names[0]} vs ${names[1]} · ${game.plies} move${game.plies === 1 ? "" : "s"}`;
}

function badge(game) {
  if (game.status === "over") return `<span class="badge">${escapeHtml(game.headline ?? "Over")}</span>`;
  const who = game.to_move ? `${game.to_move[0].toUpperCase()}${game.to_move.slice(1)} to move` : "";
  return `<span class="badge live">${escapeHtml(who)}</span>`;
}

function renderList(element, games, link, emptyText) {
  if (!games.length) {
    element.innerHTML = `<li class="empty">${escapeHtml(emptyText)}</li>`;
    return;
  }
  element.innerHTML = games.map((game) => `
    <li><a href="${escapeHtml(link(game))}" data-game-id="${escapeHtml(game.id)}">
      <span class="title">${escapeHtml(game.description)}</span>
      ${badge(game)}
      <span class="sub">${escapeHtml(describe(game))}</span>
    </a></li>`).join("");
}

async function refreshLists() {
  const seats = rememberedSeats();
  const ids = Object.keys(seats);
  try {
    const mine = ids.length ? (await api(`/api/games?ids=${ids.map(encodeURIComponent).join(",")}`)).games : [];
    renderList(document.getElementById("my-games"), mine,
      (game) => `/game/${game.id}#token=${seats[game.id].token}`,
      "Games you start in this browser appear here.");
    const live = (await api("/api/games?status=active&limit=12")).games.filter((g) => !seats[g.id]);
    renderList(document.getElementById("live-games"), live, (game) => `/game/${game.id}`,
      "No other game in progress.");
  } catch {
    // The lists are a convenience: the form still works without them.
  }
}

async function start() {
  try {
    meta = await api("/api/meta");
    buildGames();
  } catch (error) {
    errorBox.textContent = error.message;
  }
  refreshForm();
  form.dataset.ready = "true";
  await refreshLists();
  setInterval(refreshLists, 15000);
}

start();
