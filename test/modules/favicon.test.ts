import { afterAll, beforeAll, expect, test } from "bun:test";
import { type TestServer, startTestServer } from "../helpers";

// Issue 27, item 15: browsers ask for /favicon.ico on every page; it comes from the binary, no sign-in needed.
let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  await ts.stop();
});

test("GET /favicon.ico is the icon, served by the server itself", async () => {
  const res = await fetch(`${ts.url}/favicon.ico`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toStartWith("image/svg+xml");
  expect(res.headers.get("cache-control")).toContain("max-age=");
  const body = await res.text();
  expect(body).toStartWith("<svg");
  // Nothing in it points elsewhere: no request leaves the server.
  expect(body).not.toMatch(/href=|url\(/);
});
