// The functions project e2e/fndiff runs on pyric and on firebase-tools'
// emulator: every function returns, answers or records (in Firestore,
// seen/{key}, as one JSON string) exactly what it received, so the test
// compares the two deliveries field by field.
const v1 = require("firebase-functions/v1");
const https = require("firebase-functions/v2/https");
const fs2 = require("firebase-functions/v2/firestore");
const identity = require("firebase-functions/v2/identity");
const { initializeApp } = require("firebase-admin/app");
const { getFirestore, Timestamp, GeoPoint, DocumentReference } = require("firebase-admin/firestore");

initializeApp();

// plain turns Firestore values into JSON that keeps their type.
function plain(v) {
  if (v === null || typeof v !== "object") return v;
  if (v instanceof Timestamp) return { timestamp: v.toDate().toISOString() };
  if (v instanceof GeoPoint) return { geo: [v.latitude, v.longitude] };
  if (v instanceof DocumentReference) return { ref: v.path };
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return { bytes: Buffer.from(v).toString("base64") };
  if (Array.isArray(v)) return v.map(plain);
  const out = {};
  for (const k of Object.keys(v).sort()) out[k] = plain(v[k]);
  return out;
}

// time reads a snapshot's time, which the Admin SDK refuses for some
// snapshots ("Called 'readTime' on a local document").
function time(s, which) {
  try {
    const t = s[which];
    return t ? t.toDate().toISOString() : null;
  } catch (e) {
    return "throws: " + e.message;
  }
}

// snap is what a function sees of a document snapshot.
function snap(s) {
  if (!s) return s === undefined ? "undefined" : null;
  return {
    exists: s.exists,
    id: s.id,
    path: s.ref.path,
    data: s.exists ? plain(s.data()) : null,
    createTime: time(s, "createTime"),
    updateTime: time(s, "updateTime"),
    readTime: time(s, "readTime"),
  };
}

const change = (c) => ({ before: snap(c.before), after: snap(c.after) });

const record = (key, what) => getFirestore().collection("seen").doc(key).set({ json: JSON.stringify(what) });

// kind names a write from its change: create, update or delete.
const kind = (c) => (!c.before.exists ? "create" : !c.after.exists ? "delete" : "update");

// v2 events: every field as it arrives but data (and the snapshot and
// change firebase-functions adds beside it for v1-style code, whose
// JSON is the Admin SDK's internals), data as snapshots.
function v2event(e, isChange) {
  const out = { keys: Object.keys(e).sort() };
  for (const k of Object.keys(e)) if (k !== "data" && k !== "change" && k !== "snapshot") out[k] = e[k];
  out.data = isChange ? change(e.data) : snap(e.data);
  return out;
}

const doc2 = "d2/{docId}";
exports.created2 = fs2.onDocumentCreated(doc2, (e) => record("created2-" + e.params.docId, v2event(e, false)));
exports.updated2 = fs2.onDocumentUpdated(doc2, (e) => record("updated2-" + e.params.docId, v2event(e, true)));
exports.deleted2 = fs2.onDocumentDeleted(doc2, (e) => record("deleted2-" + e.params.docId, v2event(e, false)));
exports.written2 = fs2.onDocumentWritten(doc2, (e) => record(`written2-${e.params.docId}-${kind(e.data)}`, v2event(e, true)));
exports.createdAuth2 = fs2.onDocumentCreatedWithAuthContext(doc2, (e) => record("createdAuth2-" + e.params.docId, v2event(e, false)));
exports.writtenAuth2 = fs2.onDocumentWrittenWithAuthContext(doc2, (e) =>
  record(`writtenAuth2-${e.params.docId}-${kind(e.data)}`, v2event(e, true)),
);
// A nested wildcard pattern.
exports.nested2 = fs2.onDocumentCreated("rooms/{room}/msgs/{msg}", (e) => record(`nested2-${e.params.room}-${e.params.msg}`, v2event(e, false)));

// v1 events: the snapshot or change and the whole context.
const doc1 = v1.firestore.document("d1/{docId}");
const ctx = (c) => JSON.parse(JSON.stringify(c));
exports.create1 = doc1.onCreate((s, c) => record("create1-" + c.params.docId, { snap: snap(s), context: ctx(c) }));
exports.update1 = doc1.onUpdate((ch, c) => record("update1-" + c.params.docId, { change: change(ch), context: ctx(c) }));
exports.delete1 = doc1.onDelete((s, c) => record("delete1-" + c.params.docId, { snap: snap(s), context: ctx(c) }));
exports.write1 = doc1.onWrite((ch, c) => record(`write1-${c.params.docId}-${kind(ch)}`, { change: change(ch), context: ctx(c) }));

