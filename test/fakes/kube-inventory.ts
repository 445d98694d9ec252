import { readFile } from 'node:fs/promises';
import { CORE_SCHEMA, loadAll } from 'js-yaml';
import type { FakeKube, KubeObject } from './kube-api-server.js';

/**
 * Puts the objects of a YAML file (BareMetalHosts, as a site's inventory holds them) into the
 * fake API server, each with its status as the status subresource would set it.
 */
export async function putObjectsOf(kube: FakeKube, file: string): Promise<void> {
  const docs = loadAll(await readFile(file, 'utf8'), { schema: CORE_SCHEMA }) as Array<
    KubeObject & { status?: unknown }
  >;
  for (const doc of docs) {
    kube.put(doc);
    if (doc.status)
      kube.updateStatus(
        doc.apiVersion,
        doc.kind,
        doc.metadata.namespace ?? 'default',
        doc.metadata.name ?? '',
        doc.status,
      );
  }
}
