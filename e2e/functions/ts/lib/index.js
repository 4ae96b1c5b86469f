"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.tsHello = exports.shout = void 0;
// A TypeScript codebase (compiled to lib/ with tsc): a v2 callable and a
// v1 HTTPS function.
const https_1 = require("firebase-functions/v2/https");
const v1 = require("firebase-functions/v1");
exports.shout = (0, https_1.onCall)((request) => ({ shouted: request.data.text.toUpperCase() }));
exports.tsHello = v1.https.onRequest((req, res) => {
    res.send(`ts ${req.method}`);
});