// Callables answer what they received; data.fail throws that HttpsError,
// data.crash throws a plain Error.
function callable(d, auth, app, extra) {
  if (d && d.fail) throw new https.HttpsError(d.fail.code, d.fail.message, d.fail.details);
  if (d && d.crash) throw new Error("crashed on purpose");
  return { data: d === undefined ? "undefined" : d, auth: auth ? { uid: auth.uid, token: auth.token } : null, app: app || null, ...extra };
}
exports.call2 = https.onCall((req) =>
  callable(req.data, req.auth, req.app, {
    acceptsStreaming: req.acceptsStreaming,
    instanceIdToken: req.instanceIdToken || null,
    method: req.rawRequest.method,
    contentType: req.rawRequest.get("content-type") || null,
  }),
);
exports.call1 = v1.https.onCall((data, context) =>
  callable(data, context.auth, context.app, {
    instanceIdToken: context.instanceIdToken || null,
    method: context.rawRequest.method,
    contentType: context.rawRequest.get("content-type") || null,
  }),
);

// A streaming callable: it sends data.n chunks (sendChunk says whether
// each reached a streaming client), then answers, or throws data.fail.
// The pauses keep each chunk its own network write on both servers: the
// JS SDK's stream drops the chunks it has not yet handed out when an
// error arrives with them, which would make the case depend on timing.
const pause = () => new Promise((r) => setTimeout(r, 50));
exports.stream2 = https.onCall(async (req, res) => {
  const n = (req.data && req.data.n) || 0;
  const sent = [];
  for (let i = 0; i < n; i++) {
    sent.push(res ? await res.sendChunk({ i, of: n }) : "no response");
    await pause();
  }
  if (req.data && req.data.fail) throw new https.HttpsError("aborted", "stopped after " + n, { at: n });
  return { acceptsStreaming: req.acceptsStreaming, sent, hasResponse: res !== undefined };
});

// HTTPS functions answer the request they saw; ?status=N answers that
// status with a text body.
function echo(req, res) {
  if (req.query.status) {
    res.status(Number(req.query.status)).send("status " + req.query.status);
    return;
  }
  res.set("x-echo", "1").json({
    method: req.method,
    path: req.path,
    url: req.url,
    originalUrl: req.originalUrl,
    query: req.query,
    headers: req.headers,
    body: req.body === undefined ? "undefined" : Buffer.isBuffer(req.body) ? { buffer: req.body.toString() } : req.body,
    rawBody: req.rawBody === undefined ? "undefined" : req.rawBody.toString(),
  });
}
exports.http2 = https.onRequest(echo);
exports.cors2 = https.onRequest({ cors: true }, echo);
exports.http1 = v1.https.onRequest(echo);

// Auth v1 triggers.
exports.userCreated1 = v1.auth.user().onCreate((u, c) => record("userCreated1-" + u.email, { user: u.toJSON(), context: ctx(c) }));
exports.userDeleted1 = v1.auth.user().onDelete((u, c) => record("userDeleted1-" + u.email, { user: u.toJSON(), context: ctx(c) }));

// Blocking functions (one per event type, as production and the emulator
// allow): a v2 beforeUserCreated and a v1 beforeSignIn.
exports.beforeCreate2 = identity.beforeUserCreated(async (e) => {
  const email = e.data.email || "";
  await record("beforeCreate2-" + email, { event: JSON.parse(JSON.stringify(e)) });
  if (email.endsWith("@blocked.example")) {
    throw new https.HttpsError("permission-denied", "Sign-ups from blocked.example are closed.");
  }
  if (email.startsWith("invalid")) {
    throw new https.HttpsError("invalid-argument", "no such thing", { field: "email" });
  }
  return {
    displayName: "Created " + email.split("@")[0],
    customClaims: { role: "member", via: "v2" },
    disabled: email.startsWith("disabled"),
  };
});
exports.beforeSignIn1 = v1.auth.user().beforeSignIn(async (u, c) => {
  const email = u.email || "";
  await record("beforeSignIn1-" + email, { user: JSON.parse(JSON.stringify(u)), context: ctx(c) });
  if (email.startsWith("nosignin")) {
    throw new v1.https.HttpsError("unauthenticated", "Sign-ins are closed for " + email);
  }
  return { sessionClaims: { signedInVia: "v1", n: 1 } };
});
