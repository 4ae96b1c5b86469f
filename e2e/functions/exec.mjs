// Run by `pyric exec` in e2e/functions (TestExecFunctions): finds the
// functions port as a script under `firebase emulators:exec` does (the
// hub's /emulators; pyric also sets PYRIC_FUNCTIONS_URL), calls a
// callable with firebase@12's connectFunctionsEmulator + httpsCallable,
// and prints one JSON line: the variables it was given and the result.
import { initializeApp } from "firebase/app";
import { getFunctions, connectFunctionsEmulator, httpsCallable } from "firebase/functions";

const env = process.env;
const hub = await (await fetch(`http://${env.FIREBASE_EMULATOR_HUB}/emulators`)).json();
const project = env.GCLOUD_PROJECT;
const app = initializeApp({ projectId: project, apiKey: "fake-api-key" });
const fns = getFunctions(app);
connectFunctionsEmulator(fns, hub.functions.host, hub.functions.port);
const res = await httpsCallable(fns, "add")({ a: 2, b: 40 });
const vars = {};
for (const k of ["GCLOUD_PROJECT", "FIREBASE_CONFIG", "FIREBASE_EMULATOR_HUB", "FIRESTORE_EMULATOR_HOST", "FIREBASE_AUTH_EMULATOR_HOST", "PYRIC_FUNCTIONS_URL"]) {
  vars[k] = env[k] ?? null;
}
console.log(JSON.stringify({ hubFunctions: hub.functions, vars, result: res.data }));
