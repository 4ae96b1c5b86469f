// The client e2e/fndiff runs against pyric and against firebase-tools:
// the same calls through the JS SDK (firebase@12.19.0) and raw HTTP, then
// the payloads the functions recorded in Firestore. Usage:
//   node client.mjs PROJECT FUNCTIONS_HOSTPORT AUTH_HOSTPORT FIRESTORE_HOSTPORT OUT
// It writes to the file OUT (firebase emulators:exec interleaves its own
// log lines with a script's stdout) one JSON object: {"vars": {name:
// value that must differ between runs}, "cases": {name: what was
// observed}}.
import { initializeApp } from "firebase/app";
import { getFunctions, connectFunctionsEmulator, httpsCallable } from "firebase/functions";
import {
  getAuth, connectAuthEmulator, createUserWithEmailAndPassword, signInWithEmailAndPassword, signOut, deleteUser,
} from "firebase/auth";
import {
  getFirestore, connectFirestoreEmulator, doc, setDoc, updateDoc, deleteDoc, Timestamp, GeoPoint, Bytes, deleteField,
} from "firebase/firestore";

import { writeFileSync } from "node:fs";

const [project, fnHost, authHost, fsHost, outFile] = process.argv.slice(2);
const split = (hp) => [hp.slice(0, hp.lastIndexOf(":")), Number(hp.slice(hp.lastIndexOf(":") + 1))];
const app = initializeApp({ projectId: project, apiKey: "fndiff-key", authDomain: project + ".firebaseapp.com" });
const functions = getFunctions(app, "us-central1");
connectFunctionsEmulator(functions, ...split(fnHost));
const auth = getAuth(app);
connectAuthEmulator(auth, "http://" + authHost, { disableWarnings: true });
const db = getFirestore(app);
connectFirestoreEmulator(db, ...split(fsHost));

const vars = {};
const cases = {};

const sdkError = (e) => ({ code: e.code, message: e.message, details: e.details === undefined ? "undefined" : e.details });

async function sdk(name, fn) {
  try {
    cases[name] = { ok: await fn() };
  } catch (e) {
    cases[name] = { error: sdkError(e) };
  }
}

// raw makes one HTTP request and keeps what a client sees of the answer.
async function raw(name, method, path, { headers = {}, body } = {}) {
  try {
    const res = await fetch(`http://${fnHost}${path}`, { method, headers, body });
    const text = await res.text();
    let parsed = text;
    try {
      parsed = JSON.parse(text);
    } catch {}
    const keep = {};
    for (const h of ["content-type", "access-control-allow-origin", "access-control-allow-methods", "access-control-allow-headers",
      "access-control-allow-credentials", "access-control-max-age", "vary", "x-echo", "allow"]) {
      if (res.headers.get(h) !== null) keep[h] = res.headers.get(h);
    }
    cases[name] = { status: res.status, headers: keep, body: parsed };
  } catch (e) {
    cases[name] = { fetchError: String(e) };
  }
}

const json = { "Content-Type": "application/json" };
const base = `/${project}/us-central1`;

// --- Auth and blocking functions -------------------------------------
const claimsOf = async (u) => {
  const r = await u.getIdTokenResult(true);
  const c = r.claims;
  return { role: c.role ?? null, via: c.via ?? null, signedInVia: c.signedInVia ?? null, n: c.n ?? null, firebase: c.firebase };
};
await sdk("auth signUp alice", async () => {
  const { user } = await createUserWithEmailAndPassword(auth, "alice@example.com", "secret123");
  vars.aliceUid = user.uid;
  return { displayName: user.displayName, disabled: undefined, claims: await claimsOf(user) };
});
await sdk("auth signIn alice", async () => {
  await signOut(auth);
  const { user } = await signInWithEmailAndPassword(auth, "alice@example.com", "secret123");
  vars.aliceToken = await user.getIdToken();
  return { displayName: user.displayName, claims: await claimsOf(user) };
});
await sdk("auth signUp blocked", async () => (await createUserWithEmailAndPassword(auth, "eve@blocked.example", "secret123")).user.uid);
await sdk("auth signUp invalid", async () => (await createUserWithEmailAndPassword(auth, "invalid@example.com", "secret123")).user.uid);
await sdk("auth signUp disabled", async () => (await createUserWithEmailAndPassword(auth, "disabled@example.com", "secret123")).user.uid);
await sdk("auth signUp nosignin", async () => (await createUserWithEmailAndPassword(auth, "nosignin@example.com", "secret123")).user.uid);
await sdk("auth signIn alice again", async () => {
  const { user } = await signInWithEmailAndPassword(auth, "alice@example.com", "secret123");
  return { uidSame: user.uid === vars.aliceUid, claims: await claimsOf(user) };
});

