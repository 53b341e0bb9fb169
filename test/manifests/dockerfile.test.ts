/**
 * The image (SPEC §9; issue 9): no Docker engine runs here, so the Dockerfile is read as text — stages, the
 * Node 24 slim runtime, production dependencies only (installed in a stage of their own), no package manager
 * in the final stage, both ports exposed, a numeric non-root user, tini running `node dist/cli.js serve` —
 * and what it relies on is checked for real: `npm run build` produces the entrypoint,
 * `node dist/cli.js --help` runs it, and nothing the compiled output imports is a dev dependency (the
 * runtime stage installs none).
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { builtinModules } from "node:module";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { imageNodeOptions } from "../../bench/image.js";
import { getPath, isRecord, type KubeObject } from "../../src/kube/object.js";
import { dockerInstructions, dockerStages, execForm, type Stage } from "./helpers.js";

const run = promisify(execFile);

/**
 * Module specifiers of tsc's ESM output: `import … from "x"` / `export … from "x"` statements (which may span
 * lines), bare `import "x"`, and `import("x")`.
 */
const MODULE_SPECIFIERS =
  /^(?:import|export)\s+(?:type\s+)?(?:\{[^}]*\}|\*(?:\s+as\s+\w+)?|\w+(?:\s*,\s*(?:\{[^}]*\}|\*\s+as\s+\w+))?)\s*from\s*["']([^"']+)["']|^import\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/gm;

let stages: Stage[];
let dockerignore: string[];
let packageJson: { dependencies: Record<string, string>; devDependencies: Record<string, string> };

beforeAll(async () => {
  stages = dockerStages(dockerInstructions(await readFile("Dockerfile", "utf8")));
  dockerignore = (await readFile(".dockerignore", "utf8"))
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
  packageJson = JSON.parse(await readFile("package.json", "utf8"));
});

const runtime = () => stages[stages.length - 1]!;
const build = () => stages[0]!;
const args = (stage: Stage, keyword: string) =>
  stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);

