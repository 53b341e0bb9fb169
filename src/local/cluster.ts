/**
 * Local mode (SPEC §8, issue 3): the embedded Kubernetes API server set up the way a cluster would be —
 * namespaces, the project's CRDs, the `FeatureGate` that enables the migration API (SPEC §0.1), RBAC (the
 * product's and the installer's as shipped, the stand-ins' controllers' roles, `admin` a cluster admin;
 * local/rbac.ts), CAPA's AWSMachine defaulting webhook stand-in, the product's own webhook configurations
 * (service resolved to the local listener), and `<state-dir>/kubeconfig` with one context per local user.
 * Everything but the one binding that makes `admin` a cluster admin (what a cluster's installer leaves
 * behind) is written through the API, as a cluster admin or controller would, so authorization, admission
 * and schemas apply to it.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { Logger } from "pino";
import {
  type AwsMachineDefaulter,
  awsMachineDefaulterConfiguration,
  startAwsMachineDefaulter,
} from "../apiserver/fixtures/awsmachine-defaulter.js";
import { loadProjectCrds } from "../apiserver/fixtures/crds.js";
import { type ApiServer, startApiServer } from "../apiserver/index.js";
import type { KubeClient } from "../kube/client.js";
import { connect } from "../kube/config.js";
import { ConflictError } from "../kube/errors.js";
import { KINDS, type ResourceType } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import { childLogger } from "../logging.js";
import { createCertificateAuthority } from "../server/certs.js";
import { type LocalUser, localUsers } from "./identities.js";
import { renderKubeconfig } from "./kubeconfig.js";
import { clusterAdminsBinding, localRbac, rbacTypeOf } from "./rbac.js";
import { featureGate } from "./seed.js";
import { loadWebhookManifests, localWebhookConfiguration } from "./webhooks.js";

export interface LocalClusterOptions {
  host: string;
  port: number;
  stateDir: string;
  mapiNamespace: string;
  capiNamespace: string;
  controllerUsers: readonly string[];
  /** CA (PEM) of the webhook's serving certificate: the caBundle of the product's webhook configurations. */
  webhookCaPem: string;
  logger: Logger;
  bookmarkIntervalMs?: number;
}

export interface LocalCluster {
  api: ApiServer;
  users: readonly LocalUser[];
  kubeconfigPath: string;
  kubeconfigText: string;
  /** A client acting as the named local user (`admin`, `controller`, `mao`, `capi`, `capa`). */
  clientAs(context: string): KubeClient;
  /** Points the product's webhook Service at `baseUrl` and registers the three configurations. */
  registerProductWebhooks(baseUrl: string): Promise<void>;
  stop(): Promise<void>;
}

const WEBHOOK_SERVICE = "machine-api-migration";

/** Creates `object`, or leaves the existing one alone (start-up is idempotent over a reused state dir). */
export async function createIfMissing(
  client: KubeClient,
  type: ResourceType,
  object: KubeObject,
): Promise<KubeObject | undefined> {
  try {
    return await client.create(type, object);
  } catch (e) {
    if (e instanceof ConflictError && e.alreadyExists) return undefined;
    throw e;
  }
}

/** One client per kubeconfig context, made on first use. */
export function clientsOf(kubeconfigText: string): (context: string) => KubeClient {
  const clients = new Map<string, KubeClient>();
  return (context) => {
    let c = clients.get(context);
    if (!c) {
      c = connect({ kubeconfigText, context }).client;
      clients.set(context, c);
    }
    return c;
  };
}

/** CAPA's AWSMachine defaulting webhook stand-in, listening on loopback and registered by URL. */
export async function startRegisteredAwsMachineDefaulter(client: KubeClient): Promise<AwsMachineDefaulter> {
  const defaulter = await startAwsMachineDefaulter({
    ca: createCertificateAuthority("CAPA webhook stand-in CA"),
    host: "127.0.0.1",
  });
  try {
    await createIfMissing(
      client,
      WEBHOOK_TYPES.MutatingWebhookConfiguration,
      awsMachineDefaulterConfiguration({ url: defaulter.url, caBundle: defaulter.caBundle }),
    );
  } catch (e) {
    await defaulter.stop();
    throw e;
  }
  return defaulter;
}

