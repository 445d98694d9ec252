// Leader election (serve --leader-elect) against a real kube-apiserver, as bpa's service
// account with only the grants of deploy/rbac.yaml: a Lease verb bpa uses but is not granted
// fails here as in a cluster, and the optimistic concurrency is the server's own. The fake's
// tests (test/unit/serve/leader.test.ts) cover what needs injected answers or timing: both
// replicas creating the Lease at once (slowed answers), a partition, a 409 on renewal.
import assert from 'node:assert/strict';
import { LeaderElector } from '../../../src/serve/leader.js';
import { useRealKube } from '../../k8s/envtest.js';

const TIMING = { leaseDurationSeconds: 2, renewDeadlineSeconds: 1.5, retryPeriodSeconds: 0.2 };
const MICRO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

/**
 * A clock that stands still unless advanced: a lease bpa observed with it never expires until
 * the test says so.
 */
class ManualClock {
  private at = Date.parse('2026-11-24T00:00:00Z');
  readonly now = (): number => this.at;
  advance(ms: number): void {
    this.at += ms;
  }
}

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

  const lease = async (name: string): Promise<LeaseSpec | undefined> => {
    const r = await kube.env.admin<{ spec?: LeaseSpec }>(
      'GET',
      `/apis/coordination.k8s.io/v1/namespaces/${kube.env.namespace}/leases/${name}`,
    );
    return r.status === 200 ? r.body.spec : undefined;
  };
  const elector = (name: string, id: string, now?: () => number): LeaderElector => {
    const e = new LeaderElector(kube.env.bpaKubeConfig(), {
      namespace: kube.env.namespace,
      name,
      identity: id,
      ...TIMING,
      ...(now ? { now } : {}),
    });
    electors.push(e);
    return e;
  };

  it('writes a Lease the server takes (MicroTime), renews it keeping the acquire time, and releases it on stop', async () => {
    const a = elector('single', 'bpa-a');
    void a.run({ onStartedLeading: () => undefined, onStoppedLeading: () => undefined });
    await waitUntil('a leads', () => a.isLeader());
    const first = await lease('single');
    assert.equal(first?.holderIdentity, 'bpa-a');
    assert.equal(first?.leaseDurationSeconds, TIMING.leaseDurationSeconds);
    assert.equal(first?.leaseTransitions, 0);
    assert.match(first?.renewTime ?? '', MICRO_TIME);
    assert.match(first?.acquireTime ?? '', MICRO_TIME);
    await waitUntil(
      'a renewal',
      async () => (await lease('single'))?.renewTime !== first?.renewTime,
    );
    const renewed = await lease('single');
    assert.equal(renewed?.acquireTime, first?.acquireTime, 'a renewal keeps the acquire time');
    await a.stop();
    assert.equal((await lease('single'))?.holderIdentity, '', 'released: an empty holder');
  });

  it('does not take a Lease another replica holds until it expires, then takes it over', async () => {
    const created = await kube.env.admin(
      'POST',
      `/apis/coordination.k8s.io/v1/namespaces/${kube.env.namespace}/leases`,
      {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: 'held' },
        spec: {
          holderIdentity: 'bpa-other',
          leaseDurationSeconds: 1,
          renewTime: '2026-11-24T00:00:00.000000Z',
          leaseTransitions: 3,
        },
      },
    );
    assert.equal(created.status, 201, JSON.stringify(created.body));
    // bpa-a's clock stands still while the other holder is, in its eyes, alive.
    const clock = new ManualClock();
    const a = elector('held', 'bpa-a', clock.now);
    void a.run({ onStartedLeading: () => undefined, onStoppedLeading: () => undefined });
    await new Promise((r) => setTimeout(r, TIMING.retryPeriodSeconds * 5000));
    assert.equal(a.isLeader(), false);
    assert.equal((await lease('held'))?.holderIdentity, 'bpa-other', 'no write to a held lease');
    // The other holder has not renewed for a lease duration: it has expired, bpa-a takes it.
    clock.advance(1001);
    await waitUntil('a takes over', () => a.isLeader());
    const taken = await lease('held');
    assert.equal(taken?.holderIdentity, 'bpa-a');
    assert.equal(taken?.leaseTransitions, 4);
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
