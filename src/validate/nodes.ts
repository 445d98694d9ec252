import { isGroupMac, isNullMac, normalizeMac } from '../util/mac.js';
import { error, pointer, warning, type Problem } from '../util/problem.js';
import { quantityToUnits } from '../util/quantity.js';
import { RESERVED_NODE_NAMES } from '../util/reserved-names.js';
import { at, spec, type Doc } from './doc.js';
import type { NodeSpec, Role } from './model.js';
import { placementTerms } from './placement.js';

/**
 * The entries of one role list with their pointers: `masters` as written, or the 2019 singular
 * `master`, either a list like `masters` or one node's fields (named `master-1`). Both forms
 * in one document are an error: which one is meant cannot be known.
 */
function roleEntries(
  prov: Doc,
  role: Role,
  problems: Problem[],
): Array<{ entry: Record<string, unknown>; ptr: (name: string) => string }> {
  const s = spec(prov);
  const plural = `${role}s`;
  const list = (s[plural] ?? []) as Array<Record<string, unknown>>;
  const out = list.map((entry, i) => ({
    entry,
    ptr: (name: string) => pointer('spec', plural, i, name),
  }));
  const legacy = s[role];
  if (legacy === undefined) return out;
  if (s[plural] !== undefined) {
    problems.push(
      error(
        'INVALID_VALUE',
        `spec.${role} (the 2019 ICN form) and spec.${plural} are both given; move the node(s) of spec.${role} into spec.${plural}`,
        at(prov, pointer('spec', role)),
      ),
    );
    return out;
  }
  if (Array.isArray(legacy)) {
    return (legacy as Array<Record<string, unknown>>).map((entry, i) => ({
      entry,
      ptr: (name: string) => pointer('spec', role, i, name),
    }));
  }
  return [{ entry: { [`${role}-1`]: legacy }, ptr: () => pointer('spec', role) }];
}

const FIELDS = ['mac', 'cpu', 'memoryBytes', 'sriov', 'qat'] as const;
const TERMS = ['hostSelector', 'hardware', 'preferred'] as const;

/**
 * The nodes of a Provisioning: masters, then workers not already listed as masters (one name
 * in both lists is one dual-role node, whose fields must agree), with the checks on them.
 */
export function buildNodes(prov: Doc, problems: Problem[]): NodeSpec[] {
  const s = spec(prov);
  const nodes = new Map<string, NodeSpec>();
  let masters = 0;
  for (const role of ['master', 'worker'] as Role[]) {
    const seen = new Set<string>();
    roleEntries(prov, role, problems).forEach(({ entry, ptr: pointerOf }) => {
      const [name] = Object.keys(entry);
      if (name === undefined) return;
      const ptr = pointerOf(name);
      if (seen.has(name)) {
        problems.push(
          error('DUPLICATE_NODE', `${role}s: node "${name}" is listed twice`, at(prov, ptr)),
        );
        return;
      }
      seen.add(name);
      if (RESERVED_NODE_NAMES.has(name)) {
        problems.push(
          error(
            'RESERVED_NODE_NAME',
            `node "${name}" has the name of an inventory group or keyword; installers select nodes by name (--limit), and this one would select a group`,
            at(prov, ptr),
          ),
        );
      }
      if (role === 'master') masters++;
      const raw = (entry[name] ?? {}) as Record<string, unknown>;
      const fields = { ...nodeFields(raw), ...placementTerms(raw, prov, ptr, problems) };
      if (fields.mac !== undefined && (isGroupMac(fields.mac) || isNullMac(fields.mac))) {
        problems.push(
          error(
            'UNUSABLE_MAC',
            `node "${name}": mac-address ${fields.mac} can never identify a host: ${isNullMac(fields.mac) ? 'it is the all-zero MAC, which metal3 gives a NIC it could not identify' : 'it is a multicast or broadcast (group) address'}; write the MAC of one of the host's NICs`,
            at(prov, `${ptr}/mac-address`),
          ),
        );
      }
      const existing = nodes.get(name);
      if (!existing) {
        nodes.set(name, { name, roles: [role], pointer: ptr, ...fields });
        return;
      }
      existing.roles.push(role);
      for (const f of TERMS) {
        const a = existing[f];
        const b = fields[f];
        if (a !== undefined && b !== undefined && JSON.stringify(a) !== JSON.stringify(b)) {
          problems.push(
            error(
              'DUAL_ROLE_MISMATCH',
              `node "${name}" is both master and worker, but its ${f} differs`,
              at(prov, `${ptr}/${f}`),
            ),
          );
        }
      }
      for (const f of FIELDS) {
        const a = existing[f];
        const b = fields[f];
        if (a !== undefined && b !== undefined && a !== b) {
          problems.push(
            error(
              'DUAL_ROLE_MISMATCH',
              `node "${name}" is both master and worker, but its ${f === 'memoryBytes' ? 'memory' : f === 'mac' ? 'mac-address' : f} differs (${String(f === 'memoryBytes' ? existing.memory : a)} vs ${String(f === 'memoryBytes' ? fields.memory : b)})`,
              at(prov, ptr),
            ),
          );
        }
      }
      Object.assign(
        existing,
        Object.fromEntries(
          Object.entries(fields).filter(
            ([k, v]) =>
              v !== undefined && (existing as unknown as Record<string, unknown>)[k] === undefined,
          ),
        ),
      );
    });
  }
  if (masters === 0) {
    problems.push(
      error(
        'NO_MASTER',
        `cluster has no master: add at least one entry under spec.masters`,
        at(
          prov,
          s['masters'] !== undefined
            ? '/spec/masters'
            : s['master'] !== undefined
              ? '/spec/master'
              : '/spec',
        ),
      ),
    );
  } else if (masters % 2 === 0) {
    problems.push(
      warning(
        'EVEN_MASTERS',
        `${masters} masters: etcd keeps quorum with a majority, so ${masters - 1} or ${masters + 1} masters are better than ${masters}`,
        at(
          prov,
          s['masters'] === undefined && s['master'] !== undefined
            ? '/spec/master'
            : '/spec/masters',
        ),
      ),
    );
  }
  return [...nodes.values()];
}

function nodeFields(v: Record<string, unknown>): Omit<NodeSpec, 'name' | 'roles' | 'pointer'> {
  const out: Omit<NodeSpec, 'name' | 'roles' | 'pointer'> = {};
  if (typeof v['mac-address'] === 'string') out.mac = normalizeMac(v['mac-address']);
  if (typeof v['cpu'] === 'number') out.cpu = v['cpu'];
  if (typeof v['memory'] === 'string' || typeof v['memory'] === 'number') {
    out.memory = String(v['memory']);
    out.memoryBytes = quantityToUnits(out.memory);
  }
  if (typeof v['sriov'] === 'boolean') out.sriov = v['sriov'];
  if (typeof v['qat'] === 'boolean') out.qat = v['qat'];
  return out;
}
