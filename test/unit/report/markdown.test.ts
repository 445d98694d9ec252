import assert from 'node:assert/strict';
import type { ClusterPlan, Plan, PlannedNode } from '../../../src/plan/index.js';
import {
  COMMENT_LIMIT,
  COMMENT_MARKER,
  formatPlanMarkdown,
  formatProblemsMarkdown,
} from '../../../src/report/markdown.js';
import { error, warning } from '../../../src/util/problem.js';

const HASH = 'a'.repeat(64);

function node(name: string, change: PlannedNode['change'], i: number): PlannedNode {
  return {
    name,
    roles: name.startsWith('master') ? ['master'] : ['worker'],
    host: `metal3/node-${i}`,
    mac: `52:54:00:00:00:${(i % 256).toString(16).padStart(2, '0')}`,
    ip: `198.18.${Math.floor(i / 250)}.${(i % 250) + 1}`,
    ipSource: 'inventory',
    change,
    placement: `resources: cpu 16≥8, memory 64Gi≥8Gi (node-${i})`,
    ...(change === 'update' ? { details: [`ip 198.18.9.9 → 198.18.0.${i}`] } : {}),
  };
}

function cluster(
  name: string,
  nodes: PlannedNode[],
  extra: Partial<ClusterPlan> = {},
): ClusterPlan {
  const added = nodes.filter((n) => n.change === 'add').map((n) => n.name);
  return {
    cluster: name,
    flavour: 'kud',
    nodes,
    actions: added.length
      ? [
          {
            kind: 'add-nodes',
            cluster: name,
            nodes: added,
            reason: `${added.join(', ')} are new in the site`,
            inputs: [],
          },
          {
            kind: 'install-packages',
            cluster: name,
            nodes: added,
            reason: 'new nodes get their packages',
            inputs: [],
            packages: added.flatMap((n) => [
              { node: n, name: 'curl' },
              { node: n, name: 'jq', to: '1.7.1-3' },
            ]),
          },
        ]
      : [],
    hostsIni: '',
    notes: [],
    desired: { plugins: [], software: { master: [], worker: [] } },
    ...extra,
  };
}

/** The table rows of a markdown text: lines that start with a pipe, without header lines. */
function rows(text: string): string[][] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| |') && !l.startsWith('| node |'))
    .map((l) =>
      l
        .slice(2, -2)
        .split(/ (?<!\\)\| /)
        .map((c) => c.trim()),
    );
}