// --- Callables through the SDK (signed in as alice) --------------------
for (const fn of ["call1", "call2"]) {
  const c = httpsCallable(functions, fn);
  await sdk(`sdk ${fn} data`, async () => (await c({ n: 1, s: "x", list: [1, "a", null], nested: { t: true } })).data);
  await sdk(`sdk ${fn} no data`, async () => (await c()).data);
  await sdk(`sdk ${fn} HttpsError`, async () => (await c({ fail: { code: "invalid-argument", message: "bad input", details: { field: "n" } } })).data);
  await sdk(`sdk ${fn} HttpsError no details`, async () => (await c({ fail: { code: "not-found", message: "gone" } })).data);
  await sdk(`sdk ${fn} HttpsError resource-exhausted`, async () => (await c({ fail: { code: "resource-exhausted", message: "slow down" } })).data);
  await sdk(`sdk ${fn} crash`, async () => (await c({ crash: true })).data);
}
await sdk("sdk missing function", async () => (await httpsCallable(functions, "nope")({})).data);
await sdk("sdk wrong region", async () => {
  const f = getFunctions(app, "europe-west1");
  connectFunctionsEmulator(f, ...split(fnHost));
  return (await httpsCallable(f, "call2")({ r: 1 })).data;
});

// --- Streaming callables through the SDK ------------------------------
const streamOf = async (data) => {
  const r = await httpsCallable(functions, "stream2").stream(data);
  const chunks = [];
  let streamError = null;
  try {
    for await (const c of r.stream) chunks.push(c);
  } catch (e) {
    streamError = sdkError(e);
  }
  let result;
  try {
    result = { ok: await r.data };
  } catch (e) {
    result = { error: sdkError(e) };
  }
  return { chunks, streamError, result };
};
await sdk("sdk stream2 stream", () => streamOf({ n: 3 }));
await sdk("sdk stream2 stream no chunks", () => streamOf({ n: 0 }));
await sdk("sdk stream2 stream HttpsError", () => streamOf({ n: 2, fail: true }));
await sdk("sdk stream2 call", async () => (await httpsCallable(functions, "stream2")({ n: 2 })).data);
await sdk("sdk stream2 call HttpsError", async () => (await httpsCallable(functions, "stream2")({ n: 1, fail: true })).data);
await sdk("sdk call2 stream", () =>
  (async () => {
    const r = await httpsCallable(functions, "call2").stream({ s: 1 });
    const chunks = [];
    for await (const c of r.stream) chunks.push(c);
    return { chunks, data: await r.data };
  })(),
);

