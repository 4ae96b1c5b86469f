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
const http = require("http");
const path = require("path");
const util = require("util");
const { AsyncLocalStorage } = require("async_hooks");

const CONTROL_FD = 3;
const BODY_LIMIT = "32mb"; // production's request size limit for HTTP functions
const BODY_LIMIT_BYTES = 32 * 1024 * 1024;
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

// What express does for a JSON request, without express: the
// prototypes of requests and responses on the fast path (see
// liteEligible). They hold the few methods firebase-functions' wrappers
// and the harness call (req.header/get; res.status, send, json), each
// doing what express's does for the arguments they pass, bytes and
// header order included. Any other argument, and the first use of any
// other express member (a function reading rawRequest.ip, say), loads
// express and moves the request and its response onto express's own
// prototypes, so the member is express's.
let toExpress = null; // (req, res) => moves them onto express's prototypes; set by main

function pairOf(obj) {
  return obj instanceof http.IncomingMessage ? [obj, obj.res] : [obj.req, obj];
}

function viaExpress(obj, method, args) {
  const [req, res] = pairOf(obj);
  toExpress(req, res);
  return obj[method](...args);
}

// The members express 4 and 5 give requests and responses (their
// prototypes'): the first use of one of these moves a lite request onto
// express's. Any other name is node's, or undefined under express too
// (node's streams probe a few, such as writable).
const expressRequestMembers = new Set(["accepts", "acceptsCharset", "acceptsCharsets", "acceptsEncoding", "acceptsEncodings",
  "acceptsLanguage", "acceptsLanguages", "app", "fresh", "get", "header", "host", "hostname", "ip", "ips", "is", "param", "path",
  "protocol", "query", "range", "secure", "stale", "subdomains", "xhr"]);
const expressResponseMembers = new Set(["app", "append", "attachment", "clearCookie", "contentType", "cookie", "download", "format",
  "get", "header", "json", "jsonp", "links", "location", "redirect", "render", "send", "sendFile", "sendStatus", "sendfile", "set",
  "status", "type", "vary"]);

function upgradingProto(base, members, methods) {
  const props = {};
  for (const [k, v] of Object.entries(methods)) props[k] = { value: v, writable: true, configurable: true };
  const target = Object.create(base, props);
  return new Proxy(target, {
    get(t, key, receiver) {
      if (typeof key === "string" && members.has(key) && !(key in t)) {
        const [req, res] = pairOf(receiver);
        if (req && res) {
          toExpress(req, res);
          return receiver[key];
        }
      }
      return Reflect.get(t, key, receiver);
    },
  });
}

// weakETag is express's default ETag of a body (the etag package, weak).
function weakETag(buf) {
  if (buf.length === 0) return 'W/"0-2jmj7l5rSw0yVb/vlWAYkK/YBwk"';
  const hash = require("crypto").createHash("sha1").update(buf).digest("base64").substring(0, 27);
  return `W/"${buf.length.toString(16)}-${hash}"`;
}

