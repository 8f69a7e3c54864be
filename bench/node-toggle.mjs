// Issue 32's two toggle figures as its harness took them: from a Node client (not Bun's fetch) on one keep-alive
// connection. Plain JavaScript so `node` runs it as is; bench/delivery.ts spawns it and reads the JSON it prints.
//   node bench/node-toggle.mjs BASE_URL ADMIN_KEY SERVER_KEY SAMPLES
// 1. toggle: `samples` sequential toggles of killswitch-1 on prod, each timed from the request to the end of its answer;
// 2. ack -> SSE event: with a stream of prod open (its own connection), `samples` toggles of killswitch-2, each timed
//    from the end of the toggle's answer to the arrival of its stream event (0 when the event came first).
import http from "node:http";

const [base, adminKey, serverKey, samplesArg] = process.argv.slice(2);
const samples = Number(samplesArg);
const url = new URL(base);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const WARMUP = 20;

/** One toggle on the keep-alive agent; resolves with the time its answer ended. */
function toggle(name) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: `/api/admin/killswitches/${name}/toggle`,
        method: "POST",
        agent,
        headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json", "content-length": "2" },
      },
      (res) => {
        res.on("data", () => {});
        res.on("end", () => (res.statusCode === 200 ? resolve(performance.now()) : reject(new Error(`toggle answered ${res.statusCode}`))));
      },
    );
    req.on("error", reject);
    req.end("{}");
  });
}

const toggleMs = [];
for (let i = 0; i < WARMUP + samples; i++) {
  const start = performance.now();
  const end = await toggle("killswitch-1");
  if (i >= WARMUP) toggleMs.push(end - start);
}

// The stream: every non-comment event block resolves the oldest waiter with its arrival time.
const waiters = [];
const arrivals = [];
const stream = await new Promise((resolve, reject) => {
  const req = http.get({ host: url.hostname, port: url.port, path: "/api/sdk/v1/stream?env=prod", headers: { "x-sdk-key": serverKey } }, (res) => {
    if (res.statusCode !== 200) reject(new Error(`stream answered ${res.statusCode}`));
    res.setEncoding("utf8");
    let buffered = "";
    res.on("data", (chunk) => {
      const at = performance.now();
      buffered += chunk;
      for (let end = buffered.indexOf("\n\n"); end !== -1; end = buffered.indexOf("\n\n")) {
        const block = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (block.startsWith(":")) continue;
        const waiter = waiters.shift();
        if (waiter) waiter(at);
        else arrivals.push(at);
      }
    });
    resolve(req);
  });
  req.on("error", reject);
});
const nextEvent = () => (arrivals.length > 0 ? Promise.resolve(arrivals.shift()) : new Promise((resolve) => waiters.push(resolve)));

await nextEvent(); // the current snapshot
const ackToEventMs = [];
for (let i = 0; i < WARMUP + samples; i++) {
  const event = nextEvent();
  const ack = await toggle("killswitch-2");
  const arrived = await event;
  if (i >= WARMUP) ackToEventMs.push(Math.max(0, arrived - ack));
}
stream.destroy();
agent.destroy();
process.stdout.write(`${JSON.stringify({ toggleMs, ackToEventMs })}\n`);
