// A codebase of event-triggered and blocking functions that pyric's
// end-to-end trigger tests run: each function records what it received
// in Firestore (collection "seen"), through the Admin SDK, so the test
// reads the delivery back through pyric.
const v1 = require("firebase-functions/v1");
const { onDocumentCreated, onDocumentUpdated, onDocumentWrittenWithAuthContext } = require("firebase-functions/v2/firestore");
const { onValueCreated } = require("firebase-functions/v2/database");
const { onObjectFinalized } = require("firebase-functions/v2/storage");
const { beforeUserCreated } = require("firebase-functions/v2/identity");
const { HttpsError } = require("firebase-functions/v2/https");
const { initializeApp } = require("firebase-admin/app");
const { getFirestore, FieldValue } = require("firebase-admin/firestore");

initializeApp();
const db = () => getFirestore();

// record writes what a function saw to seen/{id}.
const record = (id, what) => db().collection("seen").doc(id).set({ ...what, at: FieldValue.serverTimestamp() });

// The write → trigger → writes chain: a created order is totalled, in
// Firestore and in the Realtime Database.
exports.totalOrder = onDocumentCreated("orders/{orderId}", async (event) => {
  const order = event.data.data();
  const total = order.items.reduce((sum, it) => sum + it.price * it.qty, 0);
  await require("firebase-admin/database").getDatabase().ref("totals/" + event.params.orderId).set(total);
  await record("totalOrder-" + event.params.orderId, {
    type: event.type,
    source: event.source,
    subject: event.subject || null,
    document: event.document,
    params: event.params,
    total: order.items.reduce((sum, it) => sum + it.price * it.qty, 0),
  });
});

// Updates see both versions.
exports.orderUpdated = onDocumentUpdated("orders/{orderId}", async (event) => {
  await record("orderUpdated-" + event.params.orderId, {
    before: event.data.before.get("status") || null,
    after: event.data.after.get("status") || null,
  });
});

// authType/authId of the writer.
exports.auditWrites = onDocumentWrittenWithAuthContext("audited/{id}", async (event) => {
  await record("auditWrites-" + event.params.id, {
    authType: event.authType,
    authId: event.authId || null,
    exists: event.data.after.exists,
  });
});

// v1 Firestore: onWrite with change and context.
exports.v1Write = v1.firestore.document("legacy/{docId}").onWrite(async (change, context) => {
  await record("v1Write-" + context.params.docId, {
    eventType: context.eventType,
    resource: context.resource.name || context.resource,
    before: change.before.exists,
    after: change.after.exists ? change.after.data() : null,
  });
});

// Realtime Database v2.
exports.scoreCreated = onValueCreated("/scores/{player}", async (event) => {
  await record("scoreCreated-" + event.params.player, {
    value: event.data.val(),
    ref: event.ref,
    instance: event.instance,
  });
});

// Realtime Database v1.
exports.v1Score = v1.database.ref("/v1scores/{player}").onCreate(async (snap, context) => {
  await record("v1Score-" + context.params.player, { value: snap.val(), key: snap.key });
});

// Cloud Storage v2.
exports.uploaded = onObjectFinalized(async (event) => {
  const o = event.data;
  await record("uploaded-" + o.name.replace(/\//g, "_"), {
    name: o.name,
    bucket: o.bucket,
    contentType: o.contentType || null,
    size: String(o.size),
  });
});

// Auth v1: a new user gets a profile document.
exports.newUser = v1.auth.user().onCreate(async (user) => {
  await record("newUser-" + user.uid, { email: user.email || null });
});

// A blocking function: one domain is refused, every other user is
// marked before the account exists.
exports.checkDomain = beforeUserCreated((event) => {
  const email = event.data.email || "";
  if (email.endsWith("@blocked.example")) {
    throw new HttpsError("permission-denied", "Sign-ups from blocked.example are closed.");
  }
  return { displayName: "Checked " + email.split("@")[0], customClaims: { role: "member" } };
});

// page answers Hosting's rewrites: what the function saw of the request.
exports.page = require("firebase-functions/v2/https").onRequest((req, res) => {
  res.json({ path: req.path, url: req.url, forwardedHost: req.get("x-forwarded-host") || null });
});

// A task queue: processTask runs what enqueueWork put on its queue
// through the Admin SDK (CLOUD_TASKS_EMULATOR_HOST). A task asking to
// fail once throws on its first attempt and is retried.
const { onTaskDispatched } = require("firebase-functions/v2/tasks");
const { getFunctions } = require("firebase-admin/functions");

