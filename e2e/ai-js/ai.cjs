// Drives pyric's AI Logic endpoints with the official firebase/ai SDK
// (firebase@12.19.0) through RequestOptions.baseUrl, on the Google AI and
// the Vertex AI backends, and prints one JSON line of observations for the
// Go test to assert.
const { initializeApp } = require('firebase/app');
const { getAI, getGenerativeModel, GoogleAIBackend, VertexAIBackend, AgentPlatformBackend, Schema } = require('firebase/ai');

const base = process.env.AI_BASE_URL;
const project = process.env.PROJECT;
const opts = { baseUrl: base };
const app = initializeApp({ projectId: project, apiKey: 'test-key', appId: '1:1:web:1' });
const badApp = initializeApp({ projectId: project, apiKey: 'wrong-key', appId: '1:1:web:1' }, 'bad');
const google = getAI(app, { backend: new GoogleAIBackend() });
const vertex = getAI(app, { backend: new VertexAIBackend('us-central1') });
const out = {};

async function failure(fn) {
  try {
    await fn();
    return { ok: true };
  } catch (e) {
    const d = e.customErrorData || {};
    return { code: e.code, status: d.status, message: e.message, details: (d.errorDetails || []).map(x => x['@type']) };
  }
}

async function script(entries) {
  const r = await fetch(`${base}/emulator/v1/projects/${project}/ai/script`, { method: 'PUT', body: JSON.stringify(entries) });
  if (!r.ok) throw new Error('script: ' + r.status + ' ' + await r.text());
}

