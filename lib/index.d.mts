// Types of the ESM entry (lib/index.mjs): the same named exports as the CommonJS entry, plus the
// whole API as the default export. A separate file because TypeScript decides from the extension
// whether a declaration describes an ES module or a CommonJS one.
import parklock from './index.js';

export * from './index.js';
export default parklock;
