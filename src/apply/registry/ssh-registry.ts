import { dirname } from 'node:path';
import pLimit from 'p-limit';
import type { RegistryMirror } from '../../config/execution.js';
import type { PlannedNode } from '../../plan/index.js';
import {
  DOCKER_DAEMON_JSON,
  containerdFiles,
  daemonJsonHas,
  dockerKeys,
  mergeDaemonJson,
} from '../../runtime/registry-mirror.js';
import type { SshPool } from '../../ssh/index.js';
import { BpaError, messageOf } from '../../util/errors.js';
import type { Logger } from '../../util/log.js';
import { targetOf } from '../access.js';
import type { RegistryPort, RegistryResult } from '../ports.js';

export interface SshRegistryOptions {
  pool: SshPool;
  user: string;
  port: number;
  maxParallelHosts: number;
  log: Logger;
  /** base64(user:password) for the mirror's credentials (a decrypted site Secret), if it has any. */
  auth?: (mirror: RegistryMirror) => string | undefined;
}

/** Exit code of `readArgv` for a file that does not exist. */
const ABSENT = 3;
const readArgv = (path: string): string[] => [
  'sh',
  '-c',
  `if [ -e "$1" ]; then cat -- "$1"; else exit ${ABSENT}; fi`,
  'sh',
  path,
];

/**
 * Writes the registry mirror configuration on nodes over SSH: each file through a temporary
 * file renamed over it (containerd reads hosts.toml on every pull, never half of one), Docker's
 * daemon.json merged with what the node has and dockerd told to reload (SIGHUP reloads
 * registry-mirrors), then every file read back and compared.
 */
export class SshRegistry implements RegistryPort {
  constructor(private readonly opts: SshRegistryOptions) {}

  async configure(
    _cluster: string,
    nodes: readonly PlannedNode[],
    mirror: RegistryMirror,
  ): Promise<RegistryResult[]> {
    const limit = pLimit(this.opts.maxParallelHosts);
    return Promise.all(nodes.map((n) => limit(() => this.configureNode(n, mirror))));
  }

  private async configureNode(node: PlannedNode, mirror: RegistryMirror): Promise<RegistryResult> {
    const target = targetOf(node, this.opts.user, this.opts.port);
    const sudo = this.opts.user !== 'root';
    const run = (argv: string[], stdin?: string, okExitCodes?: number[]) =>
      this.opts.pool.run(target, argv, {
        sudo,
        timeoutMs: 30_000,
        ...(stdin !== undefined ? { stdin } : {}),
        ...(okExitCodes ? { okExitCodes } : {}),
      });
    const read = async (path: string): Promise<string | null> => {
      const r = await run(readArgv(path), undefined, [0, ABSENT]);
      return r.exitCode === ABSENT ? null : r.stdout;
    };
    const write = async (path: string, content: string, secret = false): Promise<void> => {
      const tmp = `${path}.bpa-new`;
      await run(['install', '-d', '-m', '0755', dirname(path)]);
      // Credentials: readable by root only from the moment the file exists.
      if (secret) await run(['install', '-m', '0600', '/dev/null', tmp]);
      // tee would echo the content into the command's output (and any error's tail): not credentials.
      await run(secret ? ['sh', '-c', 'cat > "$1"', 'sh', tmp] : ['tee', tmp], content);
      await run(['chmod', secret ? '0600' : '0644', tmp]);
      await run(['mv', '-f', tmp, path]);
    };
    try {
      const auth = this.opts.auth?.(mirror);
      const files = containerdFiles(mirror, auth);
      for (const [path, content] of Object.entries(files))
        await write(path, content, auth !== undefined);
      const keys = dockerKeys(mirror);
      if (keys) {
        const current = await read(DOCKER_DAEMON_JSON);
        if (!daemonJsonHas(current, keys)) {
          const merged = mergeDaemonJson(current, keys);
          if (typeof merged !== 'string')
            throw new BpaError(
              'REGISTRY_CONFIG_FAILED',
              `${merged.error}; fix or remove it`,
              'stalled',
            );
          await write(DOCKER_DAEMON_JSON, merged);
          // No dockerd running (exit 1) is fine: it reads the file when it starts.
          await run(['pkill', '-HUP', '-x', 'dockerd'], undefined, [0, 1]);
        }
      }
      // Read back: the node holds exactly what bpa meant.
      for (const [path, content] of Object.entries(files))
        if ((await read(path)) !== content)
          throw new BpaError('REGISTRY_CONFIG_FAILED', `${path} does not hold what was written`);
      if (keys && !daemonJsonHas(await read(DOCKER_DAEMON_JSON), keys))
        throw new BpaError(
          'REGISTRY_CONFIG_FAILED',
          `${DOCKER_DAEMON_JSON} lacks the registry mirror after writing it`,
        );
      return { node: node.name, ok: true };
    } catch (err: unknown) {
      const error = {
        code: err instanceof BpaError ? err.code : 'REGISTRY_CONFIG_FAILED',
        message: `${node.name}: ${messageOf(err)}`,
      };
      this.opts.log.warn({ node: node.name, err: error }, 'registry mirror configuration failed');
      return { node: node.name, ok: false, error };
    }
  }
}
