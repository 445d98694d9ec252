/**
 * Names Ansible reads as groups or keywords in an inventory or a `--limit` pattern: a node
 * with one of these names would make an installer act on a whole group (`--limit all`).
 * Validation rejects them; the installer layer checks again.
 */
export const RESERVED_NODE_NAMES: ReadonlySet<string> = new Set([
  'all',
  'ungrouped',
  'localhost',
  'etcd',
  'kube-master',
  'kube-node',
  'k8s-cluster',
  'ovn-central',
  'ovn-controller',
  'virtlet',
  'kube-control-plane',
  'calico-rr',
  'bastion',
]);
