// The puzzles of a game, one after the other. The server sends a puzzle's position and goal,
// judges the move tried and answers with the line that follows it, board by board.
import { api, escapeHtml, inLanguage } from "./api.js";
import { Board } from "./board.js";

const page = document.getElementById("puzzle");
const gameName = page.dataset.game;
const messageBox = document.getElementById("message");
const verdict = document.getElementById("verdict");
const buttons = {
  pass: document.getElementById("pass-button"),
  again: document.getElementById("again-button"),
  replay: document.getElementById("replay-button"),
  next: document.getElementById("next-button"),
};
const STEP_MS = 700;
const POLL_MS = 2000;

let puzzle = null;
let answer = null; // the server's answer to the move tried
let playing = null; // the timer of the line being played out

const board = new Board(document.getElementById("board"), {
  ask: (places) => api("/api/study/choices", {
    method: "POST",
    body: { game: puzzle.game, options: puzzle.variant, position: puzzle.position, moves: [], picked: places },
  }),
  play: tryMove,
  say,
});

function say(text, kind = "") {
  messageBox.textContent = text ?? "";
  messageBox.className = `message ${kind}`.trim();
}

function show(found) {
  puzzle = found.puzzle;
  answer = null;
  stopPlaying();
  page.dataset.key = puzzle.key;
  page.dataset.state = "solving";
  document.getElementById("puzzle-goal").textContent = puzzle.goal;
  document.getElementById("puzzle-sub").textContent = puzzle.description;
  document.getElementById("puzzle-count").textContent = `Puzzle ${found.index} of ${found.count}`;
  const stars = "★".repeat(puzzle.difficulty) + "☆".repeat(5 - puzzle.difficulty);
  const difficulty = document.getElementById("difficulty");
  difficulty.textContent = `Difficulty ${stars}`;
  difficulty.setAttribute("aria-label", `Difficulty ${puzzle.difficulty} of 5`);
  document.getElementById("how-to").textContent = inLanguage(puzzle.click_help);
  verdict.hidden = true;
  buttons.pass.hidden = !puzzle.has_pass;
  buttons.again.hidden = true;
  buttons.replay.hidden = true;
  buttons.next.disabled = false;
  board.show(puzzle.svg, true);
  say("");
}

async function load(after = null) {
  buttons.next.disabled = true;
  const query = after ? `?after=${encodeURIComponent(after)}` : "";
  try {
    const found = await api(`/api/puzzles/${encodeURIComponent(gameName)}${query}`);
    if (found.status === "ready") {
      show(found);
    } else if (found.status === "finding") {
      document.getElementById("puzzle-goal").textContent = "Looking for puzzles…";
      say(`The computer is looking for puzzles of this game (up to ${found.seconds} seconds).`, "info");
      setTimeout(() => load(after), POLL_MS);
      return;
    } else {
      document.getElementById("puzzle-goal").textContent = "No puzzle yet";
      say(found.detail, "info");
    }
  } catch (error) {
    say(error.message, "error");
    buttons.next.disabled = false;
  }
  page.dataset.ready = "true";
}

async function tryMove(move) {
  if (!puzzle || answer) return;
  try {
    answer = await api(`/api/puzzles/${encodeURIComponent(gameName)}/${encodeURIComponent(puzzle.key)}/moves`,
      { method: "POST", body: { move } });
  } catch (error) {
    say(error.message, "error");
    return;
  }
  page.dataset.state = answer.correct ? "solved" : "wrong";
  verdict.hidden = false;
  verdict.dataset.correct = String(answer.correct);
  document.getElementById("verdict-title").textContent = answer.correct ? `Right: ${answer.move}` : `Not ${answer.move}`;
  document.getElementById("verdict-words").textContent = answer.correct
    ? `${capitalised(answer.words)}. Best play goes on to the end:`
    : `After ${answer.move}, ${answer.words}. The refutation:`;
  document.getElementById("verdict-line").textContent = answer.line.join(" ");
  buttons.again.hidden = answer.correct;
  buttons.replay.hidden = false;
  buttons.pass.hidden = true;
  say(answer.correct ? "Solved." : "Not this one: watch the refutation, then try again.", answer.correct ? "info" : "error");
  playLine();
}

function capitalised(text) {
  return text ? text[0].toUpperCase() + text.slice(1) : "";
}

function stopPlaying() {
  clearTimeout(playing);
  playing = null;
  page.dataset.playing = "false";
}

/** The line after the move tried, one board after the other. */
function playLine() {
  stopPlaying();
  let step = 0;
  page.dataset.playing = "true";
  const next = () => {
    board.show(answer.boards[step], false);
    document.getElementById("verdict-line").innerHTML = answer.line
      .map((move, index) => `<span class="${index === step ? "current" : ""}">${escapeHtml(move)}</span>`)
      .join(" ");
    step += 1;
    if (step < answer.boards.length) {
      playing = setTimeout(next, STEP_MS);
    } else {
      playing = null;
      page.dataset.playing = "done";
    }
  };
  next();
}

buttons.again.addEventListener("click", () => {
  stopPlaying();
  answer = null;
  verdict.hidden = true;
  buttons.again.hidden = true;
  buttons.replay.hidden = true;
  buttons.pass.hidden = !puzzle.has_pass;
  page.dataset.state = "solving";
  board.show(puzzle.svg, true);
  say("");
});

buttons.replay.addEventListener("click", playLine);
buttons.pass.addEventListener("click", () => tryMove("pass"));
buttons.next.addEventListener("click", () => load(puzzle?.key ?? null));

load();
