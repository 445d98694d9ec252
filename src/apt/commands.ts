/**
 * The apt and dpkg command lines bpa runs on nodes, as argv (quoted by the SSH layer), and
 * the parsing of what they print. Names and versions are validated before they get here;
 * they are checked again, because nothing that could carry shell syntax may reach a node.
 */
const PACKAGE = /^[a-z0-9][a-z0-9+.-]+$/;
const VERSION = /^(?:[0-9]+:)?[0-9A-Za-z][0-9A-Za-z.+~-]*$/;
const MIRROR =
  /^deb(?:-src)? (?:\[[a-zA-Z0-9=,._/ -]+\] )?(?:https?|file|copy):\/\/[^\s'"`$\\;|&<>]+(?: [A-Za-z0-9._/-]+)+$/;

export const MIRROR_LIST = '/etc/apt/sources.list.d/bpa-mirror.list';

export interface PackageRef {
  name: string;
  version?: string;
}

export function checkPackage(p: PackageRef): void {
  if (!PACKAGE.test(p.name)) throw new Error(`invalid package name ${JSON.stringify(p.name)}`);
  if (p.version !== undefined && !VERSION.test(p.version))
    throw new Error(`invalid version ${JSON.stringify(p.version)} of ${p.name}`);
}

export function checkMirror(line: string): void {
  if (!MIRROR.test(line))
    throw new Error(
      `invalid packageMirror ${JSON.stringify(line)}: expected an apt source line like "deb http://host/path suite component"`,
    );
}

const APT_ENV = ['env', 'DEBIAN_FRONTEND=noninteractive', 'LC_ALL=C'];
/** apt waits for the dpkg lock (another apt run, unattended-upgrades) instead of failing. */
const LOCK_WAIT = ['-o', 'DPkg::Lock::Timeout=300'];

export function installArgv(packages: readonly PackageRef[]): string[] {
  packages.forEach(checkPackage);
  const specs = packages.map((p) => (p.version ? `${p.name}=${p.version}` : p.name));
  return [
    ...APT_ENV,
    'apt-get',
    'install',
    '-y',
    '-q',
    '--no-install-recommends',
    '--allow-downgrades',
    ...LOCK_WAIT,
    '--',
    ...specs,
  ];
}

export function removeArgv(names: readonly string[]): string[] {
  names.forEach((name) => checkPackage({ name }));
  return [...APT_ENV, 'apt-get', 'remove', '-y', '-q', ...LOCK_WAIT, '--', ...names];
}

/** Refreshes package lists; with a mirror, only the mirror's (offline sites reach nothing else). */
export function updateArgv(mirror: boolean): string[] {
  const only = mirror
    ? [
        '-o',
        `Dir::Etc::sourcelist=${MIRROR_LIST}`,
        '-o',
        'Dir::Etc::sourceparts=-',
        '-o',
        'APT::Get::List-Cleanup=0',
      ]
    : [];
  return [...APT_ENV, 'apt-get', 'update', '-q', ...LOCK_WAIT, ...only];
}

/**
 * `apt-mark hold` (or `unhold`): a held package is left alone by `apt-get upgrade` and
 * unattended-upgrades, and apt refuses to change it as another package's dependency. Only
 * packages apt knows may be named (an unknown name makes apt-mark fail).
 */
export function markArgv(mark: 'hold' | 'unhold', names: readonly string[]): string[] {
  names.forEach((name) => checkPackage({ name }));
  return [...APT_ENV, 'apt-mark', mark, '--', ...names];
}

/** dpkg-query exits 1 when a package asked about is not installed: an answer, not a failure. */
export const QUERY_OK_EXIT_CODES: readonly number[] = [0, 1];

export function queryArgv(names: readonly string[]): string[] {
  names.forEach((name) => checkPackage({ name }));
  return [
    'dpkg-query',
    '-W',
    '-f=${Package}\\t${Version}\\t${db:Status-Abbrev}\\n',
    '--',
    ...names,
  ];
}

/**
 * Installed versions from dpkg-query output; packages not installed (absent, removed or
 * config-files only) are null. The status is two letters, what is wanted then what is: a
 * package is installed when the second is `i`, whether it is wanted installed (`ii`) or held
 * (`hi`).
 */
export function parseQuery(
  stdout: string,
  names: readonly string[],
): Record<string, string | null> {
  const out: Record<string, string | null> = Object.fromEntries(names.map((n) => [n, null]));
  for (const line of stdout.split('\n')) {
    const [name, version, status] = line.split('\t');
    if (!name || !(name in out)) continue;
    out[name] = status?.[1] === 'i' && version ? version : null;
  }
  return out;
}

/** The packages of dpkg-query output that are on hold (`apt-mark hold`), sorted. */
export function parseHeld(stdout: string, names: readonly string[]): string[] {
  const asked = new Set(names);
  const held = new Set<string>();
  for (const line of stdout.split('\n')) {
    const [name, , status] = line.split('\t');
    if (name && asked.has(name) && status?.startsWith('h')) held.add(name);
  }
  return [...held].sort();
}

/** The package apt could not find, from its stderr, for a message that names it. */
export function missingPackage(stderr: string): string | undefined {
  const m =
    /Unable to locate package (\S+)|Version '([^']+)' for '([^']+)' was not found|Package '?([^' ]+)'? has no installation candidate/.exec(
      stderr,
    );
  if (!m) return undefined;
  if (m[1]) return m[1];
  if (m[2]) return `${m[3]}=${m[2]}`;
  return m[4];
}
