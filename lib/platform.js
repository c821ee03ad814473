'use strict';
// Names the prebuilt binaries this process may load: prebuilds/<platform>-<arch>[-<libc>]/. Linux
// needs the C library in the name because a binary linked against glibc does not load on musl
// (Alpine) and the other way round.

// Linux candidates in the order to try them. Asking Node which libc it runs on
// (process.report.getReport()) costs ~15 ms in every thread that loads parklock, so the loader
// tries glibc first and falls back to musl, where the glibc binary simply fails to load.
function prebuildTags(platform = process.platform, arch = process.arch) {
  const base = `${platform}-${arch}`;
  return platform === 'linux' ? [`${base}-glibc`, `${base}-musl`] : [base];
}

// The one tag this process should have: for the prebuild script and for error messages.
function prebuildTag() {
  const tags = prebuildTags();
  if (tags.length === 1) return tags[0];
  const header = process.report?.getReport?.().header;
  return header?.glibcVersionRuntime ? tags[0] : tags[1];
}

module.exports = { prebuildTags, prebuildTag };
