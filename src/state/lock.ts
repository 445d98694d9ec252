import { link, open, readFile, rename, rm, stat, utimes } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { hostname } from 'node:os';
import { mkdir } from 'node:fs/promises';
import { StalledError, WaitingError } from '../util/errors.js';
import { startTimeOf } from '../util/proc.js';
import { retry } from '../util/retry.js';

/** How often a holder refreshes the lock's time, and when an unrefreshed lock is stale. */
const HEARTBEAT_MS = 10_000;
const STALE_AFTER_MS = 60_000;

interface LockOwner {
  pid: number;
  /** Process start time (from /proc), so a reused PID is not mistaken for the owner. */
  started: string;
  host: string;
  token: string;
  since: string;
}

/**
 * An exclusive lock on a state directory: two bpa processes never apply at once. The lock
 * file is created with O_EXCL; a lock whose owner process is gone (killed, crashed) is taken
 * over. Taking over renames the stale file aside and checks it really was the stale one, and
 * the holder re-checks its token before each journal write (`verify`), so even a race
 * between two processes recovering at the same instant is detected, never silent.
 */
export class StateLock {
  private token: string | undefined;
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(readonly dir: string) {}

  get path(): string {
    return join(this.dir, 'apply.lock');
  }

  async acquire(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const me: LockOwner = {
      pid: process.pid,
      started: (await startTimeOf(process.pid)) ?? '',
      host: hostname(),
      token: randomBytes(12).toString('hex'),
      since: new Date().toISOString(),
    };
    // Another process may take over the same stale lock at the same instant: whoever loses
    // the race finds a fresh lock and tries again.
    await retry(() => this.tryAcquire(me), {
      attempts: 5,
      retryIf: (err) => err instanceof TakenOver,
    }).catch((err: unknown) => {
      if (!(err instanceof TakenOver)) throw err;
      throw new WaitingError('STATE_LOCKED', `could not lock ${this.dir}: contended`, 5_000);
    });
  }

  private async tryAcquire(me: LockOwner): Promise<void> {
    try {
      const fh = await open(this.path, 'wx', 0o600);
      await fh.writeFile(JSON.stringify(me) + '\n');
      await fh.sync();
      await fh.close();
      this.token = me.token;
      this.heartbeat = setInterval(
        () => void utimes(this.path, new Date(), new Date()).catch(() => undefined),
        HEARTBEAT_MS,
      );
      this.heartbeat.unref();
      return;
    } catch (err: unknown) {
      if ((err as { code?: string }).code !== 'EEXIST') throw err;
    }
    const owner = await readOwner(this.path);
    if (owner && owner.host === me.host && (await alive(owner))) {
      throw new WaitingError(
        'STATE_LOCKED',
        `another bpa (pid ${owner.pid}, since ${owner.since}) is applying with state directory ${this.dir}`,
        10_000,
      );
    }
    if (owner && owner.host !== me.host) {
      // Another host (a pod replaced after its node was lost): its liveness cannot be checked,
      // but a live holder refreshes the lock's time; one not refreshed for long is stale.
      const age = Date.now() - ((await stat(this.path).catch(() => undefined))?.mtimeMs ?? 0);
      if (age < STALE_AFTER_MS) {
        throw new WaitingError(
          'STATE_LOCKED',
          `state directory ${this.dir} is locked by bpa on host ${owner.host} (pid ${owner.pid}), refreshed ${Math.round(age / 1000)} s ago`,
          STALE_AFTER_MS - age,
        );
      }
    }
    await this.takeOver(owner);
    throw new TakenOver();
  }

  /** Throws when this process no longer holds the lock. */
  async verify(): Promise<void> {
    const owner = await readOwner(this.path);
    if (!this.token || owner?.token !== this.token) {
      throw new StalledError(
        'STATE_LOCK_LOST',
        `the lock on ${this.dir} was taken by another process; stopping`,
      );
    }
  }

  async release(): Promise<void> {
    clearInterval(this.heartbeat);
    if (!this.token) return;
    const owner = await readOwner(this.path);
    if (owner?.token === this.token) await rm(this.path, { force: true });
    this.token = undefined;
  }

  private async takeOver(stale: LockOwner | undefined): Promise<void> {
    const aside = `${this.path}.stale.${process.pid}.${randomBytes(4).toString('hex')}`;
    try {
      await rename(this.path, aside);
    } catch (err: unknown) {
      if ((err as { code?: string }).code === 'ENOENT') return; // someone else cleaned up: retry
      throw err;
    }
    const moved = await readOwner(aside);
    if (stale && moved?.token !== stale.token) {
      // We moved a fresh lock that appeared meanwhile: put it back.
      await link(aside, this.path).catch(() => undefined);
    }
    await rm(aside, { force: true });
  }
}

async function readOwner(path: string): Promise<LockOwner | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as LockOwner;
  } catch {
    return undefined;
  }
}

async function alive(owner: LockOwner): Promise<boolean> {
  try {
    process.kill(owner.pid, 0);
  } catch (err: unknown) {
    if ((err as { code?: string }).code === 'ESRCH') return false;
  }
  return ((await startTimeOf(owner.pid)) ?? '') === owner.started;
}

/** A stale lock was moved aside: the next attempt creates the lock afresh. */
class TakenOver extends Error {}
