/**
 * Before any cluster suite: build the control plane once (cached outside the repo, keyed by version — a
 * second run reuses it) and say which binaries the run uses, so a CI log shows `kube-apiserver v1.33.…`.
 */
import { binaryVersions, ensureBinaries } from "./control-plane.js";

export default async function setup(): Promise<void> {
  const started = Date.now();
  const binaries = await ensureBinaries((line) => console.log(`[control plane] ${line}`));
  console.log(
    `[control plane] binaries in ${binaries.dir} (ready in ${Math.round((Date.now() - started) / 1000)} s)`,
  );
  for (const v of await binaryVersions(binaries)) console.log(`[control plane] ${v}`);
}