async function main() {
  const model = getGenerativeModel(google, { model: 'gemini-2.5-flash' }, opts);

  const g = await model.generateContent('Say hello to pyric');
  out.generate = { text: g.response.text(), finish: g.response.candidates[0].finishReason, total: g.response.usageMetadata.totalTokenCount, keys: Object.keys(g.response.candidates[0]).filter(k => g.response.candidates[0][k] !== undefined).sort() };

  const s = await model.generateContentStream('one two three four five six');
  const chunks = [];
  for await (const c of s.stream) chunks.push(c.text());
  const agg = await s.response;
  out.stream = { chunks, text: agg.text(), finish: agg.candidates[0].finishReason };

  await script([{ text: 'Nice to meet you, Ada.' }, { match: { contains: 'my name' }, text: 'Your name is Ada.' }]);
  const chat = model.startChat();
  const c1 = await chat.sendMessage('I am Ada.');
  const c2 = await chat.sendMessageStream('What is my name?');
  let streamed = '';
  for await (const c of c2.stream) streamed += c.text();
  await c2.response;
  const history = await chat.getHistory();
  out.chat = { first: c1.response.text(), second: streamed, roles: history.map(h => h.role) };

  const tools = [{ functionDeclarations: [{ name: 'get_weather', description: 'Weather of a city', parameters: Schema.object({ properties: { city: Schema.string() } }) }] }];
  const fnModel = getGenerativeModel(google, { model: 'gemini-flash-lite-latest', tools, toolConfig: { functionCallingConfig: { mode: 'ANY' } } }, opts);
  const fc = await fnModel.generateContent('Weather in Paris?');
  const calls = fc.response.functionCalls();
  const turn = fc.response.candidates[0].content;
  const autoModel = getGenerativeModel(google, { model: 'gemini-flash-lite-latest', tools }, opts);
  const fnChat = autoModel.startChat({ history: [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }, turn] });
  const answer = await fnChat.sendMessage([{ functionResponse: { name: 'get_weather', id: calls[0].id, response: { temp: 22 } } }]);
  const stripped = { role: 'model', parts: turn.parts.map(p => ({ functionCall: p.functionCall })) };
  out.functions = {
    name: calls[0].name, id: calls[0].id, args: calls[0].args, signed: typeof turn.parts[0].thoughtSignature === 'string',
    answer: answer.response.text(),
    missingSignature: await failure(() => autoModel.generateContent({ contents: [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }, stripped, { role: 'function', parts: [{ functionResponse: { name: 'get_weather', response: { temp: 22 } } }] }] })),
  };

  const ct = await model.countTokens('Say hello to pyric');
  out.count = { keys: Object.keys(ct).sort(), total: ct.totalTokens };

  const raw = { candidates: [{ content: { parts: [{ text: 'The weather in Paris is clear with a temperature of 22°C.', thoughtSignature: 'EjQKMgERTTIPevU90Ul2ojBMEUvswVEQtpH2CCkaYfhCK46N4QViRsL43qnucf+qpsd7e0Nd' }], role: 'model' }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 89, candidatesTokenCount: 16, totalTokenCount: 105, promptTokensDetails: [{ modality: 'TEXT', tokenCount: 89 }], serviceTier: 'standard' }, modelVersion: 'gemini-3.1-flash-lite', responseId: 'JE9QavatJPON_PUP2quBsQw' };
  await script([{ text: 'Scripted, exactly.' }, { raw }, { chunks: ['al', 'pha', ' beta'] }]);
  const v1 = await model.generateContent('anything');
  const v2 = await model.generateContent('anything');
  const v3 = await model.generateContentStream('anything');
  const v3chunks = [];
  for await (const c of v3.stream) v3chunks.push(c.text());
  out.scripted = { text: v1.response.text(), raw: v2.response.text(), signature: v2.response.candidates[0].content.parts[0].thoughtSignature, usage: v2.response.usageMetadata.totalTokenCount, chunks: v3chunks };

  const vmodel = getGenerativeModel(vertex, { model: 'gemini-2.5-flash' }, opts);
  const vg = await vmodel.generateContent('Say hello to pyric');
  const vc = await vmodel.countTokens('Say hello to pyric');
  const vs = await vmodel.generateContentStream('one two three four');
  let vtext = '';
  for await (const c of vs.stream) vtext += c.text();
  const ap = await getGenerativeModel(getAI(app, { backend: new AgentPlatformBackend() }), { model: 'gemini-2.5-flash' }, opts).generateContent('Say hello to pyric');
  out.vertex = { text: vg.response.text(), total: vc.totalTokens, stream: vtext, agentPlatform: ap.response.text() };

  const json = await getGenerativeModel(google, { model: 'gemini-2.5-flash', generationConfig: { responseMimeType: 'application/json', responseSchema: Schema.object({ properties: { word: Schema.string(), n: Schema.integer() } }) } }, opts).generateContent('a word');
  out.json = JSON.parse(json.response.text());

  // candidateCount > 1: that many candidates, in generateContent and in
  // the stream (the SDK aggregates streamed candidates by index); a
  // scripted answer per candidate.
  const texts = (r) => r.candidates.map((c) => ({ index: c.index, text: c.content.parts.map((p) => p.text).join('') }));
  const three = getGenerativeModel(google, { model: 'gemini-2.5-flash', generationConfig: { candidateCount: 3 } }, opts);
  const many = await three.generateContent('pick one');
  const manyStream = await getGenerativeModel(vertex, { model: 'gemini-2.5-flash', generationConfig: { candidateCount: 2 } }, opts).generateContentStream('one two three four');
  for await (const _ of manyStream.stream) { }
  await script([{ text: 'first choice' }, { text: 'second choice' }]);
  const manyScripted = await getGenerativeModel(google, { model: 'gemini-2.5-flash', generationConfig: { candidateCount: 2 } }, opts).generateContent('choose');
  out.candidates = {
    generate: texts(many.response),
    stream: texts(await manyStream.response),
    scripted: texts(manyScripted.response),
    refused: await failure(() => getGenerativeModel(google, { model: 'gemini-3-flash-preview', generationConfig: { candidateCount: 2 } }, opts).generateContent('x')),
    tooMany: await failure(() => getGenerativeModel(google, { model: 'gemini-2.5-flash', generationConfig: { candidateCount: 9 } }, opts).generateContent('x')),
  };

  out.errors = {
    unknownModel: await failure(() => getGenerativeModel(google, { model: 'not-a-real-model' }, opts).generateContent('x')),
    retiredModel: await failure(() => getGenerativeModel(vertex, { model: 'gemini-1.5-flash' }, opts).generateContent('x')),
    badApiKey: await failure(() => getGenerativeModel(getAI(badApp, { backend: new GoogleAIBackend() }), { model: 'gemini-2.5-flash' }, opts).generateContent('x')),
    emptyContents: await failure(() => model.generateContent({ contents: [] })),
    badRole: await failure(() => model.generateContent({ contents: [{ role: 'banana', parts: [{ text: 'x' }] }] })),
    streamUnknown: await failure(async () => { const r = await getGenerativeModel(google, { model: 'nope' }, opts).generateContentStream('x'); for await (const _ of r.stream) { } }),
  };
  console.log(JSON.stringify(out));
}

main().catch(e => { console.error(e); process.exit(1); });
