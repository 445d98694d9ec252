export { SshPool, remoteCommand, readPrivateKey } from './pool.js';
export { bootstrapKey, type BootstrapCredentials } from './bootstrap.js';
export {
  readCredentialsFile,
  readSecretCredentials,
  type ReadCredentialsOptions,
} from './credentials.js';
export {
  HostKeyStore,
  fingerprintOf,
  algorithmOf,
  knownHostsName,
  type KnownHosts,
  type PinnedKey,
} from './host-keys.js';
export {
  describeTarget,
  hostPort,
  type RunOptions,
  type RunResult,
  type SshOptions,
  type SshTarget,
} from './types.js';
