/**
 * The product's three webhook configurations (manifests/webhooks.yaml, SPEC §2.2) as local mode registers
 * them: unchanged but for what a cluster fills in — the caBundle (service-ca's job in OpenShift), and the
 * configured namespaces and controller identities where they differ from the manifests' defaults. The
 * `clientConfig.service` stays; the local API server resolves it to the local webhook listener.
 */
import { readFile } from "node:fs/promises";
import { parseAllDocuments } from "yaml";
import type { KubeObject } from "../kube/object.js";
import { isRecord } from "../kube/object.js";

const WEBHOOK_MANIFEST = "manifests/webhooks.yaml";

export interface WebhookSettings {
  caPem: string;
  controllerUsers: readonly string[];
  mapiNamespace: string;
  capiNamespace: string;
}

/** The CEL expression that skips the controllers' own requests (matchConditions, SPEC §2.2). */
const skipControllersExpression = (users: readonly string[]): string =>
  `!(request.userInfo.username in [${users.map((u) => `'${u.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`).join(", ")}])`;

export function localWebhookConfiguration(manifest: KubeObject, settings: WebhookSettings): KubeObject {
  const copy = structuredClone(manifest);
  const caBundle = Buffer.from(settings.caPem).toString("base64");
  const webhooks = Array.isArray(copy.webhooks) ? copy.webhooks.filter(isRecord) : [];
  for (const webhook of webhooks) {
    if (isRecord(webhook.clientConfig)) webhook.clientConfig.caBundle = caBundle;
    if (Array.isArray(webhook.matchConditions))
      webhook.matchConditions = webhook.matchConditions.map((c: unknown) =>
        isRecord(c) && c.name === "exclude-controller-users"
          ? { ...c, expression: skipControllersExpression(settings.controllerUsers) }
          : c,
      );
    const selector = isRecord(webhook.namespaceSelector) ? webhook.namespaceSelector : undefined;
    if (selector && Array.isArray(selector.matchExpressions))
      selector.matchExpressions = selector.matchExpressions.map((e: unknown) =>
        isRecord(e) && e.key === "kubernetes.io/metadata.name"
          ? { ...e, values: [settings.mapiNamespace, settings.capiNamespace] }
          : e,
      );
  }
  return copy;
}

export async function loadWebhookManifests(path = WEBHOOK_MANIFEST): Promise<KubeObject[]> {
  const docs = parseAllDocuments(await readFile(path, "utf8"));
  return docs.map((d) => d.toJS() as unknown).filter((v): v is KubeObject => isRecord(v));
}
