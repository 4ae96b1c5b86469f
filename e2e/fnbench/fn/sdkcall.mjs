// The client a user has: fnbench times callable round trips through the
// JS SDK (httpsCallable of firebase@12.19.0 connected with
// connectFunctionsEmulator) under node, against whichever target listens
// on HOST:PORT. Usage: node sdkcall.mjs PROJECT HOST PORT N. It prints one line,
// "sdkcall P50NS P90NS", the per-call times measured around each await.
import { initializeApp } from "firebase/app";
import { getFunctions, connectFunctionsEmulator, httpsCallable } from "firebase/functions";

const [projectId, host, port, n] = [process.argv[2], process.argv[3], Number(process.argv[4]), Number(process.argv[5])];
const app = initializeApp({ projectId, apiKey: "fnbench" });
const functions = getFunctions(app, "us-central1");
connectFunctionsEmulator(functions, host, port);
const add = httpsCallable(functions, "add");

async function call() {
  const res = await add({ a: 1, b: 2 });
  if (!res.data || res.data.sum !== 3) throw new Error(`unexpected answer ${JSON.stringify(res.data)}`);
}

for (let i = 0; i < 20; i++) await call(); // warm up (the JIT, the connection)
const ds = [];
for (let i = 0; i < n; i++) {
  const t = process.hrtime.bigint();
  await call();
  ds.push(Number(process.hrtime.bigint() - t));
}
ds.sort((a, b) => a - b);
console.log(`sdkcall ${ds[Math.floor(n / 2)]} ${ds[Math.floor((n * 9) / 10)]}`);
process.exit(0);
