/**
 * The real control plane of SPEC §8.1: etcd, kube-apiserver and kube-controller-manager (garbage collector
 * and namespace controller) built from Kubernetes' own Go modules at the versions pinned in
 * `test/cluster/controlplane/go.mod`, cached outside the repo keyed by those versions, and started on free
 * loopback ports with RBAC and OpenShift's default admission plugins (`OwnerReferencesPermissionEnforcement`
 * among them).
 *
 * Every process is started through the module's `reaper`, so the kernel kills it when the test worker that
 * started it dies, however it dies; `stop()` ends them in order on the way out. What runs on the control
 * plane (CRDs, RBAC, identities, webhooks) is the backend's business (./backend.ts), not this file's.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createHash, generateKeyPairSync, randomBytes } from "node:crypto";
import { createWriteStream, existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { homedir, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import {
  type CertificateAuthority,
  createCertificateAuthority,
  issueServingCertificate,
} from "../../src/server/certs.js";
import { acquireBuildLock, releaseBuildLock } from "./build-lock.js";

const run = promisify(execFile);
const MODULE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "controlplane");
const PROGRAMS = {
  etcd: "go.etcd.io/etcd/server/v3",
  "kube-apiserver": "k8s.io/kubernetes/cmd/kube-apiserver",
  "kube-controller-manager": "k8s.io/kubernetes/cmd/kube-controller-manager",
  reaper: "./reaper",
} as const;
type Program = keyof typeof PROGRAMS;

export interface Binaries {
  dir: string;
  kubernetesVersion: string;
  etcdVersion: string;
  path(program: Program): string;
}

/** The versions the module pins (go.mod is the one place they are written). */
export async function pinnedVersions(): Promise<{ kubernetes: string; etcd: string }> {
  const gomod = await readFile(join(MODULE_DIR, "go.mod"), "utf8");
  const pin = (module: string): string => {
    const m = new RegExp(`^\\s*${module.replaceAll(".", "\\.")} (v\\S+)(\\s+//.*)?$`, "m").exec(gomod);
    if (!m?.[1]) throw new Error(`test/cluster/controlplane/go.mod does not pin ${module}`);
    return m[1];
  };
  return { kubernetes: pin("k8s.io/kubernetes"), etcd: pin("go.etcd.io/etcd/server/v3") };
}

/**
 * The source directory of a module the control plane's go.mod pins (`k8s.io/api`, …), downloaded through the
 * Go module proxy when not yet in the module cache: Kubernetes' own `.proto` definitions, for instance.
 */
export async function pinnedModuleDir(path: string): Promise<string> {
  const { stdout } = await run("go", ["mod", "download", "-json", path], { cwd: MODULE_DIR, env: goEnv() });
  const dir = (JSON.parse(stdout) as { Dir?: string }).Dir;
  if (!dir) throw new Error(`go mod download ${path}: no directory in ${stdout}`);
  return dir;
}

/** Where built binaries live: outside the repo, so a fresh clone reuses them (`MAM_CONTROL_PLANE_CACHE`). */
export const cacheRoot = (env: NodeJS.ProcessEnv = process.env): string =>
  env.MAM_CONTROL_PLANE_CACHE ??
  join(env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "machine-api-migration", "control-plane");

const goEnv = (): NodeJS.ProcessEnv => ({
  ...process.env,
  GOTOOLCHAIN: "local",
  CGO_ENABLED: "0",
  GOFLAGS: "-mod=readonly -buildvcs=false",
});

/**
 * Builds the binaries once per version key and returns where they are. The key covers the module's go.mod,
 * go.sum and reaper, and the Go version, so a version bump (or a new Go) builds afresh and an unchanged one
 * never does. Concurrent callers wait on a lock instead of building twice; a killed build's lock is taken over.
 */
