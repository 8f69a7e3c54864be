import { startTestServer } from "/work/main/test/helpers";
const s = await startTestServer();
for (const r of (s.server.app as any).routes) console.log(r.method, r.path);
await s.stop();
