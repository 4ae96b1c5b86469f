// The Node client (@google-cloud/pubsub, as firebase-tools pins it)
// against PUBSUB_EMULATOR_HOST: topics, subscriptions, publish with
// attributes and ordering keys, streaming receive and ack, and errors.
// Names end with SUFFIX so runs do not collide.
'use strict';
const { PubSub } = require('@google-cloud/pubsub');
const { steps } = require('../js/steps.cjs');

async function main() {
  const { step, failed } = steps(30000);
  const sfx = process.env.SUFFIX;
  const ps = new PubSub({ projectId: 'node-project' });
  const strip = (s) => String(s).split(sfx).join('X');
  let topic, sub;
  await step('create topic', async () => { [topic] = await ps.createTopic('nt-' + sfx); return strip(topic.name); });
  await step('create topic again', async () => { await ps.createTopic('nt-' + sfx); });
  await step('create subscription', async () => {
    [sub] = await topic.createSubscription('ns-' + sfx, { enableMessageOrdering: true, ackDeadlineSeconds: 20 });
    const [meta] = await sub.getMetadata();
    return { name: strip(meta.name), topic: strip(meta.topic), ackDeadlineSeconds: meta.ackDeadlineSeconds, ordering: meta.enableMessageOrdering };
  });
  await step('publish', async () => {
    const pub = ps.topic('nt-' + sfx, { messageOrdering: true });
    const ids = [];
    for (let i = 0; i < 5; i++) {
      ids.push(await pub.publishMessage({ data: Buffer.from('m' + i), attributes: { i: String(i) }, orderingKey: 'k' }));
    }
    return ids.every((id) => /^[0-9]+$/.test(id)) ? ids.length : ids;
  });
  await step('receive in order', async () => new Promise((resolve, reject) => {
    const got = [];
    const s = ps.subscription('ns-' + sfx);
    s.on('error', reject);
    s.on('message', (m) => {
      got.push({ data: m.data.toString(), attributes: m.attributes, orderingKey: m.orderingKey, attempt: m.deliveryAttempt });
      m.ack();
      if (got.length === 5) { s.close().then(() => resolve(got)); }
    });
  }));
  await step('get missing topic', async () => { await ps.topic('missing-' + sfx).getMetadata(); });
  await step('publish to missing topic', async () => { await ps.topic('missing-' + sfx).publishMessage({ data: Buffer.from('x') }); });
  await step('subscription to missing topic', async () => { await ps.topic('missing-' + sfx).createSubscription('ns2-' + sfx); });
  await step('bad ack deadline', async () => { await topic.createSubscription('ns3-' + sfx, { ackDeadlineSeconds: 700 }); });
  await step('list topic subscriptions', async () => { const [subs] = await topic.getSubscriptions(); return subs.map((s) => strip(s.name)); });
  await step('delete subscription', async () => { await sub.delete(); return true; });
  await step('delete it again', async () => { await sub.delete(); });
  await step('delete topic', async () => { await topic.delete(); return true; });
  await ps.close();
  process.exit(failed() ? 1 : 0);
}
main().catch((e) => { console.error(e); process.exit(2); });
