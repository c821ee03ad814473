'use strict';
// Every platform parklock ships a prebuilt binary for, and how zig (scripts/toolchain.js) targets
// it. The tag is the directory under prebuilds/ that lib/platform.js names at run time.
//
// Minimum versions: glibc 2.28, what the official Node 18+ builds themselves need; macOS 11.0, the
// oldest that zig 0.11 has the SDK headers for (Node 18 and 20 still run on macOS 10.15 x64, where
// a source build is the way); musl has no version to pin.
const targets = [
  { tag: 'linux-x64-glibc', zig: 'x86_64-linux-gnu.2.28', os: 'linux' },
  { tag: 'linux-arm64-glibc', zig: 'aarch64-linux-gnu.2.28', os: 'linux' },
  { tag: 'linux-x64-musl', zig: 'x86_64-linux-musl', os: 'linux' },
  { tag: 'linux-arm64-musl', zig: 'aarch64-linux-musl', os: 'linux' },
  { tag: 'darwin-x64', zig: 'x86_64-macos.11.0', os: 'darwin' },
  { tag: 'darwin-arm64', zig: 'aarch64-macos.11.0', os: 'darwin' },
  { tag: 'win32-x64', zig: 'x86_64-windows-gnu', os: 'win32', machine: 'i386:x86-64' },
  { tag: 'win32-arm64', zig: 'aarch64-windows-gnu', os: 'win32', machine: 'arm64' },
];

module.exports = { targets };
