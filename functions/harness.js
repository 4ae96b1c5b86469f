// Pyric's functions worker: an adapter between pyric's functions engine
// (Go) and one codebase of the app's Cloud Functions. It loads the
// codebase's module, reports each export's __endpoint, and runs the
// function a request names. No trigger semantics live here: the engine
// decides what runs, with which body, and how long it may take.
//
// Channels: requests arrive over HTTP on the unix socket PYRIC_FN_SOCKET;
// control messages (ready, load errors, logs, invocation errors) leave as
// JSON lines on file descriptor 3.
"use strict";

const fs = require("fs");
const path = require("path");
const util = require("util");
const { AsyncLocalStorage } = require("async_hooks");

const CONTROL_FD = 3;
const BODY_LIMIT = "32mb"; // production's request size limit for HTTP functions
const invocation = new AsyncLocalStorage();

// Control lines are queued and written together: an invocation's log
// lines and its end report leave in one write, after its response. send
// writes the queue at the end of the current turn; flush writes it now:
// when an invocation ends, and before the process may end (a crash,
// process.exit, a load error).
let queued = "";
let flushScheduled = false;

function send(msg) {
  queued += JSON.stringify(msg) + "\n";
  if (!flushScheduled) {
    flushScheduled = true;
    setImmediate(flush);
  }
}

function flush() {
  flushScheduled = false;
  if (queued === "") return;
  let data = Buffer.from(queued, "utf8");
  queued = "";
  const until = Date.now() + 5000;
  while (data.length > 0) {
    try {
      data = data.subarray(fs.writeSync(CONTROL_FD, data));
    } catch (e) {
      // The pipe is full for a moment: wait for the engine to read.
      if (e.code !== "EAGAIN" || Date.now() > until) return;
    }
  }
}

function sendNow(msg) {
  send(msg);
  flush();
}

// Console lines (and firebase-functions' logger, which writes through the
// console it finds at load) go to the engine tagged with the invocation.
const levels = { debug: "DEBUG", info: "INFO", log: "INFO", warn: "WARNING", error: "ERROR" };
for (const [method, severity] of Object.entries(levels)) {
  console[method] = (...args) => {
    const ctx = invocation.getStore();
    send({ t: "log", fn: ctx ? ctx.fn : "", inv: ctx ? ctx.inv : "", severity, text: util.format(...args) });
  };
}

// An invocation's calls to pyric's services name it, so the events of
// the writes a function makes say which invocation made them: a header
// on HTTP requests (http, https, fetch), gRPC metadata (@grpc/grpc-js
// clients), and a field of the Realtime Database's write requests (the
// Admin SDK's one WebSocket serves every invocation). Calls to any other
// host are left alone.
const INVOCATION_HEADER = "x-pyric-invocation";
const tagged = Symbol("pyric.tagged");
const putBy = Symbol("pyric.putBy");

function currentInvocation() {
  const ctx = invocation.getStore();
  return ctx && ctx.inv ? ctx.inv : "";
}

