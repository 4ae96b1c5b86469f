// Drives the served messaging shim from Node (the same module a page
// imports): getToken twice on one instance, onMessage receiving a send,
// deleteToken, then the send plane's UNREGISTERED.
import { pathToFileURL } from "node:url";

const base = process.env.PYRIC_MESSAGING_URL;
const projectId = "demo-project";
const shim = await import(pathToFileURL(process.env.PYRIC_SHIM_FILE).href);

const m = shim.getMessaging({ projectId, baseUrl: base, instance: "node-instance" });
const token = await shim.getToken(m);
const again = await shim.getToken(shim.getMessaging({ projectId, baseUrl: base, instance: "node-instance" }));

const send = (message) =>
  fetch(`${base}/v1/projects/${projectId}/messages:send`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ message }),
  }).then(async (r) => ({ status: r.status, body: await r.json() }));

let resolve;
const received = new Promise((r) => (resolve = r));
const stop = shim.onMessage(m, (payload) => resolve(payload));
// The stream connects asynchronously and does not replay: send until a
// delivery arrives (bounded by the test's timeout).
let payload = null;
for (let i = 0; !payload && i < 100; i++) {
  await send({ token, notification: { title: "Hello", body: "from pyric" }, data: { attempt: String(i) } });
  payload = await Promise.race([received, new Promise((r) => setTimeout(() => r(null), 100))]);
}
stop();
const deleted = await shim.deleteToken(m);
const after = await send({ token });
console.log(JSON.stringify({ token, again, payload, deleted, after, supported: await shim.isSupported() }));
process.exit(0);