exports.processTask = onTaskDispatched(
  { retryConfig: { maxAttempts: 3, minBackoffSeconds: 0.2 }, rateLimits: { maxConcurrentDispatches: 4 } },
  async (req) => {
    if (req.data.failOnce && req.retryCount === 0) {
      throw new Error("first attempt fails on purpose");
    }
    await record("processTask-" + req.id, {
      queueName: req.queueName,
      id: req.id,
      retryCount: req.retryCount,
      executionCount: req.executionCount,
      previousResponse: req.previousResponse === undefined ? null : req.previousResponse,
      n: req.data.n,
    });
  },
);

exports.enqueueWork = require("firebase-functions/v2/https").onRequest(async (req, res) => {
  const queue = getFunctions().taskQueue("processTask");
  const opts = { id: req.query.id };
  if (req.query.delay) {
    opts.scheduleDelaySeconds = Number(req.query.delay);
  }
  try {
    await queue.enqueue({ n: Number(req.query.n || 0), failOnce: req.query.failOnce === "1" }, opts);
    res.json({ enqueued: req.query.id });
  } catch (err) {
    res.status(409).json({ code: err.code || null, message: err.message });
  }
});

// A handler that throws: the failure is reported, and with retry off
// the event is not delivered again.
exports.failingTrigger = onDocumentCreated("failing/{id}", async () => {
  throw new Error("failingTrigger refuses " + Date.now());
});

// A trigger on a named database fires for that database's writes only.
exports.namedDbCreated = onDocumentCreated({ document: "named/{id}", database: "other" }, async (event) => {
  await record("namedDbCreated-" + event.params.id, { database: event.database, document: event.document });
});

// Eventarc custom events: publishEvent publishes the request's events
// through the Admin SDK (CLOUD_EVENTARC_EMULATOR_HOST); orderShipped
// (default channel, filtered on an extension attribute) and auditPing
// (a channel of its own) record the CloudEvent they receive.
const { onCustomEventPublished } = require("firebase-functions/v2/eventarc");
const { getEventarc } = require("firebase-admin/eventarc");

// Eventarc's client sends an OAuth access token; offline there is none
// to fetch, so the publisher's app hands the emulators' "owner".
const publisher = initializeApp(
  { projectId: process.env.GCLOUD_PROJECT, credential: { getAccessToken: async () => ({ access_token: "owner", expires_in: 3600 }) } },
  "publisher",
);

exports.publishEvent = require("firebase-functions/v2/https").onRequest(async (req, res) => {
  const eventarc = getEventarc(publisher);
  const channel = req.body.channel ? eventarc.channel(req.body.channel) : eventarc.channel();
  try {
    await channel.publish(req.body.events);
    res.json({ published: req.body.events.length });
  } catch (err) {
    res.status(400).json({ code: err.code || null, message: err.message });
  }
});

exports.orderShipped = onCustomEventPublished(
  { eventType: "com.example.order.shipped", filters: { carrier: "ups" } },
  async (event) => {
    await record("orderShipped-" + event.id, { event: JSON.parse(JSON.stringify(event)) });
  },
);

exports.auditPing = onCustomEventPublished({ eventType: "com.example.ping", channel: "audit" }, async (event) => {
  await record("auditPing-" + event.id, { event: JSON.parse(JSON.stringify(event)) });
});

// Firebase Alerts arrive on Eventarc's native route
// (POST /google/publishEvents): fatalIssue records the CloudEvent.
const { onNewFatalIssuePublished } = require("firebase-functions/v2/alerts/crashlytics");

exports.fatalIssue = onNewFatalIssuePublished(async (event) => {
  await record("fatalIssue-" + event.id, { event: JSON.parse(JSON.stringify(event)), issueId: event.data.payload.issue.id });
});

// provision writes to Cloud Storage and Auth through the Admin SDK for a
// new account document: the writes its invocation makes in every service.
exports.provision = onDocumentCreated("accounts/{uid}", async (event) => {
  const uid = event.params.uid;
  await require("firebase-admin/storage").getStorage().bucket().file("accounts/" + uid + "/welcome.txt").save("welcome " + uid, { contentType: "text/plain" });
  await require("firebase-admin/auth").getAuth().createUser({ uid, email: uid + "@provisioned.example" });
  await require("firebase-admin/auth").getAuth().setCustomUserClaims(uid, { plan: "pro" });
  await record("provision-" + uid, { done: true });
});

// slowRecord takes its time before recording: the crash test kills pyric
// while it runs, and expects the delivery to be made again after the
// restart (at least once, as production delivers).
exports.slowRecord = onDocumentCreated("slow/{id}", async (event) => {
  console.log("slowRecord started " + event.params.id);
  await new Promise((r) => setTimeout(r, 2500));
  await record("slowRecord-" + event.params.id, { value: event.data.get("value") });
});
