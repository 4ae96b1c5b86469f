// pyric messaging shim: the receive plane of firebase/messaging against a
// local pyric. Import it from pyric's messaging port
// (import * as messaging from "http://127.0.0.1:9599/emulator/v1/messaging.js")
// and call the same functions as firebase/messaging:
//
//   const m = messaging.getMessaging({ projectId: "demo-project" });
//   const token = await messaging.getToken(m);        // production-shaped, stable per instance
//   const stop = messaging.onMessage(m, (payload) => { ... });  // {from, messageId, data, notification, fcmOptions}
//   await messaging.deleteToken(m);                     // later sends report UNREGISTERED
//
// Tokens are minted by pyric's emulator endpoint; deliveries arrive over a
// server-sent-events stream of the token's inbox.

const BASE = new URL(".", import.meta.url).href.replace(/\/emulator\/v1\/$/, "");

function instanceKey(projectId) {
  const k = "pyric-messaging-instance:" + projectId;
  try {
    let v = globalThis.localStorage && localStorage.getItem(k);
    if (!v) {
      v = crypto.randomUUID();
      globalThis.localStorage && localStorage.setItem(k, v);
    }
    return v;
  } catch {
    return crypto.randomUUID();
  }
}

export function getMessaging(options = {}) {
  const projectId = options.projectId || (options.app && options.app.options && options.app.options.projectId) || "demo-project";
  return {
    projectId,
    baseUrl: options.baseUrl || BASE,
    instance: options.instance || instanceKey(projectId),
    token: null,
    source: null,
    observers: new Set(),
  };
}

async function call(m, method, path, body) {
  const res = await fetch(`${m.baseUrl}/emulator/v1/projects/${encodeURIComponent(m.projectId)}${path}`, {
    method,
    headers: body ? { "Content-Type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await res.json();
  if (!res.ok) {
    const err = new Error((json.error && json.error.message) || res.statusText);
    err.code = "messaging/token-subscribe-failed";
    throw err;
  }
  return json;
}

export async function getToken(m) {
  if (m.token) return m.token;
  const t = await call(m, "POST", "/tokens", { platform: "web", instance: m.instance });
  m.token = t.token;
  if (m.observers.size) listen(m);
  return m.token;
}

function listen(m) {
  if (m.source || !m.token) return;
  const url = `${m.baseUrl}/emulator/v1/projects/${encodeURIComponent(m.projectId)}/tokens/${encodeURIComponent(m.token)}/stream`;
  const src = new EventSource(url);
  src.addEventListener("message", (e) => {
    const delivery = JSON.parse(e.data);
    for (const next of m.observers) next(delivery.payload);
  });
  src.addEventListener("end", () => { src.close(); m.source = null; });
  m.source = src;
}

export function onMessage(m, nextOrObserver) {
  const next = typeof nextOrObserver === "function" ? nextOrObserver : (p) => nextOrObserver.next(p);
  m.observers.add(next);
  listen(m);
  return () => {
    m.observers.delete(next);
    if (!m.observers.size && m.source) { m.source.close(); m.source = null; }
  };
}

export async function deleteToken(m) {
  if (!m.token) return true;
  await call(m, "DELETE", `/tokens/${encodeURIComponent(m.token)}`);
  if (m.source) { m.source.close(); m.source = null; }
  m.token = null;
  return true;
}

export async function isSupported() {
  return typeof EventSource === "function" && typeof fetch === "function";
}
