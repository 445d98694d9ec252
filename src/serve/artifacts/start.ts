import { AptRepository } from '../../artifacts/apt-repo.js';
import { AptSigner } from '../../artifacts/apt-signer.js';
import { artifactsDir } from '../../artifacts/paths.js';
import { ArtifactStore } from '../../artifacts/store.js';
import type { Config } from '../../config/options.js';
import { StalledError, messageOf } from '../../util/errors.js';
import type { Logger } from '../../util/log.js';
import { readSecretFile } from '../auth.js';
import type { GuessLimiter } from '../guess-limit.js';
import type { RouteSet } from '../http.js';
import { artifactRoutes } from './routes.js';

export interface Artifacts {
  routes: RouteSet[];
  /** Whether the upload API is on (a token is configured). */
  uploads: boolean;
  close(): Promise<void>;
}

/**
 * Opens the artifact store in the state directory, signs the apt repository when a key is
 * configured, and returns the routes that serve them.
 */
export async function startArtifacts(
  cfg: Config,
  log: Logger,
  limiter: GuessLimiter,
): Promise<Artifacts> {
  const token = cfg.artifactsTokenFile
    ? await readSecretFile(cfg.artifactsTokenFile, 'the artifact upload token')
    : undefined;
  const signer = cfg.aptSigningKey ? await AptSigner.create(cfg.aptSigningKey) : undefined;
  try {
    const apt = new AptRepository(signer);
    let store: ArtifactStore;
    try {
      store = await ArtifactStore.open(artifactsDir(cfg.stateDir), {
        onChange: async (kind, s) => {
          if (kind === 'packages') await apt.rebuild(await s.listStored('packages'));
        },
        warn: (message) => log.warn({ component: 'artifacts' }, message),
        error: (message) => log.error({ component: 'artifacts' }, message),
      });
    } catch (err: unknown) {
      if (err instanceof StalledError) throw err;
      throw new StalledError(
        'ARTIFACT_STORE_FAILED',
        `cannot open the artifact store in ${artifactsDir(cfg.stateDir)}: ${messageOf(err)}`,
      );
    }
    log.info(
      {
        artifacts: store.list().length,
        uploads: token ? 'enabled' : 'disabled',
        aptSigned: signer ? signer.fingerprint : false,
      },
      'artifact store open',
    );
    return {
      routes: artifactRoutes({
        store,
        apt,
        token,
        limiter,
        maxBytes: cfg.artifactsMaxMib * 1024 * 1024,
        log,
      }),
      uploads: token !== undefined,
      async close() {
        await store.idle();
        await signer?.close();
      },
    };
  } catch (err: unknown) {
    await signer?.close();
    throw err;
  }
}