describe("Dockerfile (SPEC §9)", () => {
  it("is multi-stage: a build stage and a Node 24 LTS slim runtime (Node 20 reached end of life on 2026-04-30)", () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(build().from).toMatch(/^node:24(\.\d+)*(-[a-z0-9]+)*-slim(@sha256:[0-9a-f]{64})?( AS \w+)?$/i);
    expect(runtime().from).toMatch(/^node:24(\.\d+)*(-[a-z0-9]+)*-slim(@sha256:[0-9a-f]{64})?$/);
    expect(build().name).toBeDefined();
  });

  it("the build stage installs with the lock file and runs `npm run build`", () => {
    expect(args(build(), "RUN").some((r) => /\bnpm ci\b/.test(r))).toBe(true);
    expect(args(build(), "RUN").some((r) => /\bnpm run build\b/.test(r))).toBe(true);
  });

  it("production dependencies only: a stage of their own installs them from the lock file, the runtime copies node_modules and dist/", () => {
    const dependencies = stages.find(
      (stage) => stage !== runtime() && args(stage, "RUN").some((r) => /\bnpm ci\b.*--omit=dev\b/.test(r)),
    );
    expect(dependencies?.name).toBeDefined();
    expect(dependencies?.from).toBe(runtime().from);
    for (const install of args(dependencies!, "RUN").filter((r) => /\bnpm (ci|install|i)\b/.test(r)))
      expect(install).toMatch(/\bnpm ci\b.*--omit=dev\b/);
    expect(args(runtime(), "COPY")).toContainEqual(
      `--from=${dependencies!.name} /app/node_modules ./node_modules`,
    );
    expect(args(runtime(), "COPY")).toContainEqual(`--from=${build().name} /app/dist ./dist`);
    // No sources and no build tool in the runtime image.
    for (const copy of args(runtime(), "COPY")) expect(copy).not.toMatch(/\bsrc\b/);
  });

  it("no npm or build tooling in the final stage: it runs none, and removes the base image's npm, npx, corepack and yarn", () => {
    const PACKAGE_MANAGERS = ["npm", "npx", "corepack", "yarn", "yarnpkg"];
    const runs = args(runtime(), "RUN");
    const commands = runs.flatMap((r) => r.split(/&&|\|\||;|\|/).map((c) => c.trim().split(/\s+/)[0] ?? ""));
    for (const manager of PACKAGE_MANAGERS) expect(commands, manager).not.toContain(manager);
    // The node image's layout (nodejs/docker-node 24/bookworm-slim): Node's tarball under /usr/local, yarn 1
    // under /opt with links in /usr/local/bin.
    const removed = runs
      .filter((r) => /\brm -rf\b/.test(r))
      .flatMap((r) => r.split(/\s+/))
      .filter((w) => w.startsWith("/"));
    for (const path of [
      "/usr/local/lib/node_modules/npm",
      "/usr/local/lib/node_modules/corepack",
      "/usr/local/bin/npm",
      "/usr/local/bin/npx",
      "/usr/local/bin/corepack",
      "/usr/local/bin/yarn",
      "/usr/local/bin/yarnpkg",
      "/opt/yarn-v*",
      "/usr/local/include/node",
    ])
      expect(removed, path).toContain(path);
  });

  it("EXPOSEs the webhook port and the metrics port, as the Deployment's container declares them", async () => {
    const exposed = args(runtime(), "EXPOSE").flatMap((e) => e.split(/\s+/));
    expect(exposed.sort()).toEqual(["8443", "9443"]);
    const deployment = parseAllDocuments(await readFile("manifests/base/deployment.yaml", "utf8"))
      .map((d) => d.toJS() as KubeObject)
      .find((o) => o.kind === "Deployment");
    const containers = getPath(deployment, ["spec", "template", "spec", "containers"]) as {
      ports: { containerPort: number }[];
    }[];
    const ports = containers[0]?.ports ?? [];
    expect(ports.map((p) => String(p.containerPort)).sort()).toEqual(exposed);
  });

  it("runs as a numeric non-root user", () => {
    const users = args(runtime(), "USER");
    expect(users.length).toBeGreaterThan(0);
    const last = users[users.length - 1]!;
    const [uid, gid] = last.split(":");
    expect(uid).toMatch(/^[0-9]+$/);
    expect(Number(uid)).toBeGreaterThan(0);
    if (gid !== undefined) expect(gid).toMatch(/^[0-9]+$/);
  });

  it("ENTRYPOINT runs `node dist/cli.js` under tini (exec form) with `serve` as the default argument, so every subcommand runs from the image (SPEC §9)", () => {
    const entrypoints = args(runtime(), "ENTRYPOINT");
    expect(entrypoints).toHaveLength(1);
    const entrypoint = execForm(entrypoints[0]!);
    expect(entrypoint).toBeDefined();
    expect(entrypoint!.slice(0, 2)).toEqual(["/usr/bin/tini", "--"]);
    expect(entrypoint!.slice(2)).toEqual(["node", "dist/cli.js"]);
    expect(args(runtime(), "RUN").some((r) => /apt-get install\b.*\btini\b/.test(r))).toBe(true);
    const cmds = args(runtime(), "CMD");
    expect(cmds).toHaveLength(1);
    expect(execForm(cmds[0]!)).toEqual(["serve"]);
  });

  it("caps V8's young generation at 32 MB semi-spaces through NODE_OPTIONS, half Node 24's own (decision 96), which the bench reads too", async () => {
    const env = args(runtime(), "ENV").join(" ");
    expect(env).toMatch(/(^|\s)NODE_OPTIONS=--max-semi-space-size=32(\s|$)/);
    expect(imageNodeOptions(await readFile("Dockerfile", "utf8"))).toEqual(["--max-semi-space-size=32"]);
  });

  it("the installer Deployment's command uses the same tini and entrypoint script", async () => {
    const documents = parseAllDocuments(await readFile("manifests/installer/installer.yaml", "utf8"));
    const deployment = documents.map((d) => d.toJS() as KubeObject).find((o) => o.kind === "Deployment");
    const containers = getPath(deployment, ["spec", "template", "spec", "containers"]) as {
      command?: string[];
    }[];
    const command = containers[0]?.command;
    const entrypoint = execForm(args(runtime(), "ENTRYPOINT")[0]!)!;
    expect(command).toEqual([...entrypoint, "installer"]);
  });

  it("every path the build stage copies exists, and tsconfig.build.json compiles nothing else", async () => {
    const copied = args(build(), "COPY")
      .filter((c) => !c.startsWith("--from"))
      .flatMap((c) => c.split(/\s+/).slice(0, -1));
    for (const path of copied) expect(existsSync(path), path).toBe(true);
    const tsconfig: unknown = JSON.parse(await readFile("tsconfig.build.json", "utf8"));
    const include = getPath(isRecord(tsconfig) ? tsconfig : undefined, ["include"]) as string[];
    for (const path of include) expect(copied).toContain(path);
    expect(copied).toContain(
      String(getPath(tsconfig as Record<string, unknown>, ["extends"])).replace(/^\.\//, ""),
    );
  });

  it(".dockerignore keeps local state, keys and host builds out of the context", () => {
    for (const path of ["node_modules", "dist", ".local", "certs", ".git"])
      expect(dockerignore).toContain(path);
    for (const path of ["src", "package.json", "package-lock.json", "tsconfig.json", "tsconfig.build.json"])
      expect(dockerignore).not.toContain(path);
  });
});

describe("the build output the image runs", () => {
  beforeAll(async () => {
    await run("npm", ["run", "build"], { timeout: 170_000 });
  }, 180_000);

  it("dist/cli.js exists and `node dist/cli.js --help`, with the image's NODE_OPTIONS, lists serve and installer", async () => {
    expect(existsSync("dist/cli.js")).toBe(true);
    // Node refuses to start at all on a flag NODE_OPTIONS may not carry: run it as the image does.
    const env = {
      ...process.env,
      NODE_OPTIONS: imageNodeOptions(await readFile("Dockerfile", "utf8")).join(" "),
    };
    const { stdout } = await run(process.execPath, ["dist/cli.js", "--help"], { timeout: 20_000, env });
    expect(stdout).toContain("usage: machine-api-migration");
    expect(stdout).toMatch(/^\s+serve\s/m);
    expect(stdout).toMatch(/^\s+installer\s/m);
  });

  it("the compiled output imports only Node built-ins and production dependencies", async () => {
    const files = (await readdir("dist", { recursive: true })).filter((f) => f.endsWith(".js"));
    expect(files.length).toBeGreaterThan(0);
    const builtins = new Set(builtinModules);
    const allowed = new Set(Object.keys(packageJson.dependencies));
    const offending: string[] = [];
    for (const file of files) {
      const text = await readFile(join("dist", file), "utf8");
      for (const m of text.matchAll(MODULE_SPECIFIERS)) {
        const specifier = (m[1] ?? m[2] ?? m[3])!;
        if (specifier.startsWith(".")) continue;
        if (specifier.startsWith("node:") || builtins.has(specifier)) continue;
        const name = specifier.startsWith("@")
          ? specifier.split("/").slice(0, 2).join("/")
          : specifier.split("/")[0]!;
        if (!allowed.has(name)) offending.push(`${file}: ${specifier}`);
      }
    }
    expect(offending).toEqual([]);
  });
});
