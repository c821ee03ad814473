'use strict';
// Names the prebuilt binaries this process may load: prebuilds/<platform>-<arch>[-<libc>]/. Linux
// needs the C library in the name because a binary linked against glibc does not load on musl
// (Alpine) and the other way round.
const fs = require('node:fs');

// Which C library the running Node uses on Linux: 'glibc', 'musl', or null if that cannot be told.
// Read from the program interpreter that the node executable names (its PT_INTERP, near the start
// of the file): one small read, where asking Node (process.report.getReport()) costs ~15 ms in
// every thread that loads parklock. A node linked statically, or one not found, falls back to
// Node's report.
function linuxLibc(execPath = process.execPath, report = () => process.report?.getReport?.()) {
  try {
    const fd = fs.openSync(execPath, 'r');
    try {
      const head = Buffer.alloc(4096);
      const read = fs.readSync(fd, head, 0, head.length, 0);
      const text = head.subarray(0, read).toString('latin1');
      if (/\/ld-musl-[\w-]+\.so\.1\0/.test(text)) return 'musl';
      if (/\/ld-linux[\w.-]*\.so\.\d\0/.test(text)) return 'glibc';
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // Not readable: Node's report decides.
  }
  const header = report()?.header;
  if (header === undefined) return null;
  return header.glibcVersionRuntime ? 'glibc' : 'musl';
}

// The candidate tags in the order to try them. On Linux the detected libc's; both (glibc first)
// when it could not be detected, since a binary for the other libc then fails to load cleanly.
function prebuildTags({ platform = process.platform, arch = process.arch, libc } = {}) {
  const base = `${platform}-${arch}`;
  if (platform !== 'linux') return [base];
  const detected = libc === undefined ? linuxLibc() : libc;
  return detected ? [`${base}-${detected}`] : [`${base}-glibc`, `${base}-musl`];
}

// The one tag this process should have: for the prebuild script and for error messages.
function prebuildTag(host = {}) {
  const tags = prebuildTags(host);
  return tags.length === 1 ? tags[0] : `${tags[0].replace(/-glibc$/, '')}-(unknown libc)`;
}

module.exports = { prebuildTags, prebuildTag, linuxLibc };
