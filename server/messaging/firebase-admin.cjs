// pyric: point the Node admin SDK (firebase-admin) at pyric's Cloud Messaging.
//
// firebase-admin's FCM (fcm.googleapis.com) and instance-id
// (iid.googleapis.com) hosts are fixed and it authorizes with Google OAuth
// tokens. Its documented AppOptions hooks are enough to redirect it:
//
//   httpAgent   every HTTP/1.1 request of the app goes through this agent;
//               it connects the two FCM hosts to pyric's messaging port and
//               everything else as usual (TLS for https, plain for http, so
//               the Auth emulator keeps working in the same app).
//   credential  a Credential whose access token is "owner", the emulators'
//               admin bearer, so no Google sign-in is attempted.
//
// sendEach / sendEachForMulticast default to an HTTP/2 session that
// firebase-admin opens itself (http2.connect, no agent), so also call the
// SDK's messaging.enableLegacyHttpTransport(): they then go over HTTP/1.1
// through the agent like send and subscribeToTopic.
//
//   const { initializeApp } = require("firebase-admin/app");
//   const { getMessaging } = require("firebase-admin/messaging");
//   const { messagingOptions } = require("./pyric-firebase-admin.cjs");
//   const app = initializeApp({ projectId: "demo-project", ...messagingOptions("http://127.0.0.1:9599") });
//   const messaging = getMessaging(app);
//   messaging.enableLegacyHttpTransport();
//
// Served by pyric at /emulator/v1/firebase-admin.cjs; it needs nothing but
// Node's standard library.
"use strict";

const http = require("node:http");
const net = require("node:net");
const tls = require("node:tls");

// The hosts firebase-admin sends messaging calls to.
const HOSTS = ["fcm.googleapis.com", "iid.googleapis.com"];

// messagingAgent returns an http.Agent that connects requests for HOSTS to
// base (pyric's messaging URL; default $PYRIC_MESSAGING_URL) and every other
// request to its own host.
function messagingAgent(base = process.env.PYRIC_MESSAGING_URL) {
  if (!base) throw new Error("pyric: no messaging URL (pass one or set PYRIC_MESSAGING_URL)");
  const target = new URL(base.includes("://") ? base : `http://${base}`);
  const secure = target.protocol === "https:";
  const port = Number(target.port || (secure ? 443 : 80));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  // No protocol of its own: Node then accepts the agent for both http and
  // https requests (each checked against its module's default agent).
  agent.protocol = undefined;
  agent.createConnection = (opts, cb) => {
    const host = opts.host || opts.hostname;
    if (HOSTS.includes(host)) {
      return secure
        ? tls.connect({ host: target.hostname, port, servername: target.hostname }, cb)
        : net.connect({ host: target.hostname, port }, cb);
    }
    const https = opts.protocol === "https:" || opts._defaultAgent?.protocol === "https:";
    if (!https) return net.createConnection(opts, cb);
    // As https.Agent does: SNI names a host, never an IP address.
    const servername = opts.servername || (net.isIP(host) ? undefined : host);
    return tls.connect({ ...opts, servername }, cb);
  };
  return agent;
}

// ownerCredential is a firebase-admin Credential whose access token is the
// emulators' admin bearer.
const ownerCredential = {
  getAccessToken: () => Promise.resolve({ access_token: "owner", expires_in: 3600 }),
};

// messagingOptions returns the AppOptions fields that send the app's
// messaging calls to base.
function messagingOptions(base) {
  return { httpAgent: messagingAgent(base), credential: ownerCredential };
}

module.exports = { HOSTS, messagingAgent, ownerCredential, messagingOptions };