function serviceHosts() {
  const hosts = new Set();
  for (const name of ["FIRESTORE_EMULATOR_HOST", "FIREBASE_DATABASE_EMULATOR_HOST", "FIREBASE_STORAGE_EMULATOR_HOST",
    "FIREBASE_AUTH_EMULATOR_HOST", "PUBSUB_EMULATOR_HOST", "CLOUD_TASKS_EMULATOR_HOST", "STORAGE_EMULATOR_HOST",
    "CLOUD_EVENTARC_EMULATOR_HOST"]) {
    const v = process.env[name];
    if (v) hosts.add(v.replace(/^[a-z]+:\/\//, "").replace(/\/.*$/, ""));
  }
  return hosts;
}

function tagOutgoing() {
  const hosts = serviceHosts();
  const loopback = /^(127\.0\.0\.1|localhost|\[::1\]):/;
  const isPyric = (hostport) => {
    if (!hostport) return false;
    if (hosts.has(hostport)) return true;
    if (!loopback.test(hostport)) return false;
    const port = hostport.slice(hostport.lastIndexOf(":"));
    for (const h of hosts) if (loopback.test(h) && h.endsWith(port)) return true;
    return false;
  };
  for (const mod of [require("http"), require("https")]) {
    for (const method of ["request", "get"]) {
      const real = mod[method];
      mod[method] = function (...args) {
        const req = real.apply(this, args);
        const inv = currentInvocation();
        if (inv && !req.headersSent && isPyric(String(req.getHeader("host") || ""))) {
          req.setHeader(INVOCATION_HEADER, inv);
        }
        return req;
      };
    }
  }
  if (typeof globalThis.fetch === "function") {
    const realFetch = globalThis.fetch;
    globalThis.fetch = function (input, init) {
      const inv = currentInvocation();
      if (inv) {
        try {
          const url = new URL(input instanceof Request ? input.url : String(input));
          if (isPyric(url.host)) {
            const headers = new Headers(init && init.headers ? init.headers : input instanceof Request ? input.headers : undefined);
            headers.set(INVOCATION_HEADER, inv);
            init = { ...init, headers };
          }
        } catch (e) {
          // not a URL fetch understands: it reports that itself
        }
      }
      return realFetch.call(this, input, init);
    };
  }
  const Module = require("module");
  const realLoad = Module._load;
  Module._load = function (request, parent, isMain) {
    const exp = realLoad.apply(this, arguments);
    try {
      if (request === "@grpc/grpc-js") {
        tagGrpc(exp, Module._resolveFilename(request, parent), isPyric);
      } else if (request === "@firebase/database-compat/standalone") {
        tagDatabase(exp);
      }
    } catch (e) {
      // an unexpected version of the library: its calls go untagged
    }
    return exp;
  };
}

// tagGrpc makes the @grpc/grpc-js clients created for pyric's addresses
// carry an interceptor adding the invocation to each call's metadata.
// The service clients grpc-js makes (makeClientConstructor) extend the
// Client its client module exports when they are made, so replacing
// that export reaches them.
function tagGrpc(grpc, indexPath, isPyric) {
  const clientModule = require(path.join(path.dirname(indexPath), "client.js"));
  const Base = clientModule.Client;
  if (!Base || Base[tagged] || !grpc.InterceptingCall) return;
  const interceptor = (options, nextCall) => {
    const inv = currentInvocation();
    const call = nextCall(options);
    if (!inv) return call;
    return new grpc.InterceptingCall(call, {
      start(metadata, listener, next) {
        metadata.set(INVOCATION_HEADER, inv);
        next(metadata, listener);
      },
    });
  };
  class Client extends Base {
    constructor(address, credentials, options) {
      if (isPyric(String(address).replace(/^.*\//, ""))) {
        options = { ...options, interceptors: [...((options && options.interceptors) || []), interceptor] };
      }
      super(address, credentials, options);
    }
  }
  Client[tagged] = true;
  clientModule.Client = Client;
}

// tagDatabase names the invocation in the write requests (put, merge)
// of the Admin SDK's Realtime Database connections: in the request when
// it is sent at once, and in the queued request a reconnect sends.
function tagDatabase(standalone) {
  if (!standalone || typeof standalone.initStandalone !== "function" || standalone[tagged]) return;
  standalone[tagged] = true;
  const realInit = standalone.initStandalone;
  standalone.initStandalone = function (...args) {
    const out = realInit.apply(this, args);
    try {
      tagConnection(Object.getPrototypeOf(out.instance._delegate._repo.server_));
    } catch (e) {
      // no persistent connection: nothing to tag
    }
    return out;
  };
}

function tagConnection(proto) {
  if (!proto || proto[tagged] || typeof proto.putInternal !== "function" || typeof proto.sendRequest !== "function") return;
  proto[tagged] = true;
  const realPut = proto.putInternal;
  const realSend = proto.sendRequest;
  proto.putInternal = function (...args) {
    const inv = currentInvocation();
    const index = Array.isArray(this.outstandingPuts_) ? this.outstandingPuts_.length : -1;
    this[putBy] = inv;
    try {
      return realPut.apply(this, args);
    } finally {
      this[putBy] = "";
      const put = index >= 0 ? this.outstandingPuts_[index] : undefined;
      if (inv && put && put.request) put.request[INVOCATION_HEADER] = inv;
    }
  };
  proto.sendRequest = function (action, body, onResponse) {
    const inv = this[putBy];
    if (inv && (action === "p" || action === "m") && body && typeof body === "object") body[INVOCATION_HEADER] = inv;
    return realSend.call(this, action, body, onResponse);
  };
}

function errorInfo(err) {
  if (err instanceof Error) {
    return { message: err.message, stack: err.stack || String(err) };
  }
  // A plain object thrown (a client library's API error body, say)
  // shows its fields, not "[object Object]".
  if (err && typeof err === "object") {
    let text = "";
    try {
      text = JSON.stringify(err);
    } catch (e) {
      text = String(err);
    }
    return { message: typeof err.message === "string" ? err.message : text, stack: text };
  }
  return { message: String(err), stack: String(err) };
}

process.on("uncaughtException", (err) => {
  const ctx = invocation.getStore();
  sendNow({ t: "crash", fn: ctx ? ctx.fn : "", inv: ctx ? ctx.inv : "", ...errorInfo(err) });
  process.exit(1);
});
process.on("unhandledRejection", (err) => {
  const ctx = invocation.getStore();
  sendNow({ t: "crash", fn: ctx ? ctx.fn : "", inv: ctx ? ctx.inv : "", ...errorInfo(err) });
  process.exit(1);
});

// exit reports a process.exit called by the app's code before it happens.
const nodeExit = process.exit.bind(process);
const realExit = (code) => {
  flush();
  nodeExit(code);
};
process.exit = (code) => {
  const ctx = invocation.getStore();
  if (ctx) {
    sendNow({ t: "exit", fn: ctx.fn, inv: ctx.inv, code: code === undefined ? 0 : code });
  }
  realExit(code);
};

async function loadModule(dir) {
  try {
    return require(dir);
  } catch (e) {
    if (e && (e.code === "ERR_REQUIRE_ESM" || e.code === "ERR_REQUIRE_ASYNC_MODULE")) {
      const url = require("url").pathToFileURL(require.resolve(dir)).href;
      return await import(url);
    }
    throw e;
  }
}

// resolved turns firebase-functions' params (Expressions) into their
// values, read from the environment the engine loaded from .env files.
function resolved(v) {
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) return v.map(resolved);
  if (typeof v.value === "function" && typeof v.toCEL === "function") {
    try {
      return v.value();
    } catch (e) {
      return null;
    }
  }
  if (v.constructor && v.constructor.name === "ResetValue") return null;
  const out = {};
  for (const [k, x] of Object.entries(v)) out[k] = resolved(x);
  return out;
}

// collect walks the module's exports as firebase-functions' own loader
// does: a function with __endpoint is a function, a nested object a group
// whose members are named "group-name".
function collect(mod, prefix, out, seen) {
  if (seen.has(mod)) return;
  seen.add(mod);
  for (const [name, val] of Object.entries(mod)) {
    if (typeof val === "function" && val.__endpoint && typeof val.__endpoint === "object") {
      const id = prefix + name;
      out.endpoints[id] = { ...resolved(val.__endpoint), entryPoint: id.replace(/-/g, ".") };
      out.fns[id] = val;
    } else if (val !== null && typeof val === "object" && !Array.isArray(val)) {
      collect(val, prefix + name + "-", out, seen);
    }
  }
}

// V8's compile cache (Node 22.1+) saves about a third of the CPU a worker
// spends loading firebase-functions and firebase-admin, for every worker
// after the first: pool growth, replacements, reloads, the next run.
function enableCompileCache() {
  const cacheDir = process.env.PYRIC_FN_COMPILE_CACHE;
  const mod = require("module");
  if (cacheDir && typeof mod.enableCompileCache === "function") {
    try {
      mod.enableCompileCache(cacheDir);
    } catch (e) {
      // an unwritable cache only costs speed
    }
  }
}

// flushCompileCache writes what the load compiled now: node writes its
// compile cache at a normal exit, and a worker never has one (pyric
// kills it), so without this the next start would compile it all again.
function flushCompileCache() {
  const mod = require("module");
  if (process.env.PYRIC_FN_COMPILE_CACHE && typeof mod.flushCompileCache === "function") {
    try {
      mod.flushCompileCache();
    } catch (e) {
      // an unwritable cache only costs speed
    }
  }
}

async function main() {
  enableCompileCache();
  tagOutgoing();
  const dir = process.cwd();
  let ffPath;
  try {
    ffPath = require.resolve("firebase-functions", { paths: [dir] });
  } catch (e) {
    sendNow({ t: "loadError", message: `firebase-functions is not installed in ${dir}: run npm install there`, stack: "" });
    realExit(1);
    return;
  }
  const express = require(require.resolve("express", { paths: [path.dirname(ffPath)] }));
  let mod;
  try {
    mod = await loadModule(dir);
  } catch (err) {
    sendNow({ t: "loadError", ...errorInfo(err) });
    realExit(1);
    return;
  }
  const found = { endpoints: {}, fns: {} };
  collect(mod, "", found, new Set());

  const app = express();
  app.enable("trust proxy");
  app.disable("x-powered-by");
  const rawBodySaver = (req, res, buf) => {
    req.rawBody = buf;
  };
  app.use(express.json({ limit: BODY_LIMIT, verify: rawBodySaver }));
  app.use(express.text({ limit: BODY_LIMIT, verify: rawBodySaver }));
  app.use(express.urlencoded({ extended: true, limit: BODY_LIMIT, verify: rawBodySaver }));
  app.use(express.raw({ type: "*/*", limit: BODY_LIMIT, verify: rawBodySaver }));
  const dispatch = async (req, res) => {
    const id = req.headers["x-pyric-fn"];
    const inv = req.headers["x-pyric-inv"] || "";
    const mode = req.headers["x-pyric-mode"];
    const platform = req.headers["x-pyric-platform"];
    delete req.headers["x-pyric-fn"];
    delete req.headers["x-pyric-inv"];
    delete req.headers["x-pyric-mode"];
    delete req.headers["x-pyric-platform"];
    // Once the response is written, "end" follows the invocation's log
    // and error lines on the control pipe: the engine waits for it, so
    // every line reaches the invocation's event.
    if (inv) res.on("finish", () => sendNow({ t: "end", inv }));
    const fn = found.fns[id];
    if (!fn) {
      res.status(404).send(`Function ${id} is not exported by the module`);
      return;
    }
    // What a function sees of a request without a body, as under the
    // Emulator Suite and the Functions Framework (express 4's parsers):
    // body {} and no rawBody (express 5, which the app may have
    // installed, leaves body undefined).
    if (req.body === undefined) req.body = {};
    process.env.FUNCTION_TARGET = found.endpoints[id].entryPoint;
    process.env.K_SERVICE = id;
    process.env.FUNCTION_SIGNATURE_TYPE = mode === "http" ? "http" : platform === "gcfv2" ? "cloudevent" : "event";
    await invocation.run({ fn: id, inv }, async () => {
      if (mode === "event") {
        try {
          // express.json parsed it already (events are posted as JSON).
          const body = req.rawBody !== undefined && req.rawBody.length > 0 && req.body !== null && typeof req.body === "object" ? req.body : JSON.parse((req.rawBody || "").toString("utf8"));
          if (platform === "gcfv2") {
            // The CloudEvents JSON form's binary data (a v2 Firestore
            // event's protobuf) reaches the function as a Buffer, as the
            // Functions Framework's CloudEvents decoding gives it.
            if (typeof body.data_base64 === "string" && body.data === undefined) {
              body.data = Buffer.from(body.data_base64, "base64");
              delete body.data_base64;
            }
            await fn(body);
          } else {
            const data = body.data;
            const context = body.context ? body.context : body;
            await fn(data, context);
          }
          res.status(200).json({ status: "acknowledged" });
        } catch (err) {
          const info = errorInfo(err);
          send({ t: "error", fn: id, inv, ...info });
          res.status(500).json({ error: info });
        }
        return;
      }
      try {
        await fn(req, res);
      } catch (err) {
        const info = errorInfo(err);
        send({ t: "error", fn: id, inv, ...info });
        if (!res.headersSent) {
          res.status(500).send(info.message);
        } else {
          res.end();
        }
      }
    });
  };
  app.use(dispatch);
  // Body-parser failures answer as under the Emulator Suite: a body over
  // the limit (413), which its front proxy refuses, with the error's name
  // and message as text; a body its parser rejects (400: malformed JSON),
  // which reaches the function runtime's express, with express's error
  // page (finalhandler's HTML document holding the stack).
  const bodyError = (err, req, res) => {
    const status = err.status || err.statusCode || 500;
    if (status !== 400 || !err.stack) {
      res.status(status).type("text/plain").send(`${err.name || "Error"}: ${err.message}`);
      return;
    }
    const html = String(err.stack)
      .replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c])
      .replace(/\n/g, "<br>")
      .replace(/\x20{2}/g, " &nbsp;");
    res.status(status).type("html").send(
      '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Error</title>\n</head>\n<body>\n<pre>' + html + "</pre>\n</body>\n</html>\n",
    );
  };
  app.use((err, req, res, next) => bodyError(err, req, res));

  // Events and the JSON protocols (callable, blocking, task functions)
  // take a shorter way than HTTP functions: express's own request setup
  // and its JSON body parser (the same limits, errors and rawBody), then
  // the function, without the router and the other parsers in between.
  // A request of another content type goes through the app.
  const json = new Set();
  for (const [id, ep] of Object.entries(found.endpoints)) {
    if (ep.callableTrigger || ep.blockingTrigger || ep.taskQueueTrigger) json.add(id);
  }
  const jsonParser = express.json({ limit: BODY_LIMIT, verify: rawBodySaver });
  const server = require("http").createServer((req, res) => {
    const ctype = req.headers["content-type"];
    const direct = (req.headers["x-pyric-mode"] === "event" || json.has(req.headers["x-pyric-fn"])) &&
      typeof ctype === "string" && ctype.toLowerCase().startsWith("application/json");
    if (!direct) {
      app(req, res);
      return;
    }
    req.res = res;
    res.req = req;
    Object.setPrototypeOf(req, app.request);
    Object.setPrototypeOf(res, app.response);
    res.locals = Object.create(null);
    jsonParser(req, res, (err) => {
      if (err) {
        bodyError(err, req, res);
        return;
      }
      // What express does with a middleware's rejection.
      dispatch(req, res).catch((e) => (res.headersSent ? res.end() : bodyError(e, req, res)));
    });
  });
  server.listen(process.env.PYRIC_FN_SOCKET, () => {
    sendNow({ t: "ready", endpoints: found.endpoints, node: process.versions.node });
    setImmediate(flushCompileCache);
  });
  server.keepAliveTimeout = 0;
  server.requestTimeout = 0;
  server.headersTimeout = 0;
}

// Pyric holds the worker's stdin: when it ends, pyric is gone.
process.stdin.on("end", () => realExit(0));
process.stdin.on("error", () => realExit(0));
process.stdin.resume();

main().catch((err) => {
  sendNow({ t: "loadError", ...errorInfo(err) });
  realExit(1);
});
