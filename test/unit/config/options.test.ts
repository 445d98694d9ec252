import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  OPTIONS,
  resolveConfig,
  type OptionName,
  type OptionSpec,
} from '../../../src/config/options.js';
import { ConfigError } from '../../../src/util/errors.js';

const ALL = Object.keys(OPTIONS) as OptionName[];

/** Resolves one setting from one source, with everything else left at its default. */
function resolveFrom(name: OptionName, source: 'flag' | 'env' | 'site', value: unknown): unknown {
  const spec = OPTIONS[name] as OptionSpec<unknown>;
  const flags = source === 'flag' ? { [name]: value } : {};
  const env = source === 'env' ? { [spec.env]: String(value) } : {};
  let site: Record<string, unknown> | undefined;
  if (source === 'site') {
    site = {};
    let cur = site;
    const path = spec.site ?? [];
    for (const key of path.slice(0, -1)) cur = (cur[key] = {}) as Record<string, unknown>;
    cur[path[path.length - 1] ?? ''] = value;
  }
  return resolveConfig([name], flags, env, site)[name];
}

function rejects(name: OptionName, source: 'flag' | 'env' | 'site', value: unknown): ConfigError {
  let caught: unknown;
  try {
    resolveFrom(name, source, value);
  } catch (err: unknown) {
    caught = err;
  }
  assert.ok(caught instanceof ConfigError, `${name} from ${source}: ${String(value)} was accepted`);
  assert.equal(caught.code, 'CONFIG_INVALID');
  assert.equal(caught.source, source);
  assert.match(caught.message, new RegExp(`setting ${name}\\b`));
  return caught;
}

