import assert from 'node:assert/strict';
import { stringify } from 'yaml';
import { parseReport } from '../../../src/source/site-source.js';
import { yamlText } from '../../../src/util/yaml-text.js';

describe('yamlText: the YAML bpa writes (reports, operator-mode documents)', () => {
  const tricky = {
    plain: 'x',
    looksLikeOther: [
      'yes',
      'no',
      'y',
      'n',
      'on',
      'null',
      '~',
      'true',
      '0123',
      '1e3',
      '0x1F',
      '.inf',
    ],
    time: '2026-11-28T00:00:00.000Z',
    punctuation: ['a: b', '- x', '#c', 'a #b', ' lead', 'x  ', '', '*x', '&a', '!t', '{x', '[x'],
    lines: ['line1\nline2\n', 'end\n\n', '  indented\nx', 'Bpa-Source: x\n\nmore', 'tab\there'],
    numbers: [0, 1.5, -3, 1e21],
    flags: [true, false, null],
    empty: { list: [], map: {} },
    nested: [[1, 2], [{ a: [{ b: null }] }]],
    keys: { '1': 1, 'key with space': 2, 'a:b': 3, '': 4 },
    long: 'x'.repeat(300),
    unicode: 'é ünï',
  };

  it('reads back as the same data with the core schema bpa reads reports with', () => {
    assert.deepEqual(parseReport(yamlText(tricky)), tricky);
  });

  it('leaves out keys whose value is undefined, and writes an undefined item as null', () => {
    assert.deepEqual(parseReport(yamlText({ a: 1, b: undefined, c: [1, undefined] })), {
      a: 1,
      c: [1, null],
    });
  });

  it('never folds a long line and never writes an anchor for a repeated object', () => {
    const shared = { s: 'y'.repeat(200) };
    const text = yamlText({ one: shared, two: shared });
    assert.ok(!/[&*]/.test(text), text);
    assert.equal(text.split('\n').filter(Boolean).length, 4, text);
  });

  it('writes a report as the yaml package did, line for line (no diff in a status commit)', () => {
    const report = {
      apiVersion: 'bpa.akraino.org/v1alpha1',
      kind: 'ClusterStatus',
      metadata: { name: 'east' },
      status: {
        phase: 'Ready',
        observedAt: '2026-11-28T00:00:00.000Z',
        nodes: [{ name: 'master-1', address: '10.0.0.1', roles: ['master'] }],
        message: 'applied 2 actions\nsee the log',
        empty: [],
      },
    };
    assert.equal(
      yamlText(report),
      stringify(report, { lineWidth: 0, aliasDuplicateObjects: false }),
    );
  });
});
