'use strict';
// Cancels the statement a session is running, the way libpq's PQcancel does: a CancelRequest
// (protocol message 80877102 with the session's backend pid and secret key) on a connection of its
// own. It needs no free connection of the pool, which may have none while every session waits for
// a lock, and no authentication. Best effort: a cancel that arrives after the statement finished
// cancels nothing, which the caller finds out from the statement's own outcome.
const net = require('node:net');

const CANCEL_REQUEST_CODE = 80877102;

function cancelStatement(client) {
  const { processID, secretKey, host, port } = client;
  if (typeof processID !== 'number' || typeof secretKey !== 'number') return;
  const packet = Buffer.alloc(16);
  packet.writeInt32BE(16, 0);
  packet.writeInt32BE(CANCEL_REQUEST_CODE, 4);
  packet.writeInt32BE(processID, 8);
  packet.writeInt32BE(secretKey, 12);
  const options = typeof host === 'string' && host.startsWith('/') ? { path: `${host}/.s.PGSQL.${port}` } : { host, port };
  const socket = net.connect(options, () => socket.end(packet));
  socket.on('error', () => {});
  socket.setTimeout(10_000, () => socket.destroy());
}

module.exports = { cancelStatement };