describe('settings: one check for every source', () => {
  // [setting, a bad value as typed on the command line or in the environment, as in YAML]
  const bad: Array<[OptionName, string, unknown]> = [
    ['flavour', 'KUD', 'KUD'],
    ['flavour', 'foo', 'foo'],
    ['installerMode', 'Job', 'pod'],
    ['ipOrder', 'foo,bar', ['foo', 'bar']],
    ['ipOrder', 'lease,lease', ['lease', 'lease']],
    ['maxParallelHosts', '0', 0],
    ['maxParallelHosts', 'ten', 'ten'],
    ['sshPort', '70000', 70000],
    ['sshPort', '22.5', 22.5],
    ['installerTimeout', '-1', -1],
    ['sshUser', 'root; rm -rf /', 'Root'],
    ['prune', 'maybe', 'yes please'],
    ['namespaces', 'Metal3', ['metal3', 'bad_ns']],
  ];
  for (const [name, raw, yamlValue] of bad) {
    const spec = OPTIONS[name] as OptionSpec<unknown>;
    it(`${name}: ${raw} is refused from the flag and the environment${spec.site ? ', and from the Site' : ''}`, () => {
      const fromFlag = rejects(
        name,
        'flag',
        spec.kind === 'list' && name === 'namespaces' ? [raw] : raw,
      );
      assert.match(fromFlag.message, new RegExp(`the flag ${spec.flag.split(' ')[0]}`));
      assert.match(fromFlag.message, /allowed: /);
      const fromEnv = rejects(name, 'env', raw);
      assert.match(fromEnv.message, new RegExp(`the environment variable ${spec.env}`));
      if (spec.site) {
        const fromSite = rejects(name, 'site', yamlValue);
        assert.match(
          fromSite.message,
          new RegExp(`the Site document, spec.${spec.site.join('.')}`),
        );
      }
    });
  }

  it('names the allowed values: choices, ranges, duration bounds', () => {
    assert.match(rejects('flavour', 'env', 'foo').message, /one of kud, kubespray/);
    assert.match(rejects('sshPort', 'flag', '0').message, /an integer from 1 to 65535/);
    assert.match(rejects('logLevel', 'env', 'loud').message, /one of trace, debug, info/);
  });

  it('durations have documented minimums: --interval 1ms is refused, 10s is the least', () => {
    assert.match(rejects('interval', 'flag', '1ms').message, /shorter than the minimum of 10s/);
    assert.match(rejects('interval', 'env', 'soon').message, /is not a duration/);
    assert.match(rejects('resyncInterval', 'flag', '30s').message, /minimum of 1m/);
    assert.equal(resolveFrom('interval', 'flag', '10s'), '10s');
    assert.equal(resolveFrom('interval', 'env', '1h30m'), '1h30m');
  });

  it('--listen must be [host]:port', () => {
    rejects('listen', 'flag', '8080');
    rejects('listen', 'env', 'localhost:99999');
    assert.equal(resolveFrom('listen', 'flag', '127.0.0.1:0'), '127.0.0.1:0');
    assert.equal(resolveFrom('listen', 'flag', '[::1]:8080'), '[::1]:8080');
  });

  it('good values are typed the same from every source', () => {
    assert.equal(resolveFrom('sshPort', 'flag', '2222'), 2222);
    assert.equal(resolveFrom('sshPort', 'env', '2222'), 2222);
    assert.equal(resolveFrom('sshPort', 'site', 2222), 2222);
    assert.deepEqual(resolveFrom('ipOrder', 'flag', 'inventory,lease'), ['inventory', 'lease']);
    assert.deepEqual(resolveFrom('ipOrder', 'env', 'inventory, lease'), ['inventory', 'lease']);
    assert.deepEqual(resolveFrom('ipOrder', 'site', ['inventory']), ['inventory']);
    assert.equal(resolveFrom('prune', 'env', 'off'), false);
    assert.equal(resolveFrom('prune', 'env', 'YES'), true);
    assert.deepEqual(resolveFrom('namespaces', 'flag', ['metal3', 'edge']), ['metal3', 'edge']);
    assert.deepEqual(resolveFrom('leases', 'env', 'a.leases,b.leases'), ['a.leases', 'b.leases']);
  });

  it('control characters are refused in any string setting', () => {
    rejects('stateDir', 'env', 'state\u001b[2J');
    rejects('installerCommand', 'flag', 'installer\nrm -rf /');
  });

  it('a flag given an empty value is refused (an unset shell variable), the default is had by leaving it out', () => {
    for (const name of ALL) {
      const spec = OPTIONS[name] as OptionSpec<unknown>;
      if (spec.kind === 'boolean') continue; // a switch: commander never gives it a value
      if (spec.emptyAllowed) {
        assert.deepEqual(resolveFrom(name, 'flag', ''), []);
        continue;
      }
      const raw = spec.flag.includes('...') ? [''] : '';
      assert.match(rejects(name, 'flag', raw).message, /is empty/, name);
    }
    assert.match(
      rejects('planHash', 'flag', '').message,
      /"" from the flag --plan-hash is empty, which would turn this safeguard off/,
    );
    assert.match(rejects('stateDir', 'flag', '').message, /leave the flag out for the default/);
  });

  it('an empty variable is the default, except for a setting that turns a safeguard on', () => {
    const guards = ALL.filter((n) => (OPTIONS[n] as OptionSpec<unknown>).guard);
    assert.ok(guards.includes('planHash') && guards.includes('aptSigningKey'), guards.join());
    for (const name of guards) {
      assert.match(
        rejects(name, 'env', '').message,
        /is empty, which would turn this safeguard off/,
      );
    }
    for (const name of ALL.filter((n) => !guards.includes(n)))
      assert.deepEqual(resolveFrom(name, 'env', ''), OPTIONS[name].default, name);
  });

  it('every setting has its own environment variable, and --log-level has one', () => {
    const envs = ALL.map((n) => OPTIONS[n].env);
    assert.equal(new Set(envs).size, envs.length);
    assert.equal(OPTIONS.logLevel.env, 'BPA_LOG_LEVEL');
  });
});

describe('settings that can be written in the Site document agree with its schema', () => {
  const schema = JSON.parse(
    readFileSync(new URL('../../../schemas/site.schema.json', import.meta.url), 'utf8'),
  ) as Record<string, unknown>;
  const property = (path: readonly string[]): Record<string, unknown> | undefined => {
    let node = (schema['properties'] as Record<string, unknown>)['spec'] as Record<string, unknown>;
    for (const key of path) {
      const props = node['properties'] as Record<string, Record<string, unknown>> | undefined;
      const next = props?.[key];
      if (!next) return undefined;
      node = next;
    }
    return node;
  };
  for (const name of ALL) {
    const spec = OPTIONS[name] as OptionSpec<unknown>;
    if (!spec.site) continue;
    it(`${name} ↔ spec.${spec.site.join('.')}`, () => {
      const prop = property(spec.site ?? []);
      assert.ok(prop, `the Site schema has no spec.${spec.site?.join('.')}`);
      const leaf = spec.kind === 'list' ? (prop['items'] as Record<string, unknown>) : prop;
      if (spec.choices) assert.deepEqual(leaf['enum'], [...spec.choices]);
      if (spec.kind === 'integer') {
        assert.equal(prop['minimum'], spec.min, 'minimum');
        assert.equal(prop['maximum'], spec.max, 'maximum');
      }
      if (spec.default !== '' && !(Array.isArray(spec.default) && !spec.default.length))
        assert.deepEqual(prop['default'], spec.default, 'default');
    });
  }
});
