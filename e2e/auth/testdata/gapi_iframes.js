// An offline stand-in for https://apis.google.com/js/api.js, served by the
// browser test in place of Google's loader (the machine has no network).
// It implements only what the Firebase web SDK's popup/redirect resolver and
// the Auth emulator's helper frame use of gapi.iframes: load, getContext,
// open (with ping and restyle), getParentIframe, register and send, over
// window.postMessage. Both sides of the channel run this same file, so the
// wire format is this file's own; everything else in the flow (the SDK,
// pyric's /emulator/auth/iframe and /emulator/auth/handler pages, the popup
// window and the clicks) is real.
(function () {
  'use strict';
  if (window.gapi && window.gapi.iframes) return;
  var TAG = '__gapiIframesStandIn';
  var seq = 0;
  var pending = {}; // id -> callback(responses)

  // A Channel is one end of a frame-to-frame link.
  function Channel(peer) {
    this.peer = peer; // a Window, or a function returning it
    this.handlers = {};
    this.queued = {}; // name -> [{data, reply}] sent before register
  }
  Channel.prototype.win = function () { return typeof this.peer === 'function' ? this.peer() : this.peer; };
  Channel.prototype.register = function (name, fn) {
    this.handlers[name] = fn;
    var q = this.queued[name] || [];
    delete this.queued[name];
    q.forEach(function (m) { m.reply(fn(m.data)); });
  };
  Channel.prototype.send = function (name, data, cb) {
    var id = TAG + ':' + (++seq) + ':' + Math.random();
    var win = this.win();
    return new Promise(function (resolve) {
      pending[id] = function (responses) { if (cb) cb(responses); resolve(responses); };
      win.postMessage({ tag: TAG, kind: 'send', id: id, name: name, data: data }, '*');
    });
  };
  Channel.prototype.ping = function (cb) {
    var self = this;
    // The frame may still be loading: repeat until its stand-in answers.
    return new Promise(function (resolve) {
      var done = false;
      var tick = function () {
        if (done) return;
        self.send('_ping', null, function () { if (!done) { done = true; if (cb) cb(); resolve(); } });
        setTimeout(tick, 100);
      };
      tick();
    });
  };
  Channel.prototype.restyle = function () { return Promise.resolve(); };

  var channels = []; // [{win, channel}]
  function channelOf(win) {
    for (var i = 0; i < channels.length; i++) if (channels[i].win() === win) return channels[i];
    return null;
  }

  window.addEventListener('message', function (e) {
    var m = e.data;
    if (!m || m.tag !== TAG) return;
    if (m.kind === 'reply') {
      var cb = pending[m.id];
      delete pending[m.id];
      if (cb) cb(m.responses);
      return;
    }
    var src = e.source;
    var reply = function (v) {
      Promise.resolve(v).then(function (r) { src.postMessage({ tag: TAG, kind: 'reply', id: m.id, responses: [r] }, '*'); });
    };
    if (m.name === '_ping') return reply(true);
    var ch = channelOf(src);
    if (!ch) { ch = new Channel(src); channels.push(ch); } // a parent, before getParentIframe
    var h = ch.handlers[m.name];
    if (h) reply(h(m.data));
    else (ch.queued[m.name] = ch.queued[m.name] || []).push({ data: m.data, reply: reply });
  });

  var context = {
    open: function (opts, ready) {
      var f = document.createElement('iframe');
      var attrs = opts.attributes || {};
      Object.keys(attrs).forEach(function (k) {
        if (k === 'style') Object.assign(f.style, attrs.style);
        else f.setAttribute(k, attrs[k]);
      });
      f.src = opts.url;
      var ch = new Channel(function () { return f.contentWindow; });
      channels.push(ch);
      (opts.where || document.body).appendChild(f);
      return ready ? ready(ch) : Promise.resolve(ch);
    },
    getParentIframe: function () {
      var ch = channelOf(window.parent);
      if (!ch) { ch = new Channel(window.parent); channels.push(ch); }
      return ch;
    },
  };

  window.gapi = {
    load: function (name, opts) { setTimeout(function () { (opts.callback || opts)(); }, 0); },
    iframes: {
      CROSS_ORIGIN_IFRAMES_FILTER: function () { return true; },
      Iframe: function () {},
      getContext: function () { return context; },
    },
  };

  // The loader's two ways to announce itself: ?onload=<callback> and
  // window.gapi_onload.
  var src = document.currentScript && document.currentScript.src;
  var cbName = src ? new URL(src).searchParams.get('onload') : null;
  setTimeout(function () {
    if (cbName && typeof window[cbName] === 'function') window[cbName]();
    else if (typeof window.gapi_onload === 'function') window.gapi_onload();
  }, 0);
})();
