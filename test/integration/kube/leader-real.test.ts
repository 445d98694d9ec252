// Leader election (serve --leader-elect) against a real kube-apiserver, as bpa's service
// account with only the grants of deploy/rbac.yaml: a Lease verb bpa uses but is not granted
// fails here as in a cluster, and the optimistic concurrency is the server's own. The fake's
// tests (test/unit/serve/leader.test.ts) cover partitions and clocks.
import assert from 'node:assert/strict';
import { LeaderElector } from '../../../src/serve/leader.js';
import { useRealKube } from '../../k8s/envtest.js';

const TIMING = { leaseDurationSeconds: 2, renewDeadlineSeconds: 1.5, retryPeriodSeconds: 0.2 };

async function waitUntil(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  const until = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('leader election on a real kube-apiserver (bpa service account)', function () {
  this.timeout(60_000);
  const kube = useRealKube({ name: 'leader' });
  const electors: LeaderElector[] = [];
  afterEach(async () => {
    await Promise.all(electors.splice(0).map((e) => e.stop()));
  });

  it('lets exactly one of two replicas lead, and hands the Lease over when it stops', async () => {
    const { namespace } = kube.env;
    const holder = async (): Promise<string | undefined> => {
      const r = await kube.env.admin<{ spec?: { holderIdentity?: string } }>(
        'GET',
        `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/bpa-leader`,
      );
      return r.status === 200 ? r.body.spec?.holderIdentity : undefined;
    };
    const started: string[] = [];
    const start = (id: string): LeaderElector => {
      const e = new LeaderElector(kube.env.bpaKubeConfig(), {
        namespace,
        name: 'bpa-leader',
        identity: id,
        ...TIMING,
      });
      electors.push(e);
      void e.run({ onStartedLeading: () => started.push(id), onStoppedLeading: () => undefined });
      return e;
    };
    const a = start('bpa-a');
    const b = start('bpa-b');
    await waitUntil('one leads', () => a.isLeader() || b.isLeader());
    const [leader, follower] = a.isLeader() ? [a, b] : [b, a];
    const leaderId = leader === a ? 'bpa-a' : 'bpa-b';
    // Two lease durations later, still one leader, renewing the Lease it holds.
    await new Promise((r) => setTimeout(r, TIMING.leaseDurationSeconds * 2000));
    assert.equal(leader.isLeader(), true);
    assert.equal(follower.isLeader(), false);
    assert.deepEqual(started, [leaderId]);
    assert.equal(await holder(), leaderId);

    await leader.stop();
    await waitUntil('the other takes over', () => follower.isLeader());
    const followerId = leaderId === 'bpa-a' ? 'bpa-b' : 'bpa-a';
    assert.equal(await holder(), followerId);
    assert.deepEqual(started, [leaderId, followerId]);
  });
});