export async function ensureBinaries(log: (line: string) => void = () => {}): Promise<Binaries> {
  const versions = await pinnedVersions();
  const { stdout: goVersion } = await run("go", ["env", "GOVERSION"], { env: goEnv() });
  const hash = createHash("sha256");
  for (const f of ["go.mod", "go.sum", "reaper/main.go"]) hash.update(await readFile(join(MODULE_DIR, f)));
  hash.update(goVersion.trim());
  const key = `k8s-${versions.kubernetes}-etcd-${versions.etcd}-${hash.digest("hex").slice(0, 12)}`;
  const root = cacheRoot();
  const dir = join(root, key);
  const binaries: Binaries = {
    dir,
    kubernetesVersion: versions.kubernetes,
    etcdVersion: versions.etcd,
    path: (p) => join(dir, p),
  };
  const complete = () => existsSync(join(dir, "COMPLETE"));
  if (complete()) return binaries;

  await mkdir(root, { recursive: true });
  // Another run may be building this key: wait for it, or take over a killed build's lock (./build-lock.ts).
  const lock = `${dir}.lock`;
  if ((await acquireBuildLock(lock, complete, { log })) === "done") return binaries;
  try {
    if (complete()) return binaries;
    const building = `${dir}.building`;
    await rm(building, { recursive: true, force: true });
    await mkdir(building, { recursive: true });
    log(`building the control plane (${key}) into ${dir}; the first build takes several minutes`);
    const started = Date.now();
    const version = versions.kubernetes;
    const minor = /^v1\.(\d+)\./.exec(version)?.[1] ?? "";
    const ldflags = [
      "-s -w",
      `-X k8s.io/component-base/version.gitVersion=${version}`,
      "-X k8s.io/component-base/version.gitMajor=1",
      `-X k8s.io/component-base/version.gitMinor=${minor}`,
      "-X k8s.io/component-base/version.gitTreeState=clean",
      `-X k8s.io/client-go/pkg/version.gitVersion=${version}`,
    ].join(" ");
    await run(
      "go",
      ["build", "-trimpath", "-ldflags", ldflags, "-o", `${building}/`, ...Object.values(PROGRAMS)],
      { cwd: MODULE_DIR, env: goEnv(), maxBuffer: 64 * 1024 * 1024 },
    ).catch((e: { stderr?: string; message: string }) => {
      throw new Error(`go build of the control plane failed: ${e.stderr || e.message}`);
    });
    // `go build` names a binary after its import path less the major-version suffix: etcd's is "server".
    await rename(join(building, "server"), join(building, "etcd"));
    await writeFile(join(building, "COMPLETE"), `${new Date().toISOString()}\n`);
    await rm(dir, { recursive: true, force: true });
    await rename(building, dir);
    log(`built the control plane in ${Math.round((Date.now() - started) / 1000)} s`);
    return binaries;
  } finally {
    await releaseBuildLock(lock);
  }
}

/** What each binary says its version is (`kube-apiserver v1.33.13`, …). */
export async function binaryVersions(b: Binaries): Promise<string[]> {
  const line = async (p: Program, args: string[]) =>
    (await run(b.path(p), args)).stdout.split("\n")[0]?.trim() ?? "";
  return [
    `kube-apiserver ${(await line("kube-apiserver", ["--version"])).replace(/^Kubernetes /, "")}`,
    `kube-controller-manager ${(await line("kube-controller-manager", ["--version"])).replace(/^Kubernetes /, "")}`,
    `etcd ${(await line("etcd", ["--version"])).replace(/^etcd Version: /, "v")}`,
  ];
}

const freePort = (): Promise<number> =>
  new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });

/** Runs `attempt` again (up to 5 times) while it fails because a port it was given was taken meanwhile. */
async function onFreshPorts<T>(attempt: (n: number) => Promise<T>): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (err) {
      if (n >= 5 || !String((err as Error).message).includes("address already in use")) throw err;
    }
  }
}

export interface ControlPlane {
  /** https://127.0.0.1:PORT */
  url: string;
  caPem: string;
  /** The CA that signed the API server's certificate (the tests' proxy serves under it too). */
  ca: CertificateAuthority;
  /** A `system:masters` token for setting the control plane up (tests act as `kube:admin`). */
  bootstrapToken: string;
  /** `kube:admin` in `system:cluster-admins`, bound to `cluster-admin` by the backend as OpenShift does. */
  adminToken: string;
  dir: string;
  /** The last lines each process wrote, for a test's failure message. */
  logTail(program: "etcd" | "kube-apiserver" | "kube-controller-manager", lines?: number): Promise<string>;
  stop(): Promise<void>;
}

interface Running {
  name: "etcd" | "kube-apiserver" | "kube-controller-manager";
  child: ChildProcess;
  exited: Promise<void>;
}

/**
 * Starts etcd, kube-apiserver and kube-controller-manager in a fresh directory; resolves once all serve.
 * `beforeControllers` runs against the API server before the controller manager starts: what it creates
 * (the project's CRDs) is there when the garbage collector first discovers resources, as in a cluster
 * where the CRDs long predate any test — the collector otherwise notices a new resource only on its 30 s
 * rediscovery.
 */