// --- Callables over raw HTTP ---------------------------------------
for (const fn of ["call1", "call2"]) {
  const p = `${base}/${fn}`;
  await raw(`raw ${fn} data`, "POST", p, { headers: json, body: JSON.stringify({ data: { a: [1, 2] } }) });
  await raw(`raw ${fn} null data`, "POST", p, { headers: json, body: JSON.stringify({ data: null }) });
  await raw(`raw ${fn} id token`, "POST", p, { headers: { ...json, Authorization: "Bearer " + vars.aliceToken }, body: JSON.stringify({ data: 1 }) });
  await raw(`raw ${fn} no data`, "POST", p, { headers: json, body: JSON.stringify({ other: 1 }) });
  await raw(`raw ${fn} empty body`, "POST", p, { headers: json, body: "" });
  await raw(`raw ${fn} not json`, "POST", p, { headers: json, body: "{nope" });
  await raw(`raw ${fn} text/plain`, "POST", p, { headers: { "Content-Type": "text/plain" }, body: JSON.stringify({ data: 1 }) });
  await raw(`raw ${fn} GET`, "GET", p);
  await raw(`raw ${fn} PUT`, "PUT", p, { headers: json, body: JSON.stringify({ data: 1 }) });
  await raw(`raw ${fn} HttpsError`, "POST", p, { headers: json, body: JSON.stringify({ data: { fail: { code: "already-exists", message: "twice", details: [1, "two"] } } }) });
  await raw(`raw ${fn} crash`, "POST", p, { headers: json, body: JSON.stringify({ data: { crash: 1 } }) });
  await raw(`raw ${fn} preflight`, "OPTIONS", p, {
    headers: { Origin: "http://localhost:3000", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type,authorization" },
  });
  await raw(`raw ${fn} with origin`, "POST", p, { headers: { ...json, Origin: "http://localhost:3000" }, body: JSON.stringify({ data: 2 }) });
}
// Streaming over raw HTTP: the server-sent events as the client reads
// them (text), with and without Accept: text/event-stream.
const sse = { ...json, Accept: "text/event-stream" };
await raw("raw stream2 sse", "POST", `${base}/stream2`, { headers: sse, body: JSON.stringify({ data: { n: 2 } }) });
await raw("raw stream2 sse HttpsError", "POST", `${base}/stream2`, { headers: sse, body: JSON.stringify({ data: { n: 1, fail: true } }) });
await raw("raw stream2 sse no chunks", "POST", `${base}/stream2`, { headers: sse, body: JSON.stringify({ data: {} }) });
await raw("raw stream2 plain", "POST", `${base}/stream2`, { headers: json, body: JSON.stringify({ data: { n: 2 } }) });
await raw("raw call2 sse", "POST", `${base}/call2`, { headers: sse, body: JSON.stringify({ data: 5 }) });
await raw("raw call1 sse", "POST", `${base}/call1`, { headers: sse, body: JSON.stringify({ data: 5 }) });
await raw("raw stream2 sse id token", "POST", `${base}/stream2`, {
  headers: { ...sse, Authorization: "Bearer " + vars.aliceToken }, body: JSON.stringify({ data: { n: 1 } }),
});
await raw("raw missing function", "POST", `${base}/nope`, { headers: json, body: JSON.stringify({ data: 1 }) });
await raw("raw wrong region", "POST", `/${project}/europe-west1/call2`, { headers: json, body: JSON.stringify({ data: 1 }) });
await raw("raw wrong project", "POST", `/other-project/us-central1/call2`, { headers: json, body: JSON.stringify({ data: 1 }) });

// --- HTTPS functions -------------------------------------------------
for (const fn of ["http1", "http2", "cors2"]) {
  const p = `${base}/${fn}`;
  await raw(`https ${fn} GET query`, "GET", `${p}/sub/path?x=1&y=a%20b&x=2`, { headers: { "X-Custom": "v" } });
  await raw(`https ${fn} GET root`, "GET", p);
  await raw(`https ${fn} POST json`, "POST", `${p}?q=1`, { headers: json, body: JSON.stringify({ a: 1, b: ["c"] }) });
  await raw(`https ${fn} POST urlencoded`, "POST", p, { headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: "a=1&b=two&b=three" });
  await raw(`https ${fn} POST text`, "POST", p, { headers: { "Content-Type": "text/plain" }, body: "hello text" });
  // multipart/form-data with a fixed boundary (FormData's is random):
  // neither runtime parses it, req.body is the raw bytes.
  const boundary = "----fndiffBoundary7MA4YWxkTrZu0gW";
  const form = [
    `--${boundary}`, 'Content-Disposition: form-data; name="field"', "", "value one",
    `--${boundary}`, 'Content-Disposition: form-data; name="file"; filename="a.txt"', "Content-Type: text/plain", "", "file body\nline 2",
    `--${boundary}--`, "",
  ].join("\r\n");
  await raw(`https ${fn} POST multipart`, "POST", `${p}/upload?x=1`, {
    headers: { "Content-Type": `multipart/form-data; boundary=${boundary}` }, body: form,
  });
  await raw(`https ${fn} POST multipart no boundary`, "POST", p, { headers: { "Content-Type": "multipart/form-data" }, body: "x" });
  await raw(`https ${fn} PUT octet`, "PUT", p, { headers: { "Content-Type": "application/octet-stream" }, body: "bytes\u0001" });
  await raw(`https ${fn} DELETE`, "DELETE", `${p}/x`);
  await raw(`https ${fn} status`, "GET", `${p}?status=418`);
  await raw(`https ${fn} preflight`, "OPTIONS", p, {
    headers: { Origin: "http://localhost:3000", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type" },
  });
  await raw(`https ${fn} with origin`, "GET", p, { headers: { Origin: "http://localhost:3000" } });
}

// --- Firestore triggers (client writes signed in as alice) -------------
const fields = {
  s: "text", i: 7, f: 1.5, b: true, n: null, arr: [1, "two", { three: 3 }], map: { k: "v", deep: { x: 1 } },
  ts: Timestamp.fromDate(new Date("2024-01-02T03:04:05.678Z")), geo: new GeoPoint(1.5, -2.25),
  bytes: Bytes.fromUint8Array(new Uint8Array([1, 2, 255])), ref: doc(db, "other/x"),
};
await sdk("firestore writes", async () => {
  for (const coll of ["d2", "d1"]) {
    await setDoc(doc(db, coll, "a"), fields);
    await wait(coll === "d2" ? ["created2-a", "createdAuth2-a", "written2-a-create", "writtenAuth2-a-create"] : ["create1-a", "write1-a-create"]);
    await updateDoc(doc(db, coll, "a"), { s: "changed", i: 8, map: { k: "w" }, b: deleteField() });
    await wait(coll === "d2" ? ["updated2-a", "written2-a-update", "writtenAuth2-a-update"] : ["update1-a", "write1-a-update"]);
    await deleteDoc(doc(db, coll, "a"));
  }
  await signOut(auth);
  await setDoc(doc(db, "rooms", "r1", "msgs", "m1"), { text: "hi" });
  await setDoc(doc(db, "d2", "anon"), { by: "nobody" });
  return true;
});

// --- Auth v1 triggers --------------------------------------------------
await sdk("auth delete bob", async () => {
  const { user } = await createUserWithEmailAndPassword(auth, "bob@example.com", "secret123");
  vars.bobUid = user.uid;
  await deleteUser(user);
  return true;
});

const expected = [
  "created2-a", "updated2-a", "deleted2-a", "written2-a-create", "written2-a-update", "written2-a-delete",
  "createdAuth2-a", "writtenAuth2-a-create", "writtenAuth2-a-update", "writtenAuth2-a-delete",
  "created2-anon", "createdAuth2-anon", "written2-anon-create", "writtenAuth2-anon-create", "nested2-r1-m1",
  "create1-a", "update1-a", "delete1-a", "write1-a-create", "write1-a-update", "write1-a-delete",
  "userCreated1-alice@example.com", "userCreated1-bob@example.com", "userDeleted1-bob@example.com",
  "beforeCreate2-alice@example.com", "beforeCreate2-eve@blocked.example", "beforeCreate2-bob@example.com",
  "beforeSignIn1-alice@example.com", "beforeSignIn1-bob@example.com",
];

// seen reads the recorded payloads through the Firestore REST API as
// the owner.
async function seen() {
  const res = await fetch(`http://${fsHost}/v1/projects/${project}/databases/(default)/documents/seen?pageSize=1000`, {
    headers: { Authorization: "Bearer owner" },
  });
  const body = await res.json();
  const out = {};
  for (const d of body.documents || []) out[d.name.split("/").pop()] = JSON.parse(d.fields.json.stringValue);
  return out;
}

// firebase-tools starts a worker process for each function on its first
// event, which takes seconds on a loaded machine.
async function wait(keys, ms = 60000) {
  const end = Date.now() + ms;
  for (;;) {
    const got = await seen();
    if (keys.every((k) => k in got) || Date.now() > end) return got;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const recorded = await wait(expected);
// A moment more for deliveries that should not come (a second call).
await new Promise((r) => setTimeout(r, 500));
for (const [k, v] of Object.entries(await seen())) cases["recorded " + k] = v;
for (const k of expected) if (!(("recorded " + k) in cases)) cases["recorded " + k] = "never delivered";
writeFileSync(outFile, JSON.stringify({ vars, cases }));
process.exit(0);
