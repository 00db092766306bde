// Talking to the arena's API, and what this browser remembers (its seats, the rules language).

export class ApiError extends Error {
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

export async function api(path, { method = "GET", body, token } = {}) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers["X-Agon-Token"] = token;
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError("The server cannot be reached. Check the connection and try again.", 0);
  }
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok) {
    const detail = data && typeof data.detail === "string" ? data.detail : null;
    throw new ApiError(detail ?? `The server answered ${response.status}.`, response.status);
  }
  return data;
}

const SEATS_KEY = "agon.seats";
export const LANG_KEY = "agon.lang";

function readJson(key, fallback) {
  try {
    return JSON.parse(localStorage.getItem(key)) ?? fallback;
  } catch {
    return fallback;
  }
}

/** The seats this browser holds: {gameId: {token, saved}}. */
export function rememberedSeats() {
  const seats = readJson(SEATS_KEY, {});
  return seats && typeof seats === "object" ? seats : {};
}

export function rememberSeat(gameId, token) {
  const seats = rememberedSeats();
  seats[gameId] = { token, saved: Date.now() };
  const newest = Object.entries(seats)
    .sort((a, b) => (b[1].saved ?? 0) - (a[1].saved ?? 0))
    .slice(0, 50);
  try {
    localStorage.setItem(SEATS_KEY, JSON.stringify(Object.fromEntries(newest)));
  } catch {
    // Private browsing may refuse storage; the link itself still holds the seat.
  }
}

export function preferredLanguage() {
  try {
    return localStorage.getItem(LANG_KEY);
  } catch {
    return null;
  }
}

// One of a text's translations, keyed by language: the reader's, else English.
export function inLanguage(texts) {
  return texts[preferredLanguage()] ?? texts.en;
}

export function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({
    "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;",
  })[c]);
}

export function capitalise(word) {
  return word ? word[0].toUpperCase() + word.slice(1) : "";
}

// The arena packs a WebSocket's messages where asked (each a zlib stream: docs/web.md, Packed
// updates), which every browser that has DecompressionStream can open; else they come as text.
const PACKING = typeof DecompressionStream === "function";

// A player's socket offers its seat's token as a subprotocol, so that a crowd of watchers at the
// game's cap cannot keep the player out (docs/web.md, Limits and security). Tokens are URL-safe
// base64, which a subprotocol may carry; one that is not is not offered.
const SEAT_PROTOCOL = "agon.seat.";

/** A WebSocket to the arena's `path`, asking for packed messages where they can be opened, as
 * the holder of `seatToken` where one is given. */
export function openSocket(path, seatToken = null) {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const query = PACKING ? "?compress=deflate" : "";
  const url = `${scheme}://${location.host}${path}${query}`;
  if (!seatToken || !/^[A-Za-z0-9_-]+$/.test(seatToken)) return new WebSocket(url);
  return new WebSocket(url, [`${SEAT_PROTOCOL}${seatToken}`]);
}

/** Calls `handle` with each message of `socket`, as an object, in the order they came (a packed
 * one unpacked first); `failed` with the error where one cannot be read. */
export function onMessages(socket, handle, failed) {
  let reading = Promise.resolve();
  socket.addEventListener("message", (event) => {
    reading = reading.then(async () => handle(await readMessage(event.data))).catch(failed);
  });
}

async function readMessage(data) {
  if (typeof data === "string") return JSON.parse(data);
  const unpacked = data.stream().pipeThrough(new DecompressionStream("deflate"));
  return JSON.parse(await new Response(unpacked).text());
}
