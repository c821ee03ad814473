'use strict';
// Entry point of every Node child of the cross-process benchmark, forked by processes.js with
// its spec as argv[2]; spec.mode names what it does. It ends by sending { type: 'done', ... } or
// { type: 'failed', reason } and exiting.
const { count } = require('./count');
const { pingPong } = require('./ping_pong');
const { death, holder } = require('./owner_death');
const { holdWords, idleWatch } = require('./watching');
const { wakeUp } = require('./wake_up');

const MODES = { count, pingpong: pingPong, death, holder, holdwords: holdWords, idlewatch: idleWatch, wakeup: wakeUp };

const spec = JSON.parse(process.argv[2]);
// An orphan would hold its lock, or keep contending, for nobody: a child whose parent is gone
// ends too. A synchronous loop hears this only once it yields, so those loops also check for
// themselves (protocol.js orphaned()); the parent SIGKILLs its children when it ends anyway.
process.on('disconnect', () => process.exit(1));
const report = (message, code) => process.send(message, () => process.exit(code));
Promise.resolve()
  .then(() => MODES[spec.mode](spec))
  .then(
    (result) => report({ type: 'done', ...result }, 0),
    (error) => report({ type: 'failed', reason: error.code ? `${error.code}: ${error.message}` : error.message }, 1),
  );