const TOKEN_TYPE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+\/[!#$%&'*+.^_`|~0-9A-Za-z-]+)(?:[ \t]*;[ \t]*charset=(?:utf-8|"utf-8"))?$/i;

const liteRequest = upgradingProto(http.IncomingMessage.prototype, expressRequestMembers, {
  header(name) {
    if (typeof name !== "string" || name === "") return viaExpress(this, "header", arguments);
    const lc = name.toLowerCase();
    return lc === "referer" || lc === "referrer" ? this.headers.referrer || this.headers.referer : this.headers[lc];
  },
  get(name) {
    return this.header(name);
  },
});

const liteResponse = upgradingProto(http.ServerResponse.prototype, expressResponseMembers, {
  status(code) {
    if (!Number.isInteger(code) || code < 100 || code > 999) return viaExpress(this, "status", arguments);
    this.statusCode = code;
    return this;
  },
  json(obj) {
    if (arguments.length !== 1) return viaExpress(this, "json", arguments);
    const body = JSON.stringify(obj);
    if (typeof body !== "string") return viaExpress(this, "json", arguments);
    if (!this.getHeader("content-type")) this.setHeader("Content-Type", "application/json; charset=utf-8");
    return this.send(body);
  },
  send(body) {
    if (arguments.length === 1 && typeof body === "object" && body !== null && !ArrayBuffer.isView(body)) return this.json(body);
    const type = this.getHeader("content-type");
    const m = typeof type === "string" ? TOKEN_TYPE.exec(type.trim()) : null;
    if (arguments.length !== 1 || typeof body !== "string" || this.req.method !== "POST" || this.statusCode === 205 ||
      (type !== undefined && !m)) {
      return viaExpress(this, "send", arguments);
    }
    this.setHeader("Content-Type", m ? m[1].toLowerCase() + "; charset=utf-8" : "text/html; charset=utf-8");
    const etag = !this.getHeader("etag");
    let chunk = Buffer.from(body, "utf8");
    if (!this.getHeader("transfer-encoding")) this.setHeader("Content-Length", String(chunk.length));
    if (etag) this.setHeader("ETag", weakETag(chunk));
    if (this.statusCode === 204 || this.statusCode === 304) {
      this.removeHeader("Content-Type");
      this.removeHeader("Content-Length");
      this.removeHeader("Transfer-Encoding");
      chunk = "";
    }
    this.end(chunk);
    return this;
  },
});

// liteEligible: a request whose body express's JSON parser would read as
// is (POST, application/json in UTF-8, not compressed, its length given
// and within the limit), which the fast path may read itself.
function liteEligible(req, ctype) {
  if (req.method !== "POST" || req.headers["transfer-encoding"] !== undefined) return false;
  const enc = req.headers["content-encoding"];
  if (enc !== undefined && enc.toLowerCase() !== "identity") return false;
  const len = req.headers["content-length"];
  if (typeof len !== "string" || !/^[0-9]{1,9}$/.test(len) || Number(len) > BODY_LIMIT_BYTES) return false;
  const m = TOKEN_TYPE.exec(ctype.trim());
  return m !== null && m[1].toLowerCase() === "application/json";
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

  const rawBodySaver = (req, res, buf) => {
    req.rawBody = buf;
  };
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

  // express (about 130 modules, a seventh of a worker's load) is loaded
  // when first needed: at once after the load when the codebase has
  // HTTPS functions, else when a request needs it (see liteRequest).
  let ex = null;
  const loadExpress = () => {
    if (ex !== null) return ex;
    const express = require(require.resolve("express", { paths: [path.dirname(ffPath)] }));
    const app = express();
    app.enable("trust proxy");
    app.disable("x-powered-by");
    const jsonParser = express.json({ limit: BODY_LIMIT, verify: rawBodySaver });
    app.use(jsonParser);
    app.use(express.text({ limit: BODY_LIMIT, verify: rawBodySaver }));
    app.use(express.urlencoded({ extended: true, limit: BODY_LIMIT, verify: rawBodySaver }));
    app.use(express.raw({ type: "*/*", limit: BODY_LIMIT, verify: rawBodySaver }));
    app.use(dispatch);
    app.use((err, req, res, next) => bodyError(err, req, res));
    ex = { app, jsonParser };
    setImmediate(flushCompileCache);
    return ex;
  };
  toExpress = (req, res) => {
    const { app } = loadExpress();
    Object.setPrototypeOf(req, app.request);
    Object.setPrototypeOf(res, app.response);
  };
  const run = (req, res) => dispatch(req, res).catch((e) => (res.headersSent ? res.end() : bodyError(e, req, res)));
  // parseWithExpress runs express's JSON parser over req (or over body,
  // the bytes already read from it), then the function.
  const parseWithExpress = (req, res, body) => {
    toExpress(req, res);
    let from = req;
    if (body !== undefined) {
      // A copy of the request holding the bytes read: what express's
      // parser makes of them (its errors, a BOM, leading whitespace).
      from = new http.IncomingMessage({ readable: true, resume() {}, pause() {} });
      from.headers = req.headers;
      from.rawHeaders = req.rawHeaders;
      from.method = req.method;
      from.url = req.url;
      from.complete = true;
      from.push(body);
      from.push(null);
    }
    ex.jsonParser(from, res, (err) => {
      if (err) {
        bodyError(err, req, res);
        return;
      }
      if (from !== req) {
        if ("rawBody" in from) req.rawBody = from.rawBody;
        req.body = from.body;
      }
      run(req, res);
    });
  };

  // Events and the JSON protocols (callable, blocking, task functions)
  // take a shorter way than HTTP functions: express's own request setup
  // and its JSON body parser (the same limits, errors and rawBody), then
  // the function, without the router and the other parsers in between.
  // A request of another content type goes through the app. Before
  // express is loaded, a JSON body the parser would take as is is read
  // here, on the lite prototypes (what the parser would set: rawBody,
  // the parsed body); any other goes to the parser.
  const json = new Set();
  let httpFunctions = false;
  for (const [id, ep] of Object.entries(found.endpoints)) {
    if (ep.callableTrigger || ep.blockingTrigger || ep.taskQueueTrigger) json.add(id);
    else if (ep.httpsTrigger) httpFunctions = true;
  }
  const server = http.createServer((req, res) => {
    const ctype = req.headers["content-type"];
    const direct = (req.headers["x-pyric-mode"] === "event" || json.has(req.headers["x-pyric-fn"])) &&
      typeof ctype === "string" && ctype.toLowerCase().startsWith("application/json");
    if (!direct) {
      loadExpress().app(req, res);
      return;
    }
    req.res = res;
    res.req = req;
    res.locals = Object.create(null);
    if (ex !== null || !liteEligible(req, ctype)) {
      parseWithExpress(req, res);
      return;
    }
    Object.setPrototypeOf(req, liteRequest);
    Object.setPrototypeOf(res, liteResponse);
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const buf = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      let body;
      if (buf.length === 0) {
        body = {};
      } else if (buf[0] === 0x7b || buf[0] === 0x5b) {
        try {
          body = JSON.parse(buf.toString("utf8"));
        } catch (e) {
          // express's parser reports it
        }
      }
      if (body === undefined) {
        parseWithExpress(req, res, buf);
        return;
      }
      req.rawBody = buf;
      req.body = body;
      run(req, res);
    });
  });
  server.listen(process.env.PYRIC_FN_SOCKET, () => {
    sendNow({ t: "ready", endpoints: found.endpoints, node: process.versions.node });
    setImmediate(() => {
      if (httpFunctions) loadExpress();
      flushCompileCache();
    });
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
