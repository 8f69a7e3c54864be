import { t } from "elysia";

const EXAMPLE = {
  version: "0.1.0",
  baseUrl: "https://flags.example.com",
  files: [
    { path: "/sdk/svc-sdk.tgz", contentType: "application/gzip", bytes: 88552, gzipBytes: null, etag: '"2lk1r8a0x3c9f"' },
    { path: "/sdk/svc.js", contentType: "text/javascript; charset=utf-8", bytes: 61204, gzipBytes: 15873, etag: '"1x0q7d2m9v4kb"' },
    { path: "/sdk/svc-browser.js", contentType: "text/javascript; charset=utf-8", bytes: 21870, gzipBytes: 7412, etag: '"3h5c0w1p8z2nj"' },
  ],
  install: {
    npm: "npm install https://flags.example.com/sdk/svc-sdk.tgz",
    module: 'import { createClient } from "https://flags.example.com/sdk/svc.js";',
    browserModule: 'import { createBrowserClient } from "https://flags.example.com/sdk/svc-browser.js";',
  },
};

const SdkFileSchema = t.Object({
  path: t.String({ description: "Where the server serves the file (public, CORS for any origin)" }),
  contentType: t.String(),
  bytes: t.Number({ description: "Its size as sent without compression" }),
  gzipBytes: t.Union([t.Number(), t.Null()], { description: "Its size gzipped, sent to clients that accept gzip (null: sent as it is)" }),
  etag: t.String({ description: "Its strong ETag: a new server version is a new tag at the same path" }),
});

export const SdkInfoSchema = t.Object(
  {
    version: t.String({ description: "The SDK version this server carries (the server's own: install again after upgrading it)" }),
    baseUrl: t.String({ description: "The origin the install lines use: SERVICE_PUBLIC_URL, else the one this request reached" }),
    files: t.Array(SdkFileSchema),
    install: t.Object({
      npm: t.String({ description: "Installs the npm package straight from this server (package.json records the URL)" }),
      module: t.String({ description: "The SDK as one ES module, for servers, Deno and Bun scripts: takes a server key" }),
      browserModule: t.String({ description: "The browser mode as one ES module: takes a browser key, safe to ship to users" }),
    }),
  },
  { title: "SdkInfo", examples: [EXAMPLE] },
);
