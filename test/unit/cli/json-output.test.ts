import assert from 'node:assert/strict';
import { writeJsonWithList } from '../../../src/cli/output/json.js';

describe('JSON output a list item at a time', () => {
  const written = (head: Record<string, unknown>, items: unknown[]): string[] => {
    const pieces: string[] = [];
    writeJsonWithList((t) => pieces.push(t), head, 'clusters', items);
    return pieces;
  };

  it('writes what JSON.stringify(value, null, 2) and a line end write', () => {
    const nested = {
      cluster: 'c-1',
      hostsIni: '[all]\nnode-1 ansible_host=10.0.0.1\n',
      nodes: [{ name: 'n', roles: ['master', 'worker'], empty: [], none: {} }],
      quote: 'a "b"\\ \u00e9 \u2028',
      gone: undefined,
    };
    const cases: Array<[Record<string, unknown>, unknown[]]> = [
      [{ hash: 'h', changes: false, problems: [] }, []],
      [{ hash: undefined, changes: true, problems: [{ code: 'X', line: 3 }] }, [nested]],
      [{}, [1, 'two', null, [3, [4]], nested, { deep: { deeper: [{}] } }]],
    ];
    for (const [head, items] of cases) {
      assert.equal(
        written(head, items).join(''),
        `${JSON.stringify({ ...head, clusters: items }, null, 2)}\n`,
      );
    }
  });

  it('never holds the whole text: a long list is written in pieces', () => {
    const items = Array.from({ length: 2000 }, (_, i) => ({
      cluster: `c-${i}`,
      text: 'x'.repeat(200),
    }));
    const pieces = written({ hash: 'h' }, items);
    const whole = `${JSON.stringify({ hash: 'h', clusters: items }, null, 2)}\n`;
    assert.equal(pieces.join(''), whole);
    assert.ok(pieces.length > 4, `${pieces.length} pieces`);
    assert.ok(Math.max(...pieces.map((p) => p.length)) < whole.length / 4);
  });
});
