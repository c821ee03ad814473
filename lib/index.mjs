// The ESM entry: every named export of the CommonJS entry (Node reads their names from its
// module.exports literal), plus the whole API as the default export.
import parklock from './index.js';

export * from './index.js';
export default parklock;