export async function startControlPlane(
  binaries: Binaries,
  beforeControllers: (cp: Omit<ControlPlane, "stop" | "logTail">) => Promise<void> = async () => {},
): Promise<ControlPlane> {
  const dir = await mkdtemp(join(tmpdir(), "mam-control-plane-"));
  const running: Running[] = [];
  const stop = async (): Promise<void> => {
    // Reverse order: the controller manager and apiserver go before the store they write to.
    for (const r of [...running].reverse()) {
      r.child.kill("SIGTERM");
      const killed = setTimeout(() => r.child.kill("SIGKILL"), 5_000);
      await r.exited;
      clearTimeout(killed);
    }
    running.length = 0;
    process.removeListener("exit", killAll);
    await rm(dir, { recursive: true, force: true });
  };
  const killAll = (): void => {
    for (const r of running) r.child.kill("SIGKILL");
  };
  process.on("exit", killAll);

  const logFile = (name: string) => join(dir, `${name}.log`);
  const tail = async (name: string, lines = 40): Promise<string> =>
    (await readFile(logFile(name), "utf8").catch(() => "")).split("\n").slice(-lines).join("\n");
  const start = (name: Running["name"], args: string[]): Running => {
    const out = createWriteStream(logFile(name));
    const child = spawn(binaries.path("reaper"), [binaries.path(name), ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      cwd: dir,
    });
    child.stdout?.pipe(out);
    child.stderr?.pipe(out);
    const exited = new Promise<void>((r) => child.once("exit", () => r()));
    const r: Running = { name, child, exited };
    running.push(r);
    return r;
  };
  const waitUntil = async (r: Running, what: string, probe: () => Promise<boolean>): Promise<void> => {
    let gone = false;
    void r.exited.then(() => {
      gone = true;
    });
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (gone) throw new Error(`${r.name} exited before ${what}:\n${await tail(r.name)}`);
      if (await probe().catch(() => false)) return;
      if (Date.now() > deadline)
        throw new Error(`${r.name}: timed out waiting for ${what}:\n${await tail(r.name)}`);
      await new Promise((w) => setTimeout(w, 200));
    }
  };

  try {
    // A free port is only free until someone else binds it (the fast suite's servers run beside this one):
    // a process that finds its port taken is started again on fresh ones.
    const etcdClient = await onFreshPorts(async (attempt) => {
      const [client, peer] = [await freePort(), await freePort()];
      const etcd = start("etcd", [
        "--name=default",
        `--data-dir=${join(dir, `etcd-${attempt}`)}`,
        `--listen-client-urls=http://127.0.0.1:${client}`,
        `--advertise-client-urls=http://127.0.0.1:${client}`,
        `--listen-peer-urls=http://127.0.0.1:${peer}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
        `--initial-cluster=default=http://127.0.0.1:${peer}`,
        // A throwaway store for tests: durability buys nothing and costs seconds per suite.
        "--unsafe-no-fsync",
        "--log-level=warn",
      ]);
      await waitUntil(etcd, "serving", async () => {
        const res = await fetch(`http://127.0.0.1:${client}/health`);
        return res.ok && ((await res.json()) as { health?: string }).health === "true";
      });
      return client;
    });

    const ca = createCertificateAuthority("machine-api-migration control-plane test CA");
    const serving = issueServingCertificate(ca, [
      "127.0.0.1",
      "localhost",
      "kubernetes",
      "kubernetes.default",
      "kubernetes.default.svc",
      "10.0.0.1",
    ]);
    const sa = generateKeyPairSync("rsa", {
      modulusLength: 2048,
      publicKeyEncoding: { type: "spki", format: "pem" },
      privateKeyEncoding: { type: "pkcs8", format: "pem" },
    });
    const token = () => randomBytes(24).toString("base64url");
    const bootstrapToken = token();
    const adminToken = token();
    const controllerManagerToken = token();
    await writeFile(join(dir, "ca.crt"), ca.certPem);
    await writeFile(join(dir, "apiserver.crt"), serving.certPem);
    await writeFile(join(dir, "apiserver.key"), serving.keyPem, { mode: 0o600 });
    await writeFile(join(dir, "sa.pub"), sa.publicKey);
    await writeFile(join(dir, "sa.key"), sa.privateKey, { mode: 0o600 });
    // Static tokens only for the people and the controller manager's own identity; every controller the
    // tests run (the product, the simulated providers, the garbage collector) uses a ServiceAccount token.
    await writeFile(
      join(dir, "tokens.csv"),
      [
        `${bootstrapToken},system:admin,uid-bootstrap,"system:masters,system:authenticated"`,
        `${adminToken},kube:admin,uid-kube-admin,"system:cluster-admins,system:authenticated"`,
        `${controllerManagerToken},system:kube-controller-manager,uid-kcm,system:authenticated`,
        "",
      ].join("\n"),
      { mode: 0o600 },
    );

    const apiPort = await onFreshPorts(async () => {
      const port = await freePort();
      const apiserver = start("kube-apiserver", [
        `--etcd-servers=http://127.0.0.1:${etcdClient}`,
        "--bind-address=127.0.0.1",
        "--advertise-address=127.0.0.1",
        `--secure-port=${port}`,
        `--tls-cert-file=${join(dir, "apiserver.crt")}`,
        `--tls-private-key-file=${join(dir, "apiserver.key")}`,
        `--token-auth-file=${join(dir, "tokens.csv")}`,
        "--anonymous-auth=false",
        "--service-account-issuer=https://kubernetes.default.svc",
        `--service-account-key-file=${join(dir, "sa.pub")}`,
        `--service-account-signing-key-file=${join(dir, "sa.key")}`,
        "--service-cluster-ip-range=10.0.0.0/24",
        "--authorization-mode=RBAC",
        // Kubernetes' defaults plus the plugin OpenShift enables that the product can trip over (SPEC §8.1).
        "--enable-admission-plugins=NamespaceLifecycle,OwnerReferencesPermissionEnforcement",
        // Off as in the tests; MAM_CONTROL_PLANE_PROFILING=1 serves /debug/pprof to a cluster admin (the bench's
        // `--api-server real`: where kube's CPU goes).
        `--profiling=${process.env.MAM_CONTROL_PLANE_PROFILING === "1"}`,
        "--v=1",
      ]);
      await waitUntil(apiserver, "ready", async () => {
        const res = await curl(`https://127.0.0.1:${port}/readyz`, bootstrapToken, ca.certPem);
        return res.status === 200;
      });
      return port;
    });
    const url = `https://127.0.0.1:${apiPort}`;

    await beforeControllers({ url, caPem: ca.certPem, ca, bootstrapToken, adminToken, dir });
    await writeFile(
      join(dir, "kcm.kubeconfig"),
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [
          {
            name: "c",
            cluster: {
              server: url,
              "certificate-authority-data": Buffer.from(ca.certPem).toString("base64"),
            },
          },
        ],
        users: [{ name: "kcm", user: { token: controllerManagerToken } }],
        contexts: [{ name: "c", context: { cluster: "c", user: "kcm" } }],
        "current-context": "c",
      }),
      { mode: 0o600 },
    );
    const kcm = start("kube-controller-manager", [
      `--kubeconfig=${join(dir, "kcm.kubeconfig")}`,
      // The collector and namespace controller act under their own ServiceAccounts, as in a cluster, so the
      // product's webhooks see `system:serviceaccount:kube-system:generic-garbage-collector`.
      "--use-service-account-credentials",
      // The token controller fills in a `kubernetes.io/service-account-token` Secret someone creates by hand,
      // as in every cluster: test/installer/token-secrets.cluster.test.ts shows what that lets a Secret writer do.
      "--controllers=garbage-collector-controller,namespace-controller,serviceaccount-token-controller",
      `--service-account-private-key-file=${join(dir, "sa.key")}`,
      `--root-ca-file=${join(dir, "ca.crt")}`,
      "--leader-elect=false",
      "--secure-port=0",
      "--v=1",
    ]);
    // The collector is working once it has taken its ServiceAccount (it asks for a token under it).
    await waitUntil(kcm, "its garbage collector started", async () => {
      const res = await curl(
        `${url}/api/v1/namespaces/kube-system/serviceaccounts/generic-garbage-collector`,
        bootstrapToken,
        ca.certPem,
      );
      return res.status === 200;
    });

    return {
      url,
      caPem: ca.certPem,
      ca,
      bootstrapToken,
      adminToken,
      dir,
      logTail: tail,
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** One HTTPS request to the control plane with a bearer token, trusting only its CA. */
export async function curl(
  url: string,
  token: string,
  caPem: string,
  init: { method?: string; body?: unknown } = {},
): Promise<{ status: number; body: unknown }> {
  const { request } = await import("node:https");
  return new Promise((resolveRequest, reject) => {
    const req = request(
      url,
      {
        method: init.method ?? "GET",
        ca: caPem,
        headers: {
          authorization: `Bearer ${token}`,
          accept: "application/json",
          ...(init.body !== undefined ? { "content-type": "application/json" } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON (readyz answers "ok")
          }
          resolveRequest({ status: res.statusCode ?? 0, body });
        });
      },
    );
    req.on("error", reject);
    if (init.body !== undefined) req.write(JSON.stringify(init.body));
    req.end();
  });
}
