/**
 * The deployment files of issue 16 (deploy/, docs/operations.md): systemd
 * accepts the unit (when systemd-analyze is on the machine) with its
 * hardening in place, and the backup settings that the unit, the compose
 * file and the Litestream recipe carry are ones svc itself accepts.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { backupScheduleOf } from "../../src/lib/backups";
import { networkOptionsFromEnv } from "../../src/lib/network";
import { tempDir } from "../helpers";

const ROOT = resolve(import.meta.dir, "../..");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const UNIT = read("deploy/svc.service");
const systemdAnalyze = Bun.which("systemd-analyze");

/** `Environment=A=1 B=2` lines of a unit, as one map. */
function unitEnvironment(unit: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of unit.split("\n")) {
    const m = /^Environment=(.*)$/.exec(line);
    if (!m) continue;
    for (const pair of m[1]!.split(/\s+/)) {
      const i = pair.indexOf("=");
      env[pair.slice(0, i)] = pair.slice(i + 1);
    }
  }
  return env;
}

describe("deploy/svc.service", () => {
  test.skipIf(!systemdAnalyze)("systemd-analyze verify accepts it, without a single warning", () => {
    // verify insists that ExecStart's program exists: point it at an executable that does.
    const dir = tempDir();
    const unit = join(dir, "svc.service");
    writeFileSync(unit, UNIT.replace("ExecStart=/usr/local/bin/svc", `ExecStart=${process.execPath}`));
    const result = Bun.spawnSync([systemdAnalyze!, "verify", unit], { stderr: "pipe", stdout: "pipe" });
    expect(result.stderr.toString()).toBe("");
    expect(result.exitCode).toBe(0);
    // And it is really checked: an unknown key is reported.
    writeFileSync(unit, UNIT.replace("ExecStart=/usr/local/bin/svc", `ExecStart=${process.execPath}`).replace("PrivateTmp=yes", "PrivateTmp=yes\nProtectEverything=yes"));
    expect(Bun.spawnSync([systemdAnalyze!, "verify", unit], { stderr: "pipe" }).stderr.toString()).toContain("Unknown key 'ProtectEverything'");
  });

  test("runs `svc serve` with its hardening, and without what would stop JavaScriptCore", () => {
    expect(UNIT).toContain("ExecStart=/usr/local/bin/svc serve\n");
    for (const line of [
      "DynamicUser=yes",
      "StateDirectory=svc svc-backups",
      "ProtectSystem=strict",
      "ProtectHome=yes",
      "PrivateTmp=yes",
      "NoNewPrivileges=yes",
      "CapabilityBoundingSet=",
      "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX",
      "SystemCallFilter=@system-service",
      "SystemCallErrorNumber=EPERM",
      "UMask=0077",
      "KillSignal=SIGTERM",
    ]) {
      expect(UNIT.split("\n")).toContain(line);
    }
    expect(UNIT).not.toMatch(/^MemoryDenyWriteExecute=/m);
  });

  test("its settings are ones svc accepts", () => {
    const env = unitEnvironment(UNIT);
    expect(env.SERVICE_DATA_DIR).toBe("/var/lib/svc");
    expect(backupScheduleOf({}, env)).toEqual({ dir: "/var/lib/svc-backups", everyMs: 6 * 3600_000, keep: 28 });
    expect(env.HOST).toBe("127.0.0.1");
  });

  test("its JavaScriptCore settings are the Dockerfile's, and the ones the bench runs svc with", () => {
    const jsc = (env: Record<string, string>) => Object.fromEntries(Object.entries(env).filter(([name]) => name.startsWith("BUN_JSC_")));
    const docker = Object.fromEntries([...read("Dockerfile").matchAll(/^ENV (BUN_JSC_\w+)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
    const bench = /const SHIPPED_GC_SETTINGS = (\{[^}]*\});/.exec(read("bench/lib.ts"));
    expect(Object.keys(docker).sort()).toEqual(["BUN_JSC_forceRAMSize", "BUN_JSC_minEdenToOldGenerationRatio"]);
    expect(jsc(unitEnvironment(UNIT))).toEqual(docker);
    expect(bench).not.toBeNull();
    expect(JSON.parse(bench![1]!.replace(/(\w+):/g, '"$1":'))).toEqual(docker);
    // And the operations guide names the value shipped.
    expect(read("docs/operations.md")).toContain(`BUN_JSC_minEdenToOldGenerationRatio=${docker.BUN_JSC_minEdenToOldGenerationRatio}\``);
  });
});

describe("deploy/compose.yaml and deploy/litestream.yml", () => {
  test("the compose service's settings are ones svc accepts", () => {
    const compose = Bun.YAML.parse(read("deploy/compose.yaml")) as any;
    const env = compose.services.svc.environment as Record<string, string>;
    expect(backupScheduleOf({}, env)).toEqual({ dir: "/backups", everyMs: 6 * 3600_000, keep: 28 });
    expect(networkOptionsFromEnv(env)).toEqual({ publicUrl: "https://flags.example.com", trustedProxies: ["loopback", "uniquelocal"] });
    expect(compose.services.svc.volumes).toContain("svc-data:/data");
  });

  test("Litestream replicates the unit's service.db", () => {
    const config = Bun.YAML.parse(read("deploy/litestream.yml")) as any;
    expect(config.dbs[0].path).toBe(`${unitEnvironment(UNIT).SERVICE_DATA_DIR}/service.db`);
    expect(config.dbs[0].replicas[0].url).toMatch(/^s3:\/\//);
  });

  test("the README links the operations guide, which links every deploy file", () => {
    expect(read("README.md")).toContain("docs/operations.md");
    const guide = read("docs/operations.md");
    for (const file of ["deploy/svc.service", "deploy/compose.yaml", "deploy/litestream.yml"]) expect(guide).toContain(file);
  });
});
