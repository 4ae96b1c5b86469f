// steps.cjs is the step printer of the Node step scripts (e2e/*/*.cjs):
// one JSON line {"step", "ok", "got"|"error", "ms"} per step, which the Go
// tests check (internal/e2etest.RunSteps, CheckSteps); ms is how long the
// step took (e2e/userbench sums them).
'use strict';

// steps returns step(name, f), which runs f for at most ms milliseconds
// and prints its line, and failed(), whether a step has failed (the
// scripts exit 1 then).
function steps(ms) {
  let failed = false;
  const step = async (name, f) => {
    const t0 = performance.now();
    const took = () => Math.round((performance.now() - t0) * 1000) / 1000;
    try {
      const got = await Promise.race([f(), new Promise((_, rej) => setTimeout(() => rej(new Error(`timeout ${ms}ms`)), ms))]);
      console.log(JSON.stringify({ step: name, ok: true, got: got ?? null, ms: took() }));
    } catch (e) {
      failed = true;
      console.log(JSON.stringify({ step: name, ok: false, error: `${e.code || ''} ${e.message}`, ms: took() }));
    }
  };
  return { step, failed: () => failed };
}

module.exports = { steps };