/**
 * Creates or replaces the product's three webhook configurations (manifests/webhooks.yaml), each as
 * `render` makes it for the cluster at hand (caBundle, controller users, namespaces; a URL out of cluster).
 */
export async function putProductWebhooks(
  client: KubeClient,
  render: (manifest: KubeObject) => KubeObject,
): Promise<void> {
  for (const manifest of await loadWebhookManifests()) {
    const config = render(manifest);
    const type = WEBHOOK_TYPES[config.kind as keyof typeof WEBHOOK_TYPES];
    if (!type) throw new Error(`manifests/webhooks.yaml: unexpected kind ${String(config.kind)}`);
    const existing = await client.get(type, "", config.metadata?.name ?? "").catch(() => undefined);
    if (existing)
      await client.update(type, {
        ...config,
        metadata: { ...config.metadata, resourceVersion: existing.metadata?.resourceVersion },
      });
    else await client.create(type, config);
  }
}

export const WEBHOOK_TYPES = {
  MutatingWebhookConfiguration: {
    group: "admissionregistration.k8s.io",
    version: "v1",
    kind: "MutatingWebhookConfiguration",
    plural: "mutatingwebhookconfigurations",
    namespaced: false,
  },
  ValidatingWebhookConfiguration: {
    group: "admissionregistration.k8s.io",
    version: "v1",
    kind: "ValidatingWebhookConfiguration",
    plural: "validatingwebhookconfigurations",
    namespaced: false,
  },
} as const satisfies Record<string, ResourceType>;

export async function startLocalCluster(opts: LocalClusterOptions): Promise<LocalCluster> {
  const log = childLogger(opts.logger, "local-apiserver");
  const users = localUsers(opts);
  let webhookBaseUrl: string | undefined;
  const api = await startApiServer({
    host: opts.host,
    port: opts.port,
    users: users.map((u) => ({ token: u.token, username: u.username, groups: u.groups })),
    logger: log,
    ...(opts.bookmarkIntervalMs ? { bookmarkIntervalMs: opts.bookmarkIntervalMs } : {}),
    resolveService: (service) =>
      service.name === WEBHOOK_SERVICE && service.namespace === opts.capiNamespace && webhookBaseUrl
        ? { baseUrl: webhookBaseUrl, serverName: `${service.name}.${service.namespace}.svc` }
        : undefined,
  });
  let defaulter: AwsMachineDefaulter | undefined;
  try {
    // The one object no API user could have written first: who the cluster admins are.
    api.store.create(clusterAdminsBinding());
    const kubeconfigText = renderKubeconfig(api.url, api.caPem, users, opts.mapiNamespace);
    await mkdir(opts.stateDir, { recursive: true });
    const kubeconfigPath = resolve(join(opts.stateDir, "kubeconfig"));
    await writeFile(kubeconfigPath, kubeconfigText, { mode: 0o600 });
    const clientAs = clientsOf(kubeconfigText);
    const admin = clientAs("admin");

    for (const ns of [opts.mapiNamespace, opts.capiNamespace])
      await createIfMissing(admin, KINDS.namespace, {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: ns },
      });
    for (const crd of await loadProjectCrds())
      await createIfMissing(admin, KINDS.customResourceDefinition, crd);
    for (const object of await localRbac(opts)) await createIfMissing(admin, rbacTypeOf(object)!, object);

    // The feature gate is the cluster's, written by its operator: status through the status subresource.
    const gate = featureGate();
    const created = await createIfMissing(admin, KINDS.featureGate, gate);
    if (created) await admin.updateStatus(KINDS.featureGate, { ...created, status: gate.status });

    defaulter = await startRegisteredAwsMachineDefaulter(admin);
    const stopDefaulter = defaulter.stop;

    return {
      api,
      users,
      kubeconfigPath,
      kubeconfigText,
      clientAs,
      async registerProductWebhooks(baseUrl) {
        webhookBaseUrl = baseUrl;
        await putProductWebhooks(admin, (manifest) =>
          localWebhookConfiguration(manifest, { ...opts, caPem: opts.webhookCaPem }),
        );
      },
      async stop() {
        await stopDefaulter();
        await api.stop();
      },
    };
  } catch (e) {
    await defaulter?.stop();
    await api.stop();
    throw e;
  }
}
