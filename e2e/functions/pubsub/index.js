// A codebase of Pub/Sub-triggered and scheduled functions that pyric's
// end-to-end tests run (e2e/functions/pubsub_test.go): each function
// records what it received in Firestore (collection "seen") through the
// Admin SDK, so the test reads the delivery back through pyric.
const v1 = require("firebase-functions/v1");
const { onMessagePublished } = require("firebase-functions/v2/pubsub");
const { onSchedule } = require("firebase-functions/v2/scheduler");
const { initializeApp } = require("firebase-admin/app");
const { getFirestore } = require("firebase-admin/firestore");

initializeApp();
const record = (id, what) => getFirestore().collection("seen").doc(id).set(what);

// v2: the CloudEvent of a message published on "orders".
exports.onOrder = onMessagePublished("orders", async (event) => {
  const m = event.data.message;
  await record("psV2-" + m.messageId, {
    type: event.type,
    source: event.source,
    id: event.id,
    subscription: event.data.subscription,
    messageId: m.messageId,
    publishTime: m.publishTime,
    orderingKey: m.orderingKey,
    attributes: m.attributes,
    json: m.json,
  });
});

// v1: pubsub.topic().onPublish with (message, context).
exports.onLegacy = v1.pubsub.topic("legacy-topic").onPublish(async (message, context) => {
  await record("psV1-" + context.eventId, {
    text: Buffer.from(message.data, "base64").toString("utf8"),
    attributes: message.attributes,
    eventType: context.eventType,
    resource: context.resource.name,
    params: context.params,
    timestamp: context.timestamp,
  });
});

// v2 scheduled: Cloud Scheduler's request, as the event.
exports.tickV2 = onSchedule({ schedule: "every 5 minutes", timeZone: "UTC" }, async (event) => {
  await record("tickV2-" + event.scheduleTime, { jobName: event.jobName, scheduleTime: event.scheduleTime });
});

// v1 scheduled, in a time zone: the handler gets the context only.
exports.tickV1 = v1.pubsub
  .schedule("0 9 * * *")
  .timeZone("America/New_York")
  .onRun(async (context) => {
    await record("tickV1-" + context.timestamp, {
      eventType: context.eventType,
      resource: context.resource.name,
      timestamp: context.timestamp,
    });
  });
