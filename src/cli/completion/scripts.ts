import type { CommandSpec, FlagSpec } from './spec.js';

/** The shells `bpa completion` writes a script for. */
export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** The completion script of `shell` for bpa's commands. */
export function completionScript(shell: Shell, commands: readonly CommandSpec[]): string {
  if (shell === 'bash') return bashScript(commands);
  if (shell === 'zsh') return zshScript(commands);
  return fishScript(commands);
}

/** A description cut to its first clause: one short line in a completion menu. */
function short(description: string): string {
  return (description.split(/; | \(exit |: /)[0] ?? '').trim();
}

/** Word lists and flag names are plain words; a description is quoted for each shell. */
function names(flags: readonly FlagSpec[]): string[] {
  return flags.flatMap((f) => (f.short ? [f.short, f.long] : [f.long]));
}

function bashScript(commands: readonly CommandSpec[]): string {
  const cases = commands.map((c) => {
    const valued = c.flags.filter((f) => f.values !== undefined);
    const byValues = new Map<string, string[]>();
    for (const f of valued) {
      const key = (f.values ?? []).join(' ');
      byValues.set(key, [...(byValues.get(key) ?? []), ...names([f])]);
    }
    const prev = [...byValues].map(([values, flags]) =>
      values
        ? `        ${flags.join('|')}) COMPREPLY=($(compgen -W '${values}' -- "$cur")); return ;;`
        : `        ${flags.join('|')}) COMPREPLY=($(compgen -f -- "$cur")); return ;;`,
    );
    const arg = !c.argument
      ? ''
      : c.argument.values
        ? `COMPREPLY=($(compgen -W '${c.argument.values.join(' ')}' -- "$cur"))`
        : 'COMPREPLY=($(compgen -f -- "$cur"))';
    return [
      `    ${c.name})`,
      ...(prev.length ? ['      case $prev in', ...prev, '      esac'] : []),
      `      if [[ $cur == -* ]]; then`,
      `        COMPREPLY=($(compgen -W '${names(c.flags).join(' ')}' -- "$cur"))`,
      ...(arg ? ['      else', `        ${arg}`] : []),
      '      fi',
      '      ;;',
    ].join('\n');
  });
  return `# bpa completion for bash. Load it with: source <(bpa completion bash)
_bpa_completion() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]} cmd= i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case \${COMP_WORDS[i]} in
      -*) ;;
      *) cmd=\${COMP_WORDS[i]}; break ;;
    esac
  done
  COMPREPLY=()
  case $cmd in
    '')
      COMPREPLY=($(compgen -W '${[...commands.map((c) => c.name), '--help', '--version'].join(' ')}' -- "$cur"))
      ;;
${cases.join('\n')}
  esac
}
complete -o filenames -F _bpa_completion bpa
`;
}

/** Quoted for zsh inside '…'; brackets and colons escaped for _arguments and _describe. */
function zshText(text: string): string {
  return short(text)
    .replace(/\\/g, '\\\\')
    .replace(/'/g, "'\\''")
    .replace(/([[\]:])/g, '\\$1');
}

function zshFlag(f: FlagSpec): string {
  const action =
    f.values === undefined
      ? ''
      : f.values.length
        ? `:value:(${f.values.join(' ')})`
        : ':file:_files';
  const spec = `[${zshText(f.description)}]${action}`;
  return f.short ? `'(${f.short} ${f.long})'{${f.short},${f.long}}'${spec}'` : `'${f.long}${spec}'`;
}

function zshScript(commands: readonly CommandSpec[]): string {
  const cases = commands.map((c) => {
    const arg = !c.argument
      ? []
      : [c.argument.values ? `'1:argument:(${c.argument.values.join(' ')})'` : `'1:path:_files'`];
    const specs = [...c.flags.map(zshFlag), ...arg];
    return [
      `    ${c.name})`,
      `      _arguments -s \\`,
      ...specs.map((s, i) => `        ${s}${i < specs.length - 1 ? ' \\' : ''}`),
      '      ;;',
    ].join('\n');
  });
  return `#compdef bpa
# bpa completion for zsh. Load it after compinit with: source <(bpa completion zsh)
_bpa() {
  local -a commands
  commands=(
${commands.map((c) => `    '${c.name}:${zshText(c.description)}'`).join('\n')}
  )
  if (( CURRENT == 2 )); then
    _describe -t commands 'bpa command' commands
    return
  fi
  local cmd=$words[2]
  shift words
  (( CURRENT-- ))
  case $cmd in
${cases.join('\n')}
  esac
}
compdef _bpa bpa
`;
}

/** Quoted for fish inside '…'. */
function fishText(text: string): string {
  return `'${short(text).replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function fishScript(commands: readonly CommandSpec[]): string {
  const lines = [
    '# bpa completion for fish. Load it with: bpa completion fish | source',
    'complete -c bpa -f',
    ...commands.map(
      (c) => `complete -c bpa -n __fish_use_subcommand -a ${c.name} -d ${fishText(c.description)}`,
    ),
  ];
  for (const c of commands) {
    const when = `-n '__fish_seen_subcommand_from ${c.name}'`;
    for (const f of c.flags) {
      const short = f.short ? ` -s ${f.short.slice(1)}` : '';
      const value =
        f.values === undefined ? '' : f.values.length ? ` -x -a '${f.values.join(' ')}'` : ' -r -F';
      lines.push(
        `complete -c bpa ${when}${short} -l ${f.long.slice(2)}${value} -d ${fishText(f.description)}`,
      );
    }
    if (c.argument)
      lines.push(
        c.argument.values
          ? `complete -c bpa ${when} -a '${c.argument.values.join(' ')}'`
          : `complete -c bpa ${when} -F`,
      );
  }
  return `${lines.join('\n')}\n`;
}
