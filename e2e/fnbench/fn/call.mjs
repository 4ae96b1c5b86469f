// The script fnbench runs under `pyric exec` and `firebase
// emulators:exec`: it finds the functions emulator through the hub, as a
// CI script does, makes one callable call and prints its answer.
const env = process.env;
const hub = await (await fetch(`http://${env.FIREBASE_EMULATOR_HUB}/emulators`)).json();
const { host, port } = hub.functions;
const res = await fetch(`http://${host.includes(":") ? `[${host}]` : host}:${port}/${env.GCLOUD_PROJECT}/us-central1/add`, {
  method: "POST",
  headers: { "Content-Type": "application/json" },
  body: JSON.stringify({ data: { a: 1, b: 2 } }),
});
const body = await res.text();
console.log(`fnbench-call ${res.status} ${body.trim()}`);
process.exit(res.status === 200 ? 0 : 1);
