/** The document kinds bpa reads, keyed by `apiVersion/kind`, with their schema files. */
export const BPA_GROUP = 'bpa.akraino.org';
export const BPA_API_VERSION = 'bpa.akraino.org/v1alpha1';
export const METAL3_API_VERSION = 'metal3.io/v1alpha1';

export type KindName =
  'Cluster' | 'Provisioning' | 'Software' | 'Site' | 'BareMetalHost' | 'HardwareData';

export const KINDS: Record<KindName, { apiVersion: string; schema: string }> = {
  Cluster: { apiVersion: BPA_API_VERSION, schema: 'cluster.schema.json' },
  Provisioning: { apiVersion: BPA_API_VERSION, schema: 'provisioning.schema.json' },
  Software: { apiVersion: BPA_API_VERSION, schema: 'software.schema.json' },
  Site: { apiVersion: BPA_API_VERSION, schema: 'site.schema.json' },
  BareMetalHost: { apiVersion: METAL3_API_VERSION, schema: 'baremetalhost.schema.json' },
  HardwareData: { apiVersion: METAL3_API_VERSION, schema: 'hardwaredata.schema.json' },
};

export function isKindName(kind: unknown): kind is KindName {
  return typeof kind === 'string' && Object.hasOwn(KINDS, kind);
}
