import { apiOf, call } from "../../../web/dashboard/api";
import { DataTable } from "../../../web/dashboard/data-table";
import { notLoaded } from "../../../web/dashboard/detail-frame";
import type { DashboardModule } from "../../../web/dashboard/registry";
import { CopyButton, Link, useLoad } from "../../../web/dashboard/ui";
import { kilobytes } from "../format";
import type { sdkPackageRoutes } from "../routes";

const sdkApi = apiOf<ReturnType<typeof sdkPackageRoutes>>();
const loadInfo = () => call(sdkApi.sdk.get());

/** One way to install, its line with a copy button. */
function InstallLine({ id, title, hint, line }: { id: string; title: string; hint: string; line: string }) {
  return (
    <section class="panel" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      <p class="hint">{hint}</p>
      <pre class="command">
        <code>{line}</code>
      </pre>
      <CopyButton text={line} label={`Copy: ${title}`} />
    </section>
  );
}

/** The SDK this server carries (GET /sdk) and the lines that install it from here, as `svc sdk install` prints them. */
function InstallPage() {
  const load = useLoad(loadInfo, []);
  const data = load.data;
  return (
    <>
      <h1>Install the SDK</h1>
      {notLoaded(load) ?? (
        <>
          <p>
            This server serves its own SDK, <strong>svc-sdk {data!.version}</strong>, with no registry: install it from here, and again after upgrading the server (package.json records the
            URL). Then read flags with a key from <Link href="/keys">SDK keys</Link>: a server key on your servers, a browser key in code that ships to users.
          </p>
          <InstallLine id="install-npm" title="The npm package" hint="Node, Bun and bundlers; then import from svc-sdk." line={data!.install.npm} />
          <InstallLine id="install-module" title="One ES module, for servers and scripts" hint="Deno, Bun and Node scripts; it reads the snapshot with a server key." line={data!.install.module} />
          <InstallLine
            id="install-browser"
            title="One ES module, for browsers"
            hint="The browser mode: evaluated answers only, with a browser key, safe in code that ships to users."
            line={data!.install.browserModule}
          />
          <section class="panel" aria-labelledby="install-files">
            <h2 id="install-files">Files</h2>
            <div class="table-scroll">
              <DataTable
                caption="The SDK's files as this server serves them"
                rows={data!.files}
                rowKey={(f) => f.path}
                rowHeader={{ header: "Path", cell: (f) => <code>{f.path}</code> }}
                columns={[
                  { header: "Size", cell: (f) => kilobytes(f.bytes) },
                  { header: "Gzipped", cell: (f) => (f.gzipBytes === null ? "not compressed" : kilobytes(f.gzipBytes)) },
                  { header: "ETag", cell: (f) => f.etag, class: "mono" },
                ]}
              />
            </div>
          </section>
        </>
      )}
    </>
  );
}

export const sdkPackageDashboard: DashboardModule = {
  // Beside SDK keys (60): what the keys are for.
  pages: [{ path: "/install", title: "Install the SDK", nav: { label: "Install the SDK", order: 61, group: "project" }, view: InstallPage }],
};
