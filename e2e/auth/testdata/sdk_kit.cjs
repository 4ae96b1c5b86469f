// What the JS SDK scripts of this folder share: recording how a step
// ends, and reading the emulator's outbox of out-of-band codes.

// recorder returns code(name, f): it runs f and records in errors[name]
// the error code it failed with, or 'no error'.
function recorder(errors) {
  return async function code(name, f) {
    try { await f(); errors[name] = 'no error'; } catch (e) { errors[name] = e.code || String(e); }
  };
}

// outboxOf returns outbox(type, email): the newest out-of-band code of
// that request type sent to email, from the emulator endpoint at base.
function outboxOf(base, project) {
  return async function outbox(type, email) {
    const r = await fetch(`${base}/emulator/v1/projects/${project}/oobCodes`);
    const j = await r.json();
    const hits = j.oobCodes.filter((c) => c.requestType === type && c.email === email);
    return hits[hits.length - 1];
  };
}

module.exports = { recorder, outboxOf };
