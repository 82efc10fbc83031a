/**
 * Soak: sustained mixed traffic against one running server, sampling its memory and handles, to see
 * whether they stay bounded. Not part of `npm run bench` (it needs a server you started yourself, with
 * METRICS_TOKEN set, so the figures are of that one process):
 *
 *   npx tsx tests/bench/soak.ts --url=http://127.0.0.1:3000 --email=… --password=… --token=… \
 *     [--seconds=180] [--clients=8] [--sockets=20] [--sample=10]
 *
 * Each client loops: a full page, XHR table pages with a different search/sort/page/perPage each time
 * (most searches unique, as a crowd of users typing would send), a note save now and then. Meanwhile
 * `sockets` live sockets are opened and closed over and over. Every `sample` seconds it prints RSS, heap
 * used, open file descriptors and active handles from /metrics (`SOAK` lines), and at the end the
 * growth from the first sample after warm-up to the last.
 */
import { randomUUID } from 'node:crypto';
import { io, type Socket } from 'socket.io-client';
import { TestClient } from '#tests/support/test-client.ts';
import { knob, textKnob } from './support/knobs.ts';

const url = textKnob('url', 'http://127.0.0.1:3000');
const email = textKnob('email', 'admin@rivals.local');
const password = textKnob('password', '');
const token = textKnob('token', '');
const seconds = knob('seconds', 180);
const clients = knob('clients', 8);
const sockets = knob('sockets', 20);
const sampleEvery = knob('sample', 10);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Sample {
  at: number;
  rss: number;
  heap: number;
  fds: number;
  handles: number;
}

async function sample(): Promise<Sample> {
  const text = await (
    await fetch(`${url}/metrics`, { headers: { Authorization: `Bearer ${token}` } })
  ).text();
  const read = (name: string) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? NaN);
  return {
    at: Date.now(),
    rss: read('process_resident_memory_bytes'),
    heap: read('nodejs_heap_size_used_bytes'),
    fds: read('process_open_fds'),
    handles: read('nodejs_active_handles_total'),
  };
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
const print = (s: Sample, requests: number, failures: number, connects: number) =>
  process.stdout.write(
    `SOAK t=${((s.at - started) / 1000).toFixed(0)}s rss=${mb(s.rss)}MB heap=${mb(s.heap)}MB fds=${s.fds} handles=${s.handles} requests=${requests} failures=${failures} socket-connects=${connects}\n`,
  );

const sorts = ['', 'name:asc', 'name:desc', 'updated_at:desc', 'priority:asc'];
const perPages = [10, 15, 25, 50, 100];
const words = ['a', 'e', 'forge', 'cloud', 'data', 'io', 'soft', 'zz', 'x'];

let requests = 0;
let failures = 0;
let connects = 0;
const started = Date.now();
const stopAt = started + seconds * 1000;

async function signedIn(): Promise<TestClient> {
  const client = new TestClient(url);
  await client.signIn(email, password);
  return client;
}

async function trafficLoop(client: TestClient, n: number, competitorIds: readonly string[]) {
  for (let k = 0; Date.now() < stopAt; k++) {
    const search =
      k % 3 === 0 ? '' : `${words[(k + n) % words.length]}${k % 2 ? randomUUID().slice(0, 4) : ''}`;
    const query = new URLSearchParams({
      search,
      sort: sorts[k % sorts.length] ?? '',
      page: String(1 + (k % 7)),
      perPage: String(perPages[k % perPages.length]),
    });
    const paths = [`/competitors?${query}`, `/users?${query}`, `/audit?${query}`];
    try {
      const response =
        k % 10 === 0
          ? await client.get('/competitors')
          : await client.get(paths[k % paths.length] ?? '/competitors', { xhr: true });
      await response.arrayBuffer();
      if (response.status !== 200) failures++;
      requests++;
      if (k % 5 === 0 && competitorIds.length > 0) {
        const save = await client.postJson('/components/competitor-notes', {
          event: 'update-note',
          payload: {
            competitorId: competitorIds[(k * 31 + n) % competitorIds.length],
            column: 'general',
            value: `soak ${randomUUID()}`,
          },
        });
        await save.arrayBuffer();
        if (save.status !== 200) failures++;
        requests++;
      }
    } catch {
      failures++;
    }
  }
}

async function socketChurn(cookie: string) {
  const open = (): Promise<Socket> =>
    new Promise((resolve) => {
      const socket = io(url, {
        transports: ['websocket'],
        reconnection: false,
        extraHeaders: { Cookie: cookie, Origin: url },
      });
      socket.once('connect', () => {
        connects++;
        resolve(socket);
      });
      socket.once('connect_error', () => {
        failures++;
        resolve(socket);
      });
    });
  while (Date.now() < stopAt) {
    const batch = await Promise.all(Array.from({ length: sockets }, open));
    await sleep(200);
    for (const socket of batch) socket.disconnect();
    await sleep(100);
  }
}

const first = await signedIn();
const ids = [
  ...new Set(
    [
      ...(await (await first.get('/competitors?perPage=100')).text()).matchAll(
        /data-row-id="([0-9a-f-]{36})"/g,
      ),
    ].map((m) => m[1] ?? ''),
  ),
];
// One after another: sign-ins of one account from one address in flight at once count against its 5 a
// minute (decision 0009), as a burst of guesses would.
const all = [first];
for (let i = 1; i < clients; i++) all.push(await signedIn());
const samples: Sample[] = [await sample()];
print(samples[0] as Sample, requests, failures, connects);
const sampler = setInterval(
  () =>
    void sample().then((s) => {
      samples.push(s);
      print(s, requests, failures, connects);
    }),
  sampleEvery * 1000,
);
await Promise.all([...all.map((c, n) => trafficLoop(c, n, ids)), socketChurn(first.cookieHeader())]);
clearInterval(sampler);
await sleep(2_000);
const last = await sample();
print(last, requests, failures, connects);
// Growth after warm-up: from the sample a third of the way in to the last.
const warm = samples[Math.floor(samples.length / 3)] ?? samples[0];
if (warm)
  process.stdout.write(
    `SOAK growth after warm-up (${((last.at - warm.at) / 1000).toFixed(0)} s): rss ${mb(last.rss - warm.rss)}MB, heap ${mb(last.heap - warm.heap)}MB, fds ${last.fds - warm.fds}, handles ${last.handles - warm.handles}; ${requests} requests (${failures} failed), ${connects} socket connects\n`,
  );
process.exit(0);
