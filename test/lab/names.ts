/**
 * Every name and address of a lab derives from its id and its slot, so a crashed lab can be
 * cleaned up from its id alone and parallel labs never collide. Interface names stay within
 * the kernel's 15 characters.
 */

/** Lab ids: short so `bpv<id>-<n>` fits an interface name. */
export const LAB_ID_PATTERN = /^[a-z0-9]{1,6}$/;

/** Slots map to /24 networks inside 198.18.0.0/15 (the benchmarking range, RFC 2544). */
export const SLOT_COUNT = 512;

/** Static addresses are .2–.127, DHCP hands out .128–.254: a fallback never meets a lease. */
export const MAX_HOSTS = 120;

export function randomLabId(random: () => number = Math.random): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  let id = '';
  for (let i = 0; i < 4; i++) id += alphabet[Math.floor(random() * alphabet.length)];
  return id;
}

export const bridgeName = (id: string): string => `bpab${id}`;
export const userName = (id: string): string => `bpat${id}`;
export const netnsName = (id: string, index: number): string => `bpa-${id}-h${index}`;
export const vethName = (id: string, index: number): string => `bpv${id}-${index}`;
export const hostName = (index: number): string => `h${index}`;

/** Host index of a lab netns name, or undefined when the name is not one of this lab's. */
export function netnsIndex(id: string, netns: string): number | undefined {
  const m = new RegExp(`^bpa-${id}-h([0-9]+)$`).exec(netns);
  return m?.[1] === undefined ? undefined : Number(m[1]);
}

/** The first three octets of a slot's /24, e.g. slot 257 → "198.19.1". */
export function slotPrefix(slot: number): string {
  return `198.${18 + (slot >> 8)}.${slot & 255}`;
}

export const gatewayIp = (slot: number): string => `${slotPrefix(slot)}.1`;
export const staticIp = (slot: number, index: number): string => `${slotPrefix(slot)}.${1 + index}`;
export const dhcpRange = (slot: number): [string, string] => [
  `${slotPrefix(slot)}.128`,
  `${slotPrefix(slot)}.254`,
];

/** A locally administered unicast MAC: 02:62:70 ("bp"), the slot, the host index. */
export function hostMac(slot: number, index: number): string {
  const hex = (n: number): string => n.toString(16).padStart(2, '0');
  return `02:62:70:${hex(slot >> 8)}:${hex(slot & 255)}:${hex(index)}`;
}
