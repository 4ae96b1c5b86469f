// A TypeScript codebase (compiled to lib/ with tsc): a v2 callable and a
// v1 HTTPS function.
import { onCall } from "firebase-functions/v2/https";
import * as v1 from "firebase-functions/v1";

interface Shout {
  text: string;
}

export const shout = onCall<Shout>((request) => ({ shouted: request.data.text.toUpperCase() }));

export const tsHello = v1.https.onRequest((req, res) => {
  res.send(`ts ${req.method}`);
});
