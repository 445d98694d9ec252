import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRun, type RunContext } from '../../../src/reconcile/context.js';
import { readStatusRecord, writeStatusRecord } from '../../../src/reconcile/source-state.js';
import {
  checkStatus,
  publishReports,
  trustedReports,
} from '../../../src/reconcile/status-guard.js';
import type { SiteSource } from '../../../src/source/site-source.js';
import { silentLogger } from '../../../src/util/log.js';
import { configWith } from '../../fakes/site.js';

/** A repository's status/ in memory: what reportTexts reads and publish writes. */
class StatusSource implements SiteSource {
  readonly status = new Map<string, string>();
  readonly messages: string[] = [];
  /** The next publish fails after the push landed (its answer lost) or before it. */
  failing: 'after' | 'before' | undefined;
  describe(): string {
    return 'status';
  }
  async sync(): Promise<{ siteDir: string; revision: string; digest: string }> {
    return { siteDir: '/nowhere', revision: 'r', digest: 'd' };
  }
  async previousReports(): Promise<Map<string, unknown>> {
    return new Map();
  }
  async reportTexts(): Promise<Map<string, string>> {
    return new Map(this.status);
  }
  async publish(_dir: string, files: ReadonlyMap<string, string | null>, message: string) {
    if (this.failing === 'before') throw new Error('push refused');
    for (const [path, text] of files)
      if (text === null) this.status.delete(path);
      else this.status.set(path, text);
    this.messages.push(message);
    if (this.failing === 'after') throw new Error('connection reset');
    return 'c';
  }
}

describe('status/ guard: bpa tells its own reports from an edit', () => {
  let tmp: string;
  let source: StatusSource;
  const run = (): RunContext => {
    const ctx = createRun({
      site: { kind: 'path', path: '/nowhere' },
      configFor: configWith({ stateDir: tmp }),
      env: {},
      log: silentLogger(),
    });
    ctx.revision = 'r';
    return ctx;
  };
  const publish = (reports: Record<string, string>, ctx = run()) =>
    publishReports(
      ctx,
      source,
      '/nowhere',
      new Map(Object.entries(reports)),
      'bpa: x @ r\n\nBpa-Source: r\n',
      {
        source: 'r',
      },
    );

  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-status-guard-'));
    source = new StatusSource();
  });
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('no record: nothing is an edit, and the first publish records what status/ then holds', async () => {
    source.status.set('status/old.yaml', 'old: 1\n');
    assert.equal((await checkStatus(run(), source, '/nowhere'))?.edited, false);
    await publish({ 'status/site.yaml': 'a: 1\n' });
    assert.deepEqual((await readStatusRecord(tmp))?.files, {
      'status/old.yaml': 'old: 1\n',
      'status/site.yaml': 'a: 1\n',
    });
    assert.equal((await checkStatus(run(), source, '/nowhere'))?.edited, false);
  });

  it('an edit, an added report: bpa builds on its own, writes them back and removes the added one', async () => {
    await publish({ 'status/site.yaml': 'phase: Blocked\n' });
    source.status.set('status/site.yaml', 'phase: Ready\n');
    source.status.set('status/west.yaml', 'kind: ClusterStatus\n');
    const ctx = run();
    assert.equal((await checkStatus(ctx, source, '/nowhere'))?.edited, true);
    assert.deepEqual(
      [...(await trustedReports(ctx, source, '/nowhere'))],
      [['status/site.yaml', { phase: 'Blocked' }]],
    );
    await publish({ 'status/east.yaml': 'e: 1\n' }, ctx);
    assert.deepEqual(Object.fromEntries(source.status), {
      'status/site.yaml': 'phase: Blocked\n',
      'status/east.yaml': 'e: 1\n',
    });
    assert.match(
      source.messages.at(-1) ?? '',
      /^bpa: x @ r\n\nstatus\/ was edited by someone else \(status\/site\.yaml, status\/west\.yaml\): restored to the reports bpa wrote\.\n\nBpa-Source: r\n$/,
    );
    assert.equal((await checkStatus(run(), source, '/nowhere'))?.edited, false);
  });

  it('a push whose answer was lost is still bpa’s; one that never landed leaves the old record', async () => {
    await publish({ 'status/site.yaml': 'a: 1\n' });
    source.failing = 'after';
    await assert.rejects(publish({ 'status/site.yaml': 'a: 2\n' }));
    assert.equal((await checkStatus(run(), source, '/nowhere'))?.edited, false);
    assert.deepEqual((await readStatusRecord(tmp))?.files, { 'status/site.yaml': 'a: 2\n' });
    source.failing = 'before';
    await assert.rejects(publish({ 'status/site.yaml': 'a: 3\n' }));
    assert.equal((await checkStatus(run(), source, '/nowhere'))?.edited, false);
    assert.deepEqual((await readStatusRecord(tmp))?.files, { 'status/site.yaml': 'a: 2\n' });
    // An edit after that is measured against what bpa's reports really are.
    source.failing = undefined;
    source.status.set('status/site.yaml', 'a: 9\n');
    const ctx = run();
    assert.equal((await checkStatus(ctx, source, '/nowhere'))?.edited, true);
    assert.deepEqual(
      [...(await trustedReports(ctx, source, '/nowhere'))],
      [['status/site.yaml', { a: 2 }]],
    );
  });

  it('a damaged record counts as none', async () => {
    await writeStatusRecord(tmp, JSON.parse('{"files": null}') as never);
    source.status.set('status/site.yaml', 'x\n');
    assert.equal((await checkStatus(run(), source, '/nowhere'))?.edited, false);
  });
});
