/**
 * A DHCPv6 client of the few lines a test needs (no DHCPv6 client is installed here): for each
 * `<iaid>=<duid hex>` argument, a SOLICIT with Rapid Commit (RFC 8415 §18.2.1) asking for one
 * address (IA_NA) under that DUID, sent to all DHCP servers on `<ifname>`; prints
 * `<iaid> <address>` from each REPLY. Run inside the client's network namespace, as root
 * (port 546): `node dhcpv6-client.mjs eth0 1=00:03:00:01:52:54:00:66:00:02 …`.
 */
import { Buffer } from 'node:buffer';
import dgram from 'node:dgram';
import { clearInterval, setInterval } from 'node:timers';
import { URL } from 'node:url';

const [ifname, ...clients] = process.argv.slice(2);
const SOLICIT = 1;
const REPLY = 7;
const OPT = { clientId: 1, iaNa: 3, iaAddr: 5, elapsedTime: 8, rapidCommit: 14 };

const option = (code, data) => {
  const head = Buffer.alloc(4);
  head.writeUInt16BE(code, 0);
  head.writeUInt16BE(data.length, 2);
  return Buffer.concat([head, data]);
};
const u32 = (n) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};

/** The options of a message or an option's body: code → body. */
function options(buf, from) {
  const out = new Map();
  for (let p = from; p + 4 <= buf.length;) {
    const len = buf.readUInt16BE(p + 2);
    out.set(buf.readUInt16BE(p), buf.subarray(p + 4, p + 4 + len));
    p += 4 + len;
  }
  return out;
}

/** The address of the IA_NA a REPLY grants, compressed as dnsmasq writes it. */
function grantedAddress(msg) {
  const ia = options(msg, 4).get(OPT.iaNa);
  const addr = ia && options(ia, 12).get(OPT.iaAddr);
  if (!addr) return undefined;
  const hex = addr.subarray(0, 16).toString('hex').match(/.{4}/g).join(':');
  return new URL(`http://[${hex}]/`).hostname.slice(1, -1);
}

const sock = dgram.createSocket({ type: 'udp6', reuseAddr: true });
await new Promise((resolve) => sock.bind(546, '::', resolve));
sock.setMulticastInterface(`::%${ifname}`);
try {
  for (const client of clients) {
    const [iaid, duid] = client.split('=');
    const xid = Buffer.from([0, 1, 2].map(() => Math.floor(Math.random() * 256)));
    const solicit = Buffer.concat([
      Buffer.from([SOLICIT]),
      xid,
      option(OPT.clientId, Buffer.from(duid.replace(/:/g, ''), 'hex')),
      option(OPT.iaNa, Buffer.concat([u32(Number(iaid)), u32(0), u32(0)])),
      option(OPT.elapsedTime, Buffer.alloc(2)),
      option(OPT.rapidCommit, Buffer.alloc(0)),
    ]);
    const address = await new Promise((resolve, reject) => {
      let tries = 0;
      const done = (fn, value) => {
        clearInterval(timer);
        sock.off('message', onMessage);
        fn(value);
      };
      const onMessage = (msg) => {
        if (msg[0] === REPLY && msg.subarray(1, 4).equals(xid)) done(resolve, grantedAddress(msg));
      };
      const send = () => {
        if (tries++ === 10) done(reject, new Error(`no REPLY for IAID ${iaid} after 10 tries`));
        else sock.send(solicit, 547, `ff02::1:2%${ifname}`);
      };
      sock.on('message', onMessage);
      const timer = setInterval(send, 1000);
      send();
    });
    process.stdout.write(`${iaid} ${address ?? 'none'}\n`);
  }
} finally {
  sock.close();
}
