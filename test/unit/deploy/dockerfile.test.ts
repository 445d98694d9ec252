import { strict as assert } from 'node:assert';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './manifests.js';

/** No engine runs on the test machines: the Dockerfile is checked by reading it. */
interface Instruction {
  cmd: string;
  args: string;
}
interface Stage {
  image: string;
  name: string | undefined;
  body: Instruction[];
}

function parseDockerfile(text: string): { globalArgs: Map<string, string>; stages: Stage[] } {
  const logical: string[] = [];
  let pending = '';
  for (const line of text.split('\n')) {
    if (/^\s*#/.test(line) && pending === '') continue;
    if (/^\s*#/.test(line)) continue; // a comment inside a continued RUN
    const cont = /\\\s*$/.test(line);
    pending += (pending ? ' ' : '') + line.replace(/\\\s*$/, '').trim();
    if (!cont) {
      if (pending.trim()) logical.push(pending.trim());
      pending = '';
    }
  }
  const globalArgs = new Map<string, string>();
  const stages: Stage[] = [];
  for (const line of logical) {
    const m = /^(\S+)\s*(.*)$/.exec(line);
    if (!m) continue;
    const cmd = (m[1] as string).toUpperCase();
    const args = m[2] as string;
    if (cmd === 'FROM') {
      const [image = '', as, name] = args.split(/\s+/);
      const resolved = image.replace(
        /\$\{(\w+)\}|\$(\w+)/g,
        (_, a: string | undefined, b: string | undefined) =>
          globalArgs.get((a ?? b) as string) ?? '',
      );
      stages.push({
        image: resolved,
        name: as?.toUpperCase() === 'AS' ? name : undefined,
        body: [],
      });
    } else if (stages.length === 0) {
      if (cmd === 'ARG') {
        const [k, v = ''] = args.split('=');
        globalArgs.set(k as string, v);
      }
    } else {
      (stages[stages.length - 1] as Stage).body.push({ cmd, args });
    }
  }
  return { globalArgs, stages };
}

const dockerfile = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
const final = dockerfile.stages[dockerfile.stages.length - 1] as Stage;
const of = (stage: Stage, cmd: string): string[] =>
  stage.body.filter((i) => i.cmd === cmd).map((i) => i.args);

describe('Dockerfile', () => {
  it('builds in several stages from Node.js 20 on Debian bookworm', () => {
    assert.ok(dockerfile.stages.length >= 2);
    for (const stage of dockerfile.stages) assert.match(stage.image, /^node:20-bookworm(-slim)?$/);
    assert.equal(final.image, 'node:20-bookworm-slim');
    const build = dockerfile.stages.find((s) => of(s, 'RUN').some((r) => /npm run build/.test(r)));
    assert.ok(build && build !== final, 'a separate stage compiles the TypeScript');
    assert.ok(of(build, 'RUN').some((r) => /\bnpm ci\b/.test(r)));
  });

  it('the final stage takes production dependencies only, from a stage that left out the dev ones', () => {
    const copies = of(final, 'COPY').filter((c) => c.startsWith('--from='));
    const sources = copies.map((c) => /--from=(\S+)\s+(\S+)/.exec(c)?.slice(1) ?? []);
    assert.deepEqual(sources.map(([, path]) => path).sort(), ['/src/dist', '/src/node_modules']);
    const depsStage = dockerfile.stages.find(
      (s) => s.name === sources.find(([, p]) => p === '/src/node_modules')?.[0],
    );
    assert.ok(depsStage, 'node_modules comes from a named stage');
    assert.ok(
      of(depsStage, 'RUN').some(
        (r) => /npm ci\b.*--omit=dev/.test(r) || /npm prune\b.*--omit=dev/.test(r),
      ),
      'that stage omits devDependencies',
    );
  });

  it('the final stage installs git, openssh-client, age and CA certificates, and no build tools', () => {
    const runs = of(final, 'RUN').join(' && ');
    const install = /apt-get install ([^&;]*)/.exec(runs)?.[1] ?? '';
    assert.match(install, /--no-install-recommends/);
    const packages = install.split(/\s+/).filter((w) => w && !w.startsWith('-'));
    assert.deepEqual(packages.sort(), [
      'age',
      'ca-certificates',
      'git',
      'gnupg',
      'gpgv',
      'openssh-client',
    ]);
    assert.match(runs, /rm -rf \/var\/lib\/apt\/lists\/\*/);
    assert.doesNotMatch(runs, /\b(?:npm|npx|yarn|pnpm)\s+(?:ci|install|i|add|run|rebuild)\b/);
    assert.doesNotMatch(runs, /build-essential|\bgcc\b|\bg\+\+|\bmake\b|\bpython3?\b|node-gyp/);
  });

  it('runs as a numeric non-root user, with the state volume, port and entry point bpa expects', () => {
    const users = of(final, 'USER');
    assert.equal(users.length, 1);
    const [uid, gid] = (users[0] as string).split(':');
    assert.match(uid ?? '', /^\d+$/, 'numeric, so that runAsNonRoot can be verified');
    assert.notEqual(Number(uid), 0);
    assert.notEqual(Number(gid ?? 1), 0);
    const lastUser = final.body.map((i) => i.cmd).lastIndexOf('USER');
    assert.ok(
      !final.body.slice(lastUser).some((i) => i.cmd === 'RUN'),
      'nothing runs as root after USER',
    );
    assert.ok(
      of(final, 'RUN').some(
        (r) =>
          /useradd .*--uid 10001\b/.test(r) && /install -d -o bpa -g bpa .*\/var\/lib\/bpa/.test(r),
      ),
    );
    assert.deepEqual(of(final, 'VOLUME'), ['["/var/lib/bpa"]']);
    const env = of(final, 'ENV').join(' ');
    assert.match(env, /\bBPA_STATE_DIR=\/var\/lib\/bpa\b/);
    assert.match(env, /\bNODE_ENV=production\b/);
    assert.deepEqual(of(final, 'EXPOSE'), ['8080']);
    assert.deepEqual(
      of(final, 'ENTRYPOINT').map((e) => JSON.parse(e) as unknown),
      [['node', '/app/bin/bpa']],
    );
    assert.deepEqual(
      of(final, 'CMD').map((e) => JSON.parse(e) as unknown),
      [['serve']],
    );
    assert.equal(of(final, 'WORKDIR').at(-1), '/home/bpa');
  });

  it('lays out /app as bin/bpa and the schema loader expect', () => {
    // bin/bpa imports ../dist/cli/main.js; src/validate/schema.ts reads ../../schemas/.
    const copies = of(final, 'COPY').join('\n');
    assert.ok(of(final, 'WORKDIR').includes('/app'));
    for (const [from, to] of [
      ['package.json', './'],
      ['bin', './bin'],
      ['schemas', './schemas'],
    ] as const) {
      assert.match(copies, new RegExp(`^${from} ${to.replace(/[./]/g, '\\$&')}$`, 'm'));
      assert.ok(existsSync(join(ROOT, from)), `${from} exists`);
    }
    assert.match(copies, /--from=\S+ \/src\/dist \.\/dist$/m);
    assert.ok(
      existsSync(join(ROOT, 'src/cli/main.ts')),
      'dist/cli/main.js is built from src/cli/main.ts',
    );
  });

  it('carries OCI labels', () => {
    const labels = of(final, 'LABEL').join(' ');
    for (const key of ['title', 'description', 'licenses', 'version', 'revision']) {
      assert.match(labels, new RegExp(`org\\.opencontainers\\.image\\.${key}=`));
    }
  });
});

describe('.dockerignore', () => {
  const patterns = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  // Docker's rules, for the patterns used here: a path is excluded when a pattern matches it
  // or one of its parent directories.
  const matches = (pattern: string, path: string): boolean => {
    const re = new RegExp(
      `^${pattern
        .replace(/[.+^$()|[\]{}]/g, '\\$&')
        .replace(/\*\*\//g, '\0')
        .replace(/\*/g, '[^/]*')
        .replace(/\?/g, '[^/]')
        .replace(/\0/g, '(?:.*/)?')}$`,
    );
    const parts = path.split('/');
    return parts.some((_, i) => re.test(parts.slice(0, i + 1).join('/')));
  };
  // The last pattern that matches decides; a `!pattern` lets a path back in.
  const excluded = (path: string): boolean => {
    let out = false;
    for (const p of patterns) {
      if (p.startsWith('!')) {
        if (matches(p.slice(1), path)) out = false;
      } else if (matches(p, path)) out = true;
    }
    return out;
  };

  it('keeps build outputs, dependencies, tests, git and state out of the context', () => {
    for (const path of [
      'node_modules/yaml/package.json',
      'dist/cli/main.js',
      '.git/HEAD',
      'bench/out/x.json',
      'test/unit/x.test.ts',
      '.bpa-state/applied.json',
      'sites/example/.bpa-state/x',
      'deploy/rbac.yaml',
      'id_ed25519',
      'keys/id_ed25519.pub',
      'scripts/demo.ts',
    ]) {
      assert.ok(excluded(path), `${path} is excluded`);
    }
  });

  it('lets in everything the build reads', () => {
    for (const path of [
      'package.json',
      'package-lock.json',
      'tsconfig.json',
      'tsconfig.build.json',
      'bin/bpa',
      'src/cli/main.ts',
      'src/ssh/keys.ts',
      'schemas/site.schema.json',
      'scripts/bundle.mjs',
    ]) {
      assert.ok(!excluded(path), `${path} is in the context`);
    }
  });
});
