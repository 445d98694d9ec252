/**
 * The part of the Kubernetes client that modules loaded by every command import lazily (a
 * Secret read for SSH credentials or sops keys). `import('@kubernetes/client-node')` would
 * take the whole module namespace, every API group of it, into the bundle's chunk
 * (scripts/bundle.mjs tree-shakes the client); this module names what they use.
 */
export { ApiException, CoreV1Api } from '@kubernetes/client-node';
