/**
 * Client factory: turns the product's settings into a client-node `KubeConfig` — in-cluster service
 * account, an explicit kubeconfig file, or (local mode) the kubeconfig text the embedded API server
 * wrote — and builds the transport and REST client on top. Errors name the setting that caused them.
 */
import { KubeConfig } from "@kubernetes/client-node";
import type { KubeClient } from "./client.js";
import { createKubeClient } from "./client.js";
import type { Transport, TransportOptions } from "./transport.js";
import { kubeConfigTransport } from "./transport.js";

export type KubeConfigSource =
  | { inCluster: true }
  | { kubeconfigPath: string; context?: string }
  | { kubeconfigText: string; context?: string };

export class KubeConfigError extends Error {
  override name = "KubeConfigError";
}

export function kubeConfigFor(source: KubeConfigSource): KubeConfig {
  const kc = new KubeConfig();
  try {
    if ("inCluster" in source) kc.loadFromCluster();
    else if ("kubeconfigPath" in source) kc.loadFromFile(source.kubeconfigPath);
    else kc.loadFromString(source.kubeconfigText);
    if ("context" in source && source.context) kc.setCurrentContext(source.context);
  } catch (e) {
    const what =
      "inCluster" in source
        ? "in-cluster service account configuration"
        : "kubeconfigPath" in source
          ? `setting kubeconfig (--kubeconfig ${source.kubeconfigPath})`
          : "the local API server's kubeconfig";
    throw new KubeConfigError(`cannot load ${what}: ${e instanceof Error ? e.message : String(e)}`);
  }
  const cluster = kc.getCurrentCluster();
  // client-node builds "https://undefined:undefined" outside a pod instead of failing.
  if ("inCluster" in source && (!cluster?.server || cluster.server.includes("undefined"))) {
    throw new KubeConfigError(
      "cannot load in-cluster service account configuration: not running in a pod (no Kubernetes service address); set kubeconfig (--kubeconfig) instead",
    );
  }
  if (!cluster?.server) {
    const what =
      "kubeconfigPath" in source ? `setting kubeconfig (${source.kubeconfigPath})` : "the configuration";
    throw new KubeConfigError(`${what} has no current cluster with a server address`);
  }
  return kc;
}

export interface KubeConnection {
  kubeConfig: KubeConfig;
  transport: Transport;
  client: KubeClient;
}

export function connect(source: KubeConfigSource, options: TransportOptions = {}): KubeConnection {
  const kubeConfig = kubeConfigFor(source);
  const transport = kubeConfigTransport(kubeConfig, options);
  return { kubeConfig, transport, client: createKubeClient(transport) };
}