describe('bpa plan -o markdown', () => {
  it('a summary, one collapsible section per changed cluster with node and package tables, actions, notes, warnings, hash and trailer', () => {
    const plan: Plan = {
      clusters: [
        cluster(
          'east',
          [node('master-1', 'keep', 1), node('worker-2', 'add', 2), node('worker-1', 'update', 3)],
          {
            notes: [
              'node worker-9 is no longer in the site; run with --prune to remove it from the cluster',
            ],
          },
        ),
        cluster('west', [node('master-1', 'keep', 4)]),
      ],
      problems: [],
      hash: HASH,
    };
    const md = formatPlanMarkdown(plan, {
      observed: 'Planned offline against status/: observed 2026-03-01T09:00:00Z (3 hours ago).',
      problems: [warning('LEASE_EXPIRED', 'a lease expired', { file: 'site/leases', line: 3 })],
      site: 'sites/edge-1',
    });
    const lines = md.split('\n');
    assert.equal(lines[0], COMMENT_MARKER);
    assert.equal(
      lines[1],
      '### bpa plan for `sites/edge-1`: 2 clusters; 0 to provision, 1 node to add, 0 to remove, 2 package changes',
    );
    assert.match(
      md,
      /<sub>Planned offline against status\/: observed 2026-03-01T09:00:00Z \(3 hours ago\)\.<\/sub>/,
    );
    assert.equal((md.match(/<details/g) ?? []).length, 1, 'only the cluster with changes');
    assert.equal((md.match(/<\/details>/g) ?? []).length, 1);
    assert.match(md, /<details open><summary><b>cluster east<\/b>: 2 actions<\/summary>/);
    assert.match(md, /1 other cluster without changes\./);
    assert.deepEqual(rows(md), [
      [
        '`+`',
        'worker-2',
        'metal3/node-2',
        '198.18.0.3',
        'worker',
        'resources: cpu 16≥8, memory 64Gi≥8Gi (node-2)',
      ],
      ['`~`', 'worker-1', 'metal3/node-3', '198.18.0.4', 'worker', 'ip 198.18.9.9 → 198.18.0.3'],
      ['worker-2', 'curl', '(none)', 'any version', 'install-packages'],
      ['worker-2', 'jq', '(none)', '1.7.1-3', 'install-packages'],
    ]);
    assert.match(md, /1 node unchanged\./);
    assert.match(md, /1\. `add-nodes`: worker-2 are new in the site/);
    assert.match(
      md,
      /\*\*Deferred and notes\*\*\n\n- node worker-9 is no longer in the site; run with --prune/,
    );
    assert.match(md, /- ⚠️ `LEASE_EXPIRED` \(`site\/leases:3`\): a lease expired/);
    assert.match(md, new RegExp(`Plan hash: \`${HASH}\``));
    assert.match(md, new RegExp(`\`\`\`\nBpa-Approved-Plan: ${HASH}\n\`\`\``));
  });

  it('no trailer when nothing changes or the plan has errors', () => {
    const none: Plan = {
      clusters: [cluster('east', [node('master-1', 'keep', 1)])],
      problems: [],
      hash: HASH,
    };
    const md = formatPlanMarkdown(none);
    assert.match(md, /: no changes \(1 cluster\)/);
    assert.doesNotMatch(md, /Bpa-Approved-Plan/);
    const bad: Plan = {
      clusters: [cluster('east', [node('worker-1', 'add', 1)])],
      problems: [],
      hash: HASH,
    };
    const withError = formatPlanMarkdown(bad, {
      problems: [error('NODE_UNPLACED', 'cluster east: worker-2 cannot be placed')],
    });
    assert.match(withError, /- ❌ `NODE_UNPLACED`: cluster east: worker-2 cannot be placed/);
    assert.doesNotMatch(withError, /Bpa-Approved-Plan/);
  });

  it('no plan (an invalid site): the problems, with the marker', () => {
    const md = formatProblemsMarkdown(
      [error('SCHEMA', 'spec.masters: required', { file: 'site/p.yaml', line: 4 })],
      { site: 'site' },
    );
    assert.equal(
      md,
      '<!-- bpa-plan -->\n### bpa plan for `site`: no plan, the site has 1 error\n\n**1 error, 0 warnings**\n\n- ❌ `SCHEMA` (`site/p.yaml:4`): spec.masters: required\n\n',
    );
  });

  it('names from the site cannot break a table, open a tag or forge a line', () => {
    const evil = node('w|x', 'add', 1);
    evil.host = 'metal3/<script>alert(1)</script>';
    evil.placement = 'a\n| `+` | forged | row |';
    const md = formatPlanMarkdown({
      clusters: [cluster('east</summary>', [evil])],
      problems: [],
      hash: HASH,
    });
    assert.doesNotMatch(md, /<script>|<\/summary><\/summary>/);
    assert.match(md, /cluster east&lt;\/summary&gt;/);
    const [row] = rows(md);
    assert.equal(row?.length, 6, JSON.stringify(row));
    assert.equal(row?.[1], 'w\\|x');
    assert.equal(row?.[2], 'metal3/&lt;script&gt;alert(1)&lt;/script&gt;');
    assert.ok(!md.split('\n').some((l) => l.startsWith('| `+` | forged')));
  });

  it('a 2,000-node plan stays within the comment limit and says what was left out', () => {
    const clusters = Array.from({ length: 20 }, (_, c) =>
      cluster(
        `cluster-${c}`,
        Array.from({ length: 100 }, (_, i) => node(`worker-${i}`, 'add', c * 100 + i)),
      ),
    );
    const md = formatPlanMarkdown({ clusters, problems: [], hash: HASH });
    assert.ok(md.length <= COMMENT_LIMIT, `${md.length} characters`);
    assert.ok(md.length > COMMENT_LIMIT - 2_000, `uses the room it has: ${md.length}`);
    assert.match(md, /^### bpa plan: 20 clusters; 0 to provision, 2000 nodes to add/m);
    const cut = /_… (\d+) more lines of cluster cluster-(\d+) not shown_/.exec(md);
    assert.ok(cut, 'the cut section says how many lines were left out');
    const more = /_… (\d+) more clusters not shown \(/.exec(md);
    assert.ok(more, 'and how many clusters');
    assert.equal(Number(more[1]), 19 - Number(cut[2]));
    assert.equal((md.match(/<details/g) ?? []).length, (md.match(/<\/details>/g) ?? []).length);
    assert.match(md, new RegExp(`Plan hash: \`${HASH}\``));
    assert.match(md, new RegExp(`Bpa-Approved-Plan: ${HASH}\n`));
    // A smaller limit is honoured the same way.
    assert.ok(
      formatPlanMarkdown({ clusters, problems: [], hash: HASH }, { limit: 10_000 }).length <=
        10_000,
    );
  });
});
