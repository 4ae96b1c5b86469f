// The functions fnbench runs on pyric and on firebase-tools' emulator:
// a v1 callable (the round trip and the exec script's one call) and a v2
// Firestore trigger that answers each created fnbenchIn/{id} with
// fnbenchOut/{id}, written through the Admin SDK (the trigger latency).
const v1 = require("firebase-functions/v1");
const { onDocumentCreated } = require("firebase-functions/v2/firestore");
const { initializeApp } = require("firebase-admin/app");
const { getFirestore } = require("firebase-admin/firestore");

initializeApp();

exports.add = v1.https.onCall((data, context) => {
  if (typeof data.a !== "number" || typeof data.b !== "number") {
    throw new v1.https.HttpsError("invalid-argument", "a and b must be numbers");
  }
  return { sum: data.a + data.b, uid: context.auth ? context.auth.uid : null };
});

exports.answer = onDocumentCreated("fnbenchIn/{id}", async (event) => {
  await getFirestore().collection("fnbenchOut").doc(event.params.id).set({ n: event.data.get("n") });
});
