/**
 * What a node needs from a host, and how a host measures up. Memory is compared in whole
 * mebibytes: a host's RAM is a whole number of MiB, so `bytes ≤ MiB·2^20` holds exactly when
 * `ceil(bytes / 2^20) ≤ MiB`. That keeps the comparison exact without bigint arithmetic in the
 * hot loop of the matching.
 */
import type { Host } from '../../observe/types.js';
import { formatBytes, mebibytesToBytes } from '../../util/quantity.js';
import type { NodeSpec } from '../../validate/model.js';

const MIB = 1n << 20n;

/** A node's requirements, normalized: -1 means "no requirement". */
export interface Need {
  cpu: number;
  /** Required memory in whole MiB, rounded up; -1 when none. */
  memMib: number;
  /** The required memory as the site wrote it (or formatted), for messages. */
  memText: string;
  sriov: boolean;
  qat: boolean;
}

/** A host's capacity, normalized: -1 means "unknown" (fails any requirement on it). */
export interface Capacity {
  cpu: number;
  memMib: number;
  sriov: boolean;
  qat: boolean;
}

export function needOf(node: NodeSpec): Need {
  const cpu = node.cpu !== undefined && node.cpu > 0 ? node.cpu : -1;
  let memMib = -1;
  let memText = '';
  if (node.memoryBytes !== undefined && node.memoryBytes > 0n) {
    // Number() of a value beyond 2^53 stays above every real host's MiB count, so the
    // comparison keeps its answer even for absurd requests.
    memMib = Number((node.memoryBytes + MIB - 1n) / MIB);
    memText = node.memory ?? formatBytes(node.memoryBytes);
  }
  return { cpu, memMib, memText, sriov: node.sriov === true, qat: node.qat === true };
}

export function capacityOf(host: Host): Capacity {
  const cpu = host.cpuCount !== undefined && host.cpuCount >= 0 ? Math.trunc(host.cpuCount) : -1;
  const memMib =
    host.ramMebibytes !== undefined && host.ramMebibytes >= 0 ? Math.trunc(host.ramMebibytes) : -1;
  return { cpu, memMib, sriov: host.sriov, qat: host.qat };
}

export function fits(need: Need, cap: Capacity): boolean {
  return (
    (need.cpu < 0 || need.cpu <= cap.cpu) &&
    (need.memMib < 0 || need.memMib <= cap.memMib) &&
    (!need.sriov || cap.sriov) &&
    (!need.qat || cap.qat)
  );
}

/** "cpu>=20, memory>=8Gi, sriov"; empty when the node asks for nothing. */
export function describeNeed(need: Need): string {
  const parts: string[] = [];
  if (need.cpu >= 0) parts.push(`cpu>=${need.cpu}`);
  if (need.memMib >= 0) parts.push(`memory>=${need.memText}`);
  if (need.sriov) parts.push('sriov');
  if (need.qat) parts.push('qat');
  return parts.join(', ');
}

function memOfCap(cap: Capacity): string {
  return cap.memMib < 0 ? 'unknown' : formatBytes(mebibytesToBytes(cap.memMib));
}

/** "resources: cpu 16>=8, memory 32Gi>=16Gi": why a host was good enough. */
export function describeFit(need: Need, cap: Capacity): string {
  const parts: string[] = [];
  if (need.cpu >= 0) parts.push(`cpu ${cap.cpu}>=${need.cpu}`);
  if (need.memMib >= 0) parts.push(`memory ${memOfCap(cap)}>=${need.memText}`);
  if (need.sriov) parts.push('sriov');
  if (need.qat) parts.push('qat');
  return parts.length > 0 ? `resources: ${parts.join(', ')}` : 'resources: no requirements';
}

/** One unmet requirement, with the host's figure and the node's. */
export interface Shortfall {
  what: 'cpu' | 'memory' | 'sriov' | 'qat';
  has: string;
  needs: string;
  /** How far off the host is, relative to the need (0..1); 1 for missing features or data. */
  gap: number;
}

export function shortfalls(need: Need, cap: Capacity): Shortfall[] {
  const out: Shortfall[] = [];
  if (need.cpu >= 0 && cap.cpu < need.cpu) {
    out.push({
      what: 'cpu',
      has: cap.cpu < 0 ? 'unknown' : String(cap.cpu),
      needs: `>=${need.cpu}`,
      gap: cap.cpu < 0 ? 1 : (need.cpu - cap.cpu) / need.cpu,
    });
  }
  if (need.memMib >= 0 && cap.memMib < need.memMib) {
    out.push({
      what: 'memory',
      has: memOfCap(cap),
      needs: `>=${need.memText}`,
      gap: cap.memMib < 0 ? 1 : (need.memMib - cap.memMib) / need.memMib,
    });
  }
  if (need.sriov && !cap.sriov) out.push({ what: 'sriov', has: 'no', needs: 'yes', gap: 1 });
  if (need.qat && !cap.qat) out.push({ what: 'qat', has: 'no', needs: 'yes', gap: 1 });
  return out;
}

/** "has cpu 8, needs >=10; has no sriov" */
export function describeShortfalls(list: Shortfall[]): string {
  return list
    .map((s) =>
      s.what === 'sriov' || s.what === 'qat'
        ? `has no ${s.what}`
        : `has ${s.what} ${s.has}, needs ${s.needs}`,
    )
    .join('; ');
}

/** "cpu 16, no sriov": the short form used for the nearest miss. */
export function describeShortfallsBrief(list: Shortfall[]): string {
  return list.map((s) => (s.has === 'no' ? `no ${s.what}` : `${s.what} ${s.has}`)).join(', ');
}
