// Drives a functions port with the firebase@12 client SDK, unchanged:
// connectFunctionsEmulator + httpsCallable, with an Auth-emulator user.
// Env: PROJECT, FUNCTIONS_HOST, FUNCTIONS_PORT, AUTH_URL (http://host:port).
// Prints one {"step","ok","got","error"} line per step.
import { initializeApp } from "firebase/app";
import { getAuth, connectAuthEmulator, createUserWithEmailAndPassword } from "firebase/auth";
import { getFunctions, connectFunctionsEmulator, httpsCallable } from "firebase/functions";

const env = process.env;
const app = initializeApp({ projectId: env.PROJECT, apiKey: "fake-api-key" });
const fns = getFunctions(app);
connectFunctionsEmulator(fns, env.FUNCTIONS_HOST, Number(env.FUNCTIONS_PORT));
const fnsEU = getFunctions(app, "europe-west1");
connectFunctionsEmulator(fnsEU, env.FUNCTIONS_HOST, Number(env.FUNCTIONS_PORT));
const auth = getAuth(app);
connectAuthEmulator(auth, env.AUTH_URL, { disableWarnings: true });

async function step(name, fn) {
  try {
    const got = await fn();
    console.log(JSON.stringify({ step: name, ok: true, got: got === undefined ? null : got }));
  } catch (e) {
    console.log(JSON.stringify({ step: name, ok: false, error: String((e && e.stack) || e) }));
  }
}

// callErr returns what the client SDK reports for a failed call.
async function callErr(f, data) {
  try {
    const r = await f(data);
    return { unexpectedResult: r.data };
  } catch (e) {
    return { code: e.code, message: e.message, details: e.details === undefined ? null : e.details };
  }
}

await step("callable-unauthenticated", () => callErr(httpsCallable(fns, "whoami"), { x: 1 }));
await step("callable-v1-httpserror", () => callErr(httpsCallable(fns, "add"), { a: 1, b: "x" }));
await step("callable-v1-result", async () => (await httpsCallable(fns, "add")({ a: 2, b: 3 })).data);
await step("callable-plain-error", () => callErr(httpsCallable(fns, "callableThrows"), {}));
await step("callable-missing", () => callErr(httpsCallable(fns, "nope"), {}));
await step("callable-wrong-region", () => callErr(httpsCallable(fnsEU, "whoami"), {}));
await step("callable-timeout-is-deadline", () => callErr(httpsCallable(fns, "hangs"), {}));
await step("callable-secret", async () => (await httpsCallable(fns, "secret")()).data);
await step("callable-ts", async () => (await httpsCallable(fns, "shout")({ text: "hey" })).data);
await step("sign-up", async () => {
  const cred = await createUserWithEmailAndPassword(auth, "fn-user@example.com", "secret-pass");
  return { email: cred.user.email };
});
await step("callable-authenticated", async () => {
  const r = await httpsCallable(fns, "whoami")({ hello: "world" });
  return { uidMatches: r.data.uid === auth.currentUser.uid, email: r.data.email, data: r.data.data };
});
await step("callable-v1-auth", async () => {
  const r = await httpsCallable(fns, "add")({ a: 1, b: 1 });
  return { sum: r.data.sum, uidMatches: r.data.uid === auth.currentUser.uid };
});
await step("callable-admin-write", async () => (await httpsCallable(fns, "writeDoc")({ id: "d1", value: 42 })).data);
process.exit(0);
