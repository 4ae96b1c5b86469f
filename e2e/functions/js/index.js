// A JavaScript codebase pyric's end-to-end tests run: v1 and v2 HTTPS and
// callable functions, one that writes through the Admin SDK, and the
// misbehaving ones of the isolation tests.
const v1 = require("firebase-functions/v1");
const { onRequest, onCall, HttpsError } = require("firebase-functions/v2/https");
const { onDocumentCreated } = require("firebase-functions/v2/firestore");
const { defineString, defineSecret } = require("firebase-functions/params");
const logger = require("firebase-functions/logger");
const { initializeApp } = require("firebase-admin/app");
const { getFirestore } = require("firebase-admin/firestore");

initializeApp();

const greeting = defineString("GREETING");
const apiKey = defineSecret("API_KEY");

// hello echoes what it saw of the request.
exports.hello = onRequest((req, res) => {
  logger.info("hello called", { path: req.path });
  res.json({
    method: req.method,
    path: req.path,
    url: req.url,
    query: req.query,
    body: req.body,
    rawBody: req.rawBody ? req.rawBody.toString("base64") : null,
    contentType: req.get("content-type") || null,
    greeting: greeting.value(),
    env: {
      FUNCTIONS_EMULATOR: process.env.FUNCTIONS_EMULATOR,
      GCLOUD_PROJECT: process.env.GCLOUD_PROJECT,
      FIREBASE_CONFIG: process.env.FIREBASE_CONFIG,
      FIRESTORE_EMULATOR_HOST: process.env.FIRESTORE_EMULATOR_HOST,
      FIREBASE_AUTH_EMULATOR_HOST: process.env.FIREBASE_AUTH_EMULATOR_HOST,
      K_SERVICE: process.env.K_SERVICE,
      FUNCTION_TARGET: process.env.FUNCTION_TARGET,
      TZ: process.env.TZ,
      LOCAL_ONLY: process.env.LOCAL_ONLY,
      CLOUD_RUNTIME_CONFIG: process.env.CLOUD_RUNTIME_CONFIG,
    },
  });
});

// helloV1 is the same through the v1 API, in another region.
exports.helloV1 = v1.region("europe-west1").https.onRequest((req, res) => {
  console.log("v1 hello");
  res.status(201).send(`v1 ${req.method} ${req.url}`);
});

// whoami answers the caller's uid and token claims.
exports.whoami = onCall((request) => {
  if (!request.auth) {
    throw new HttpsError("unauthenticated", "sign in first", { hint: "auth" });
  }
  return { uid: request.auth.uid, email: request.auth.token.email || null, data: request.data };
});

// add is a v1 callable.
exports.add = v1.https.onCall((data, context) => {
  if (typeof data.a !== "number" || typeof data.b !== "number") {
    throw new v1.https.HttpsError("invalid-argument", "a and b must be numbers", { got: data });
  }
  return { sum: data.a + data.b, uid: context.auth ? context.auth.uid : null };
});

// secret reports whether the .secret.local value reached the function.
exports.secret = onCall({ secrets: [apiKey] }, () => ({ apiKey: apiKey.value() }));

// writeDoc writes a Firestore document through the Admin SDK.
exports.writeDoc = onCall(async (request) => {
  const ref = getFirestore().collection("fromFunctions").doc(request.data.id);
  await ref.set({ by: "writeDoc", value: request.data.value });
  const snap = await ref.get();
  return { written: snap.data() };
});

// group members are named group-name.
exports.group = {
  inner: onRequest((req, res) => res.send("inner")),
};

// onNote records its event (the lead's triggers deliver to it).
exports.onNote = onDocumentCreated("notes/{id}", async (event) => {
  logger.info("note", event.params.id);
  if (event.data && event.data.get && event.data.get("boom")) {
    throw new Error("boom in onNote");
  }
});

// publishDraft copies a created draft to published/: the Studio's
// Traffic shows the draft's write → this run → its write as one chain.
exports.publishDraft = onDocumentCreated("drafts/{id}", async (event) => {
  await getFirestore().collection("published").doc(event.params.id).set({ text: event.data.get("text") || "" });
});

// quick answers at once within a one-second timeout (the debugger test
// holds it at a breakpoint for longer).
exports.quick = onRequest({ timeoutSeconds: 1 }, (req, res) => {
  res.send("quick");
});

// nap answers after 200 ms with how many naps were running in this
// worker when it started: more than one means invocations overlapped.
let napping = 0;
exports.nap = onRequest(async (req, res) => {
  napping++;
  const concurrent = napping;
  await new Promise((resolve) => setTimeout(resolve, 200));
  napping--;
  res.json({ concurrent });
});

// The isolation cases.
exports.throws = onRequest(() => {
  throw new Error("thrown on purpose");
});
exports.rejects = onRequest(async () => {
  await Promise.resolve();
  throw new Error("rejected on purpose");
});
exports.hangs = onRequest({ timeoutSeconds: 2 }, () => {
  // never answers
});
exports.exits = onRequest(() => {
  process.exit(3);
});
exports.callableThrows = onCall(() => {
  throw new Error("plain error in a callable");
});

// slowEvent takes a while, so another invocation can crash its worker
// under it.
exports.slowEvent = onDocumentCreated("slow/{id}", async () => {
  logger.info("slowEvent started");
  await new Promise((resolve) => setTimeout(resolve, 1500));
  logger.info("slowEvent done");
});

// pidV1 and pidV2 answer their worker's process id and when they ran: a
// v1 function takes one request per instance, a v2 one up to its
// concurrency.
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const ran = async (req, res) => {
  const start = Date.now();
  await pause(1000);
  res.json({ pid: process.pid, start, end: Date.now() });
};
exports.pidV1 = v1.https.onRequest(ran);
exports.pidV2 = onRequest(ran);

// customThrows is an event function that throws.
const { onCustomEventPublished } = require("firebase-functions/v2/eventarc");
exports.customThrows = onCustomEventPublished("pyric.test.v1", (event) => {
  throw new Error(`custom event ${event.id} threw`);
});
