// Real firebase-functions handlers for the Go tests of functions/trigger
// and server/auth. Modes:
//   node sdk-harness.cjs manifest          print {name: __endpoint} of every function below
//   node sdk-harness.cjs invoke FILE       FILE: [{"fn": name, "payload": {...}}]; print what each
//                                      handler saw ([{"fn", "seen"} | {"fn", "error"}])
//   node sdk-harness.cjs serve             serve the blocking functions over HTTP; print the port
// It runs under e2e/functions' own Node 22 and node_modules
// (e2etest.FunctionsSDKCommand). Environment as the Emulator Suite sets it
// (GCLOUD_PROJECT, FIREBASE_CONFIG, FIREBASE_DEBUG_FEATURES, emulator
// hosts) comes from the Go test.
"use strict";
const fs = require("fs");
const v2 = require("firebase-functions/v2");
const v1 = require("firebase-functions/v1");
const { HttpsError } = require("firebase-functions/v2/identity");

let seen;
const rec = (v) => {
  seen = v;
};
const iso = (t) => (t ? t.toDate().toISOString() : null);
const snap = (s) => ({ exists: s.exists, data: s.exists ? s.data() : null, id: s.id, path: s.ref.path, createTime: iso(s.createTime), updateTime: iso(s.updateTime) });

const fns = {
  fsCreated: v2.firestore.onDocumentCreated("users/{uid}", (e) =>
    rec({ params: e.params, doc: snap(e.data), document: e.document, database: e.database, source: e.source, type: e.type })),
  fsUpdatedAuth: v2.firestore.onDocumentUpdatedWithAuthContext("rooms/{room}/msgs/{msg}", (e) =>
    rec({ params: e.params, before: snap(e.data.before), after: snap(e.data.after), authType: e.authType, authId: e.authId })),
  fsDeleted: v2.firestore.onDocumentDeleted("users/{uid}", (e) => rec({ params: e.params, doc: snap(e.data) })),
  fsWrittenDeep: v2.firestore.onDocumentWritten({ document: "logs/{rest=**}", retry: true, region: "europe-west1" }, (e) =>
    rec({ params: e.params, before: snap(e.data.before), after: snap(e.data.after) })),
  fsV1Write: v1.firestore.document("users/{uid}").onWrite((change, ctx) =>
    rec({ before: snap(change.before), after: snap(change.after), params: ctx.params, eventType: ctx.eventType, resource: ctx.resource })),
  dbCreated: v2.database.onValueCreated("/cases/{caseId}/items/{itemId}", (e) =>
    rec({ params: e.params, val: e.data.val(), key: e.data.key, ref: e.ref, authType: e.authType, authId: e.authId, instance: e.instance, numChildren: e.data.numChildren() })),
  dbWritten: v2.database.onValueWritten("/status/{who}", (e) =>
    rec({ params: e.params, before: e.data.before.val(), after: e.data.after.val(), beforeExists: e.data.before.exists(), afterExists: e.data.after.exists(), authType: e.authType, authId: e.authId })),
  dbV1Update: v1.database.ref("/users/{uid}").onUpdate((change, ctx) =>
    rec({ before: change.before.val(), after: change.after.val(), params: ctx.params, authType: ctx.authType, auth: ctx.auth, eventType: ctx.eventType })),
  stFinalized: v2.storage.onObjectFinalized((e) =>
    rec({ name: e.data.name, bucket: e.bucket, size: e.data.size, generation: e.data.generation, metadata: e.data.metadata, contentType: e.data.contentType, subject: e.subject })),
  stV1Delete: v1.storage.object().onDelete((obj, ctx) => rec({ name: obj.name, generation: obj.generation, resource: ctx.resource, eventType: ctx.eventType })),
  authV1Create: v1.auth.user().onCreate((user, ctx) =>
    rec({ uid: user.uid, email: user.email, emailVerified: user.emailVerified, claims: user.customClaims, creationTime: user.metadata.creationTime, providers: user.providerData.map((p) => p.providerId), eventType: ctx.eventType, resource: ctx.resource })),
  authV2Deleted: v2.identity.onUserDeleted
    ? v2.identity.onUserDeleted((e) => rec({ uid: e.data.uid, email: e.data.email }))
    : undefined,
};

// Blocking functions: the request decides what they do.
const blocking = {
  beforeCreate: v2.identity.beforeUserCreated((e) => {
    if (e.data.email && e.data.email.endsWith("@blocked.example")) {
      throw new HttpsError("permission-denied", "Sign-ups from blocked.example are not allowed.");
    }
    return { displayName: "Created " + e.data.email, customClaims: { tier: "gold" } };
  }),
  beforeSignIn: v2.identity.beforeUserSignedIn((e) => ({ sessionClaims: { signedInWith: e.authType === "USER" ? e.eventType : "?" } })),
  beforeSendEmail: v2.identity.beforeEmailSent((e) => {
    if (e.additionalUserInfo.email.startsWith("deny")) {
      throw new HttpsError("permission-denied", `no ${e.emailType} mail to ${e.additionalUserInfo.email}`);
    }
  }),
  beforeSendSms: v2.identity.beforeSmsSent((e) => {
    if (e.additionalUserInfo.phoneNumber.endsWith("99")) {
      throw new HttpsError("permission-denied", `no ${e.smsType} SMS to ${e.additionalUserInfo.phoneNumber}`);
    }
  }),
};

function manifest() {
  const out = {};
  for (const [k, f] of Object.entries(fns)) if (f) out[k] = f.__endpoint;
  for (const [k, f] of Object.entries(blocking)) out[k] = f.__endpoint;
  process.stdout.write(JSON.stringify(out));
}

async function invoke(file) {
  const items = JSON.parse(fs.readFileSync(file, "utf8"));
  const out = [];
  for (const it of items) {
    seen = undefined;
    try {
      const f = fns[it.fn];
      if (!f) throw new Error("no function " + it.fn);
      if (f.__endpoint.platform === "gcfv1") await f(it.payload.data, it.payload.context);
      else {
        // pyric's harness: the CloudEvents JSON form's binary data as a Buffer.
        const ev = { ...it.payload };
        if (typeof ev.data_base64 === "string" && ev.data === undefined) {
          ev.data = Buffer.from(ev.data_base64, "base64");
          delete ev.data_base64;
        }
        await f(ev);
      }
      out.push({ fn: it.fn, seen: seen === undefined ? null : JSON.parse(JSON.stringify(seen)) });
    } catch (err) {
      out.push({ fn: it.fn, error: String(err && err.stack ? err.stack : err) });
    }
  }
  process.stdout.write(JSON.stringify(out));
}

// serve answers POST /{name} with the named blocking function, in express
// as the functions runtime serves it.
function serve() {
  const express = require("express");
  const app = express();
  app.use(express.json());
  app.post("/:name", (req, res) => {
    const f = blocking[req.params.name];
    if (!f) return res.status(404).end();
    return f(req, res);
  });
  const server = app.listen(0, "127.0.0.1", () => process.stdout.write(String(server.address().port) + "\n"));
  process.stdin.on("end", () => process.exit(0));
  process.stdin.resume();
}

const mode = process.argv[2];
if (mode === "manifest") manifest();
else if (mode === "invoke") invoke(process.argv[3]).catch((e) => {
  console.error(e);
  process.exit(1);
});
else if (mode === "serve") serve();
else {
  console.error("usage: harness.cjs manifest | invoke FILE | serve");
  process.exit(2);
}
