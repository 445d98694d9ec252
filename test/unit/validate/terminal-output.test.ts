import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { formatPlan } from '../../../src/cli/output/plan.js';
import { formatGithub, formatText } from '../../../src/cli/output/problems.js';
import type { Plan } from '../../../src/plan/index.js';
import { runCli } from './run-cli.js';
import { BASE_SITE, removeSite, writeSite } from './site-fixture.js';

// eslint-disable-next-line no-control-regex
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/** File names and values with control characters reach the terminal escaped, one line each. */
describe('text output escapes control characters from the site', () => {
  let dir = '';
  afterEach(() => removeSite(dir));

  it('bpa validate: a file name and a label value with escapes and newlines', async () => {
    dir = await writeSite({
      ...BASE_SITE,
      // A label value is free text: the label mismatch names it.
      'software.yaml': BASE_SITE['software.yaml']!.replace(
        'cluster: cluster-a',
        'cluster: "\\e]0;owned\\a\\e[2Jx"',
      ),
    });
    // A file name that would forge a line of its own, then clear the screen.
    const forged = 'x.yaml\nsite.yaml:1:1: error FORGED: trust me\u001b[2J.yaml';
    await writeFile(join(dir, forged), 'kind: [\n');
    const r = await runCli(['validate', dir]);
    assert.equal(r.code, 1);
    assert.doesNotMatch(r.stdout, RAW, JSON.stringify(r.stdout));
    const lines = r.stdout.trimEnd().split('\n');
    assert.equal(lines.filter((l) => l.includes('FORGED')).length, 1);
    assert.match(
      r.stdout,
      /x\.yaml\\nsite\.yaml:1:1: error FORGED: trust me\\x1b\[2J\.yaml:\d+:\d+: error YAML_SYNTAX/,
    );
    assert.match(r.stdout, /error CLUSTER_LABEL_MISMATCH: .*"\\x1b\]0;owned\\x07\\x1b\[2Jx"/);
    assert.equal(lines.length, 3, 'one line per problem, and the summary');
  });

  it('formatText and formatGithub on any text', () => {
    const p = [
      {
        code: 'X',
        severity: 'error' as const,
        message: 'a\u001b[31m\u0007b\u202e',
        file: 'f\n.yaml',
        line: 1,
        column: 2,
      },
    ];
    assert.equal(formatText(p), 'f\\n.yaml:1:2: error X: a\\x1b[31m\\x07b\\u202e\n');
    assert.doesNotMatch(formatGithub(p).slice(0, -1), RAW);
  });

  it('formatPlan: host names, notes and reasons', () => {
    const plan: Plan = {
      hash: 'abc',
      problems: [],
      clusters: [
        {
          cluster: 'east',
          flavour: 'kud',
          nodes: [
            {
              name: 'master-1',
              roles: ['master'],
              host: 'metal3/evil\u001b[2J',
              mac: '52:54:00:00:00:01',
              ip: '10.0.0.1',
              ipSource: 'inventory',
              change: 'add',
              placement: 'by MAC\r\u001b[1Aforged',
            },
          ],
          actions: [],
          hostsIni: '',
          notes: ['note\nwith a second line'],
          desired: { plugins: [], software: { master: [], worker: [] } },
        },
      ],
    };
    const text = formatPlan(plan);
    assert.doesNotMatch(text.replace(/\n/g, ''), RAW);
    assert.match(text, /metal3\/evil\\x1b\[2J/);
    assert.match(text, /by MAC\\r\\x1b\[1Aforged/);
    assert.match(text, /note: note\\nwith a second line/);
  });
});
