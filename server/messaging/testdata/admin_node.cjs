// Drives pyric's messaging port with the Node admin SDK (firebase-admin),
// redirected by the served helper module (PYRIC_HELPER_FILE): send, dry
// run, each production error code, sendEach, sendEachForMulticast, topic
// management. Prints one JSON line the Go test checks.
const { initializeApp } = require("firebase-admin/app");
const { getMessaging } = require("firebase-admin/messaging");
const { messagingOptions } = require(process.env.PYRIC_HELPER_FILE);

const tok = JSON.parse(process.env.PYRIC_TOKENS);
const app = initializeApp({ projectId: "demo-project", ...messagingOptions() });
const messaging = getMessaging(app);
// sendEach / sendEachForMulticast: HTTP/1.1 through the app's httpAgent.
messaging.enableLegacyHttpTransport();

// outcome turns a promise into {ok, value} or {code, message}.
const outcome = (p) =>
  p.then(
    (value) => ({ ok: true, value }),
    (e) => ({ code: e.code, message: e.message }),
  );
const each = (br) => ({
  successCount: br.successCount,
  failureCount: br.failureCount,
  responses: br.responses.map((r) => (r.success ? { id: r.messageId } : { code: r.error.code, message: r.error.message })),
});
const topics = (r) => ({
  successCount: r.successCount,
  failureCount: r.failureCount,
  errors: r.errors.map((e) => ({ index: e.index, code: e.error.code })),
});

(async () => {
  const out = {};
  out.send = await outcome(
    messaging.send({
      token: tok.android,
      notification: { title: "Hello", body: "from firebase-admin" },
      data: { k: "v" },
      android: { ttl: 3500, priority: "high", notification: { channelId: "ch" } },
    }),
  );
  out.dryRun = await outcome(messaging.send({ token: tok.web, data: { a: "b" } }, true));
  out.errors = {
    invalidToken: await outcome(messaging.send({ token: "not-a-registered-token" })),
    tooBig: await outcome(messaging.send({ token: tok.web, data: { k: "x".repeat(5000) } })),
    badCondition: await outcome(messaging.send({ condition: "'a' in topics &&" })),
    reservedKey: await outcome(messaging.send({ topic: "a", data: { from: "x" } })),
    webpushTTL: await outcome(messaging.send({ topic: "a", webpush: { headers: { TTL: "soon" } } })),
    unregistered: await outcome(messaging.send({ token: tok.dead })),
    senderMismatch: await outcome(messaging.send({ token: tok.foreign })),
  };
  // The rate counts in fixed clock minutes: sends that straddle a
  // minute's turn start the count again, and the next minute must still
  // refuse its 241st, so up to two windows' worth are sent.
  let quota = null;
  for (let i = 0; i < 2 * 241 && !quota; i++) {
    const r = await outcome(messaging.send({ token: tok.limited }));
    if (!r.ok) quota = r;
  }
  out.errors.quota = quota;

  out.sendEach = each(
    await messaging.sendEach([
      { token: tok.web, data: { n: "1" } },
      { token: "garbage" },
      { topic: "news" },
      { token: tok.dead },
      { condition: "'x' in topics || 'y' in topics" },
    ]),
  );
  out.multicast = each(
    await messaging.sendEachForMulticast({ tokens: [tok.web, tok.ios, tok.dead, "bad"], notification: { title: "all" } }),
  );
  out.multicastDryRun = each(await messaging.sendEachForMulticast({ tokens: [tok.web, tok.ios] }, true));

  out.subscribe = topics(await messaging.subscribeToTopic([tok.web, tok.ios, tok.dead, "garbage"], "news"));
  out.subscribePrefixed = topics(await messaging.subscribeToTopic(tok.web, "/topics/sports"));
  out.topicSend = await outcome(messaging.send({ topic: "news", data: { n: "topic" } }));
  out.conditionSend = await outcome(messaging.send({ condition: "'news' in topics && 'sports' in topics", data: { n: "cond" } }));
  out.unsubscribe = topics(await messaging.unsubscribeFromTopic(tok.ios, "news"));
  out.afterUnsubscribe = await outcome(messaging.send({ topic: "news", data: { n: "after" } }));
  // Requests for other hosts go where they name, through the same agent.
  out.passthrough = await new Promise((resolve, reject) => {
    const u = new URL(`${process.env.PYRIC_MESSAGING_URL}/emulator/v1/projects/demo-project/tokens`);
    require("node:http")
      .get({ host: u.hostname, port: u.port, path: u.pathname, agent: app.options.httpAgent }, (res) => {
        res.resume();
        resolve(res.statusCode);
      })
      .on("error", reject);
  });
  // ... and https ones over TLS (PYRIC_TLS_URL: a server whose certificate
  // NODE_EXTRA_CA_CERTS trusts).
  if (process.env.PYRIC_TLS_URL) {
    const u = new URL(process.env.PYRIC_TLS_URL);
    out.passthroughTLS = await new Promise((resolve, reject) => {
      require("node:https")
        .get({ host: u.hostname, port: u.port, path: "/tls-check", agent: app.options.httpAgent }, (res) => {
          let body = "";
          res.on("data", (d) => (body += d));
          res.on("end", () => resolve(`${res.statusCode} ${body}`));
        })
        .on("error", reject);
    });
  }
  console.log(JSON.stringify(out));
  process.exit(0);
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
